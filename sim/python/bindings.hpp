#pragma once
// What the files of the native module share (bindings.cpp: the module, its config, result,
// program and run bindings; bind_commands.cpp: load_config, compile, pack and the sweep's
// checks): the handles Python holds and the helpers both call.
#include <pybind11/pybind11.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/isa/program.hpp"
#include "sim/config/config.hpp"
#include "sim/workload/workload.hpp"

namespace py = pybind11;
using json = nlohmann::ordered_json;

namespace systolic::python {

// Config: a resolved chip config, picklable (its path and overrides).
struct ConfigHandle {
  ChipConfig config;
  std::string path;
  std::vector<std::string> overrides;  // every override applied since the file, in order
};

// Result: a report.
struct ResultHandle {
  json report;
};

// Program: a compiled program.
struct ProgramHandle {
  Program program;
  ChipConfig config;  // what it was compiled for (the trace header names the array)
};

// SystemC keeps its current context in globals, so runs in one process hold this lock (with
// the GIL released).
std::mutex& sim_mutex();

// Reads a chip config YAML and applies overrides ({"mxu.rows": 64}, {"mxu": {"rows": 64}},
// ["mxu.rows=64"] or None).
ConfigHandle load(const std::string& path, const py::object& overrides);

// How to instantiate a transformer model: shape and precision overrides (None: the file's).
WorkloadOptions model_options(const std::optional<std::string>& bucket, const std::string& phase,
                              const std::optional<std::string>& weight_dtype,
                              const std::optional<std::string>& activation_dtype,
                              const std::optional<std::string>& kv_dtype);

// load_config, compile, pack, check_pack_name, workload_names, result_from_json.
void bind_commands(py::module_& m);

}  // namespace systolic::python
