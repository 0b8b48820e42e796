// The native half of the `systolic` Python package (docs/python.md). The pure-Python half,
// sim/python/systolic/*.py, wraps these in friendlier classes (pandas frames, sweeps).
//
// Every run builds the chip in a fresh SystemC context (sim/simulate/simulate.hpp) and goes through the
// pipeline `systolic run` uses (sim/run/pipeline.hpp), so one process can
// run any number of times. SystemC keeps its current context in globals, so runs in one
// process are serialised by a mutex; the GIL is released meanwhile, and other Python threads
// keep running. Parallel runs need processes (the sweep's pool, a Dask cluster).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "models/common/error.hpp"
#include "models/isa/program.hpp"
#include "sim/compile/compile.hpp"
#include "sim/config/config.hpp"
#include "sim/packing/bin_packer.hpp"
#include "sim/python/bindings.hpp"
#include "sim/report/report.hpp"
#include "sim/run/pipeline.hpp"
#include "sim/serving/compare.hpp"
#include "sim/serving/pack_files.hpp"
#include "sim/serving/pack_report.hpp"
#include "sim/serving/replay.hpp"
#include "sim/serving/router.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/simulate/simulate.hpp"
#include "sim/trace/trace.hpp"
#include "sim/workload/transformer/shard.hpp"
#include "sim/workload/workload.hpp"

namespace systolic::python {

std::mutex& sim_mutex() {
  static std::mutex m;
  return m;
}

namespace {

// JSON -> Python objects through the json module, so a dict is exactly what json.load gives
// for the same text (the CLI's report.json).
py::object to_python(const json& j) {
  // Leaked on purpose: a static py::object would be released after the interpreter is gone.
  static const py::object* loads = new py::object(py::module_::import("json").attr("loads"));
  return (*loads)(j.dump());
}

// One override value as the text `--set key=value` would carry (YAML scalar syntax).
std::string scalar_text(const py::handle& value, const std::string& key) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>() ? "true" : "false";
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::float_>(value)) return py::repr(value).cast<std::string>();
  if (py::isinstance<py::int_>(value) || py::hasattr(value, "__index__"))
    return py::str(py::int_(py::reinterpret_borrow<py::object>(value))).cast<std::string>();
  if (py::hasattr(value, "__float__"))  // numpy floats and the like
    return py::repr(py::float_(py::reinterpret_borrow<py::object>(value))).cast<std::string>();
  throw py::type_error("override '" + key + "': expected a bool, number or string, got " +
                       py::str(py::type::of(value).attr("__name__")).cast<std::string>());
}

void flatten_overrides(const py::dict& d, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& item : d) {
    if (!py::isinstance<py::str>(item.first))
      throw py::type_error("override keys must be strings like 'mxu.rows'");
    const std::string key = prefix + item.first.cast<std::string>();
    if (py::isinstance<py::dict>(item.second))
      flatten_overrides(item.second.cast<py::dict>(), key + ".", out);
    else
      out.push_back(key + "=" + scalar_text(item.second, key));
  }
}

// Accepts {"mxu.rows": 64}, {"mxu": {"rows": 64}}, ["mxu.rows=64"] or None.
std::vector<std::string> override_list(const py::object& overrides) {
  std::vector<std::string> out;
  if (overrides.is_none()) return out;
  if (py::isinstance<py::dict>(overrides)) {
    flatten_overrides(overrides.cast<py::dict>(), "", out);
    return out;
  }
  if (py::isinstance<py::str>(overrides))
    throw py::type_error("overrides: expected a dict or a list of 'key=value' strings, got a string");
  for (const auto& item : overrides) {
    if (!py::isinstance<py::str>(item))
      throw py::type_error("overrides: list items must be 'key=value' strings");
    out.push_back(item.cast<std::string>());
  }
  return out;
}

}  // namespace

ConfigHandle load(const std::string& path, const py::object& overrides) {
  ConfigHandle c;
  c.path = path;
  c.overrides = override_list(overrides);
  c.config = load_config(path, c.overrides);
  return c;
}

namespace {

ConfigHandle with_overrides(const ConfigHandle& base, const py::object& overrides) {
  ConfigHandle c = base;
  const auto more = override_list(overrides);
  apply_overrides(c.config, more);
  c.overrides.insert(c.overrides.end(), more.begin(), more.end());
  return c;
}

}  // namespace

WorkloadOptions model_options(const std::optional<std::string>& bucket, const std::string& phase,
                              const std::optional<std::string>& weight_dtype,
                              const std::optional<std::string>& activation_dtype,
                              const std::optional<std::string>& kv_dtype) {
  WorkloadOptions options{bucket.value_or(""), phase};
  options.weight_dtype = weight_dtype.value_or("");
  options.activation_dtype = activation_dtype.value_or("");
  options.kv_dtype = kv_dtype.value_or("");
  return options;
}

namespace {

// A summary; the full program is its compiled trace (ProgramHandle.to_trace()).
json program_to_json(const Program& p) {
  json layers = json::array();
  for (const auto& l : p.layers)
    layers.push_back({{"name", l.name}, {"m", l.m}, {"k", l.k}, {"n", l.n},
                      {"dtype", kDTypeNames.name(l.dtype)}, {"repeat", l.repeat},
                      {"useful_macs", l.useful_macs}, {"source", l.source}});
  json streams = json::array();
  for (const auto& s : p.streams)
    streams.push_back({{"engine", engine_name(s.engine.kind, s.engine.index)},
                       {"instructions", s.instructions.size()}});
  return {{"layers", std::move(layers)},
          {"buffers", p.buffers.size()},
          {"semaphores", p.semaphores.size()},
          {"streams", std::move(streams)}};
}

// Config: a resolved chip config, picklable (its path and overrides).
void bind_config(py::module_& m) {
  py::class_<ConfigHandle>(m, "Config", "A resolved, validated chip configuration.")
      .def_property_readonly("path", [](const ConfigHandle& c) { return c.path; },
                             "The YAML file it was loaded from.")
      .def_property_readonly("overrides", [](const ConfigHandle& c) { return c.overrides; },
                             "Every override applied, as 'key=value' strings, in order.")
      .def_property_readonly("name", [](const ConfigHandle& c) { return c.config.name; })
      .def("to_dict", [](const ConfigHandle& c) { return to_python(config_to_json(c.config)); },
           "Every config key with its resolved value, nested by the dots in its name "
           "(the `config` section of report.json).")
      .def("with_overrides", &with_overrides, py::arg("overrides"),
           "A copy with more overrides applied: {'mxu.rows': 64} or ['mxu.rows=64'].")
      .def("__eq__", [](const ConfigHandle& a, const ConfigHandle& b) {
        return config_to_json(a.config) == config_to_json(b.config);
      })
      .def("__repr__", [](const ConfigHandle& c) {
        std::string s = "<systolic.Config " + c.config.name + " from '" + c.path + "'";
        for (const auto& o : c.overrides) s += " " + o;
        return s + ">";
      })
      .def(py::pickle([](const ConfigHandle& c) { return py::make_tuple(c.path, c.overrides); },
                      [](const py::tuple& t) {
                        ConfigHandle c;
                        c.path = t[0].cast<std::string>();
                        c.overrides = t[1].cast<std::vector<std::string>>();
                        c.config = load_config(c.path, c.overrides);
                        return c;
                      }));

}

// Result: a report, as dict, JSON, summary or file.
void bind_result(py::module_& m) {
  py::class_<ResultHandle>(m, "Result", "The report of one run.")
      .def("to_dict", [](const ResultHandle& r) { return to_python(r.report); },
           "report.json as json.load gives it (schema: docs/report.md).")
      .def("to_json", [](const ResultHandle& r, int indent) { return r.report.dump(indent) + "\n"; },
           py::arg("indent") = 2, "The text of report.json, as the CLI writes it.")
      .def("summary", [](const ResultHandle& r) {
        if (r.report.contains("replays")) {  // from pack(): the per-bucket tables
          std::string out;
          for (const auto& rep : r.report["replays"]) out += format_replay(rep);
          return out;
        }
        return format_summary(r.report);
      },
           "The per-layer table and totals the CLI prints.")
      .def("write", [](const ResultHandle& r, const std::string& outdir) {
        std::string path = outdir + "/report.json";
        write_file_atomically(path, r.report.dump(2) + "\n");
        return path;
      }, py::arg("outdir"), "Writes OUTDIR/report.json like `systolic run -o OUTDIR`.")
      .def(py::pickle([](const ResultHandle& r) { return r.report.dump(); },
                      [](const std::string& s) { return ResultHandle{json::parse(s)}; }));

}

// Program: a compiled program and its trace.
void bind_program(py::module_& m) {
  py::class_<ProgramHandle>(m, "Program", "A compiled program: per-engine instruction streams.")
      .def("to_dict", [](const ProgramHandle& p) { return to_python(program_to_json(p.program)); },
           "Layers, and instructions per engine stream (the whole program: to_trace()).")
      .def("to_trace", [](const ProgramHandle& p) { return write_trace(p.program, p.config); },
           "The compiled-trace text, as `systolic compile` writes it (docs/trace-format.md).")
      .def("write", [](const ProgramHandle& p, const std::string& path) {
        write_file_atomically(path, write_trace(p.program, p.config));
        return path;
      }, py::arg("path"), "Writes the compiled trace to `path`; run it with run(config, trace=path).")
      .def_property_readonly("num_instructions", [](const ProgramHandle& p) {
        size_t n = 0;
        for (const auto& s : p.program.streams) n += s.instructions.size();
        return n;
      });

}

// --timeline-window, --timeline-sample and --timeline-limit, checked as the CLI checks them.
TimelineOptions timeline_options(const std::optional<std::string>& timeline,
                                 const std::optional<std::string>& window, int64_t sample, double limit_mib) {
  TimelineOptions o;
  if ((window || sample != 1) && !timeline)
    throw InputError("run: timeline_window= and timeline_sample= need timeline=");
  if (window) o.window = parse_cycle_range(*window, "timeline_window");
  if (sample < 1 || static_cast<uint64_t>(sample) > kMaxTimelineSample)
    throw InputError(
        fmt::format("run: timeline_sample={}: expected an integer in [1, {}]", sample, kMaxTimelineSample));
  o.sample_every = static_cast<uint64_t>(sample);
  if (!(limit_mib > 0))
    throw InputError(fmt::format("run: timeline_limit_mib={}: expected a number > 0", limit_mib));
  o.limit_bytes = static_cast<uint64_t>(limit_mib * (1 << 20));
  return o;
}

// Runs the request with the GIL released; writes the timeline to `timeline_path` if given.
ResultHandle run_released(const RunRequest& request, const std::optional<std::string>& timeline_path) {
  py::gil_scoped_release release;
  // SystemC's current context is process-wide: one run at a time per process.
  std::lock_guard<std::mutex> lock(sim_mutex());
  RunResult result = run(request);
  if (timeline_path)
    write_timeline(*timeline_path, request.config, result.programs, result.result,
                   request.record.timeline_options);
  return ResultHandle{std::move(result.report)};
}

// run(): `systolic run` with every one of its options.
void bind_run(py::module_& m) {
  m.def(
      "run",
      [](const ConfigHandle& config, const std::optional<std::string>& workload,
         const std::optional<std::string>& trace, const std::optional<std::string>& bucket,
         const std::string& phase, int64_t tp, int64_t ep, const std::string& routing, double skew,
         uint64_t routing_seed, const std::optional<std::string>& weight_dtype,
         const std::optional<std::string>& activation_dtype, const std::optional<std::string>& kv_dtype,
         const std::optional<std::string>& timeline, const std::optional<std::string>& vcd,
         const std::optional<std::string>& mesh, int64_t micro_batches, bool overlap, bool every_chip,
         const std::optional<std::string>& timeline_window, int64_t timeline_sample,
         double timeline_limit_mib) {
        if (workload.has_value() == trace.has_value())
          throw InputError("run: give a workload (workload=) or a compiled trace (trace=)");
        RunRequest request;
        request.config = config.config;
        request.source = {workload.value_or(""), trace.value_or(""), {}};
        request.source.shape = model_options(bucket, phase, weight_dtype, activation_dtype, kv_dtype);
        request.source.shape.tp = tp;
        request.source.shape.ep = ep;
        request.source.shape.routing = routing;
        request.source.shape.skew = skew;
        request.source.shape.routing_seed = routing_seed;
        request.source.shape.mesh = mesh.value_or("");
        request.source.shape.micro_batches = micro_batches;
        request.source.shape.overlap = overlap;
        request.record.timeline = timeline.has_value();
        request.record.timeline_path = timeline.value_or("");
        request.record.vcd = vcd.value_or("");
        request.record.timeline_options =
            timeline_options(timeline, timeline_window, timeline_sample, timeline_limit_mib);
        request.every_chip = every_chip;
        return run_released(request, timeline);
      },
      py::arg("config"), py::arg("workload") = py::none(), py::arg("trace") = py::none(),
      py::arg("bucket") = py::none(), py::arg("phase") = "prefill", py::arg("tp") = 1, py::arg("ep") = 1,
      py::arg("routing") = "uniform", py::arg("skew") = 1.0, py::arg("routing_seed") = 1,
      py::arg("weight_dtype") = py::none(), py::arg("activation_dtype") = py::none(),
      py::arg("kv_dtype") = py::none(), py::arg("timeline") = py::none(), py::arg("vcd") = py::none(),
      py::arg("mesh") = py::none(), py::arg("micro_batches") = 1, py::arg("overlap") = true,
      py::arg("every_chip") = false, py::arg("timeline_window") = py::none(), py::arg("timeline_sample") = 1,
      py::arg("timeline_limit_mib") = 1024.0,
      "Simulates a workload (or a compiled trace) on a chip, or on every chip of a multi-chip config "
      "(ici.topology; a transformer sharded with tp= / ep= or a parallelism mesh= such as 'dp=4,tp=8' "
      "with micro_batches= for a pipeline, MoE routing with routing= / skew= / routing_seed=, "
      "overlap=False to keep every collective whole), as `systolic run` does with the same options; "
      "timeline= and vcd= write those files (timeline_window=, timeline_sample=, timeline_limit_mib= as "
      "--timeline-window, --timeline-sample, --timeline-limit); every_chip=True simulates every chip, not "
      "one per class of "
      "chips that evolve alike. The GIL is released meanwhile. Raises InputError on bad input, with the "
      "message the CLI prints.");
}

}  // namespace
}  // namespace systolic::python

PYBIND11_MODULE(_systolic, m) {
  using namespace systolic;
  using namespace systolic::python;
  // SystemC prints a banner on stdout when its first context is made; the CLI disables it too.
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);

  m.doc() = "Native core of the systolic simulator (use the `systolic` package).";
  m.attr("__version__") = SYSTOLIC_VERSION;
  m.attr("REPORT_SCHEMA_VERSION") = kReportSchemaVersion;

  // The message is the one the CLI prints after "systolic: error: ".
  auto input_error = py::register_exception<InputError>(m, "InputError", PyExc_ValueError);
  input_error.attr("__module__") = "systolic";
  input_error.doc() = "Bad input (config, workload, override): the message the CLI prints.";

  bind_config(m);
  bind_result(m);
  bind_program(m);
  bind_run(m);
  bind_commands(m);
}
