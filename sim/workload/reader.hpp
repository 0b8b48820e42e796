#pragma once
// Workload readers (docs/workloads.md): each file format is one reader in this folder that
// registers itself and says which files it takes. load_workload asks the readers in rank
// order and the first that accepts a file reads it.
#include <string>
#include <vector>

#include "models/common/registry.hpp"
#include "models/ici/topology.hpp"
#include "sim/workload/workload.hpp"

namespace systolic {

class WorkloadReader {
 public:
  virtual ~WorkloadReader() = default;
  // File extensions it reads, lower case with the dot (".yaml").
  virtual std::vector<std::string> extensions() const = 0;
  // Whether it takes this existing file with one of its extensions (a reader sharing an
  // extension with another looks inside; the higher-ranked one is asked first).
  virtual bool accepts(const std::string& path) const { return true; }
  // Throws InputError naming the file (and line) for anything it cannot read, or an option
  // that does not apply to its format.
  virtual Workload read(const std::string& path, const WorkloadOptions& options) const = 0;
  // One workload per chip of `system`: by default this one on every chip (sharding options do
  // not apply).
  virtual std::vector<Workload> read_system(const std::string& path, const WorkloadOptions& options,
                                            const Topology& system) const;
};

using WorkloadReaderRegistry = Registry<WorkloadReader>;

// "a transformer model (.yaml with d_model), a GEMM list (.yaml, .yml) or a SCALE-Sim
// topology (.csv)": what the registered readers read, for help and error messages.
std::string workload_formats();

}  // namespace systolic
