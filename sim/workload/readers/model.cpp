// Transformer model YAML (a top-level `d_model`; sim/workload/transformer/model_reader.cpp): lowered for the
// --bucket shape and --phase, sharded over the chips with --tp / --ep or a --mesh.
#include "sim/workload/detail.hpp"
#include "sim/workload/reader.hpp"

namespace systolic {
namespace {

class ModelReader final : public WorkloadReader {
 public:
  std::vector<std::string> extensions() const override { return {".yaml", ".yml"}; }
  bool accepts(const std::string& path) const override { return workload_detail::is_model_file(path); }
  Workload read(const std::string& path, const WorkloadOptions& options) const override {
    return workload_detail::load_model_workload(path, options);
  }
  std::vector<Workload> read_system(const std::string& path, const WorkloadOptions& options,
                                    const Topology& system) const override {
    return workload_detail::load_model_workloads(path, options, system);
  }
};

}  // namespace

const Registration<WorkloadReader> registration{"model", 10, "a transformer model (.yaml with d_model)", ModelReader{}};

}  // namespace systolic
