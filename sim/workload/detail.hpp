#pragma once
// Internals shared by the workload readers (workload.cpp asks the readers registered in
// sim/workload/readers/, which call these). Not part of the public API.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "models/ici/topology.hpp"
#include "sim/common/input_text.hpp"
#include "sim/workload/workload.hpp"

namespace systolic::workload_detail {

using systolic::fail;  // sim/common/input_text.hpp

// "path:line", the Gemm::source of an entry.
std::string source_of(const std::string& path, int64_t line);


// a * b, or nullopt when it does not fit in int64 (operands are positive).
std::optional<int64_t> checked_mul(int64_t a, int64_t b);

// The file's name without directories and extension.
std::string file_stem(const std::string& path);

Workload load_gemm_yaml(const std::string& path);
// A YAML file whose top level has `d_model`: a transformer model (workload_model.cpp).
bool is_model_file(const std::string& path);
Workload load_model_workload(const std::string& path, const WorkloadOptions& options);
std::vector<Workload> load_model_workloads(const std::string& path, const WorkloadOptions& options,
                                           const Topology& system);
Workload load_scalesim_csv(const std::string& path);

}  // namespace systolic::workload_detail
