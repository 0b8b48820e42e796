// GEMM list YAML (`gemms: [...]`, sim/workload/gemm_yaml.cpp): every entry's types are its
// own, so the model-only options are refused rather than ignored.
#include "sim/workload/detail.hpp"
#include "sim/workload/reader.hpp"

namespace systolic {
namespace {

class GemmYamlReader final : public WorkloadReader {
 public:
  std::vector<std::string> extensions() const override { return {".yaml", ".yml"}; }
  Workload read(const std::string& path, const WorkloadOptions& options) const override {
    using workload_detail::fail;
    if (!options.weight_dtype.empty() || !options.activation_dtype.empty() || !options.kv_dtype.empty())
      fail(path, 0, "--weight-dtype, --activation-dtype and --kv-dtype apply to transformer model files; a GEMM "
                    "list gives a_dtype and b_dtype per entry (docs/workloads.md)");
    if (!options.bucket.empty())
      fail(path, 0, "--bucket applies to transformer model files (with d_model), not to a GEMM list");
    return workload_detail::load_gemm_yaml(path);
  }
};

}  // namespace

const Registration<WorkloadReader> registration{"gemm-list", 20, "a GEMM list (.yaml, .yml)", GemmYamlReader{}};

}  // namespace systolic
