// SCALE-Sim v2 topology CSV (sim/workload/scalesim.cpp), convolution or GEMM form.
#include "sim/workload/detail.hpp"
#include "sim/workload/reader.hpp"

namespace systolic {
namespace {

class ScaleSimReader final : public WorkloadReader {
 public:
  std::vector<std::string> extensions() const override { return {".csv"}; }
  Workload read(const std::string& path, const WorkloadOptions& options) const override {
    if (!options.bucket.empty() || !options.weight_dtype.empty() || !options.activation_dtype.empty() ||
        !options.kv_dtype.empty())
      workload_detail::fail(path, 0, "--bucket and the --*-dtype options apply to transformer model files, not to a CSV");
    return workload_detail::load_scalesim_csv(path);
  }
};

}  // namespace

const Registration<WorkloadReader> registration{"scalesim", 30, "a SCALE-Sim topology (.csv)", ScaleSimReader{}};

}  // namespace systolic
