// The module's commands besides run() (sim/python/bindings.cpp binds the rest): load_config,
// compile and pack as the CLI commands do them, and the names a sweep spec is checked against.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/common/error.hpp"
#include "sim/compile/compile.hpp"
#include "sim/packing/bin_packer.hpp"
#include "sim/python/bindings.hpp"
#include "sim/serving/pack_files.hpp"
#include "sim/serving/replay.hpp"
#include "sim/serving/router.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/workload/transformer/shard.hpp"
#include "sim/workload/workload.hpp"

namespace systolic::python {
namespace {

// The serving flags of `systolic pack` (--scheduler ... --decode-chips) as pack()'s keywords:
// (key, the PackRequest field it sets), each key its field's name, as systolic/__init__.py passes them.
const auto kServingFields = std::make_tuple(
    std::pair{"scheduler", &PackRequest::scheduler}, std::pair{"chunk_tokens", &PackRequest::chunk_tokens},
    std::pair{"router", &PackRequest::router}, std::pair{"seed", &PackRequest::seed},
    std::pair{"tp", &PackRequest::tp}, std::pair{"slo_ttft_s", &PackRequest::slo_ttft_s},
    std::pair{"slo_tbt_s", &PackRequest::slo_tbt_s}, std::pair{"replicas", &PackRequest::replicas},
    std::pair{"rate_scale", &PackRequest::rate_scale}, std::pair{"poisson_qps", &PackRequest::poisson_qps},
    std::pair{"poisson_requests", &PackRequest::poisson_requests},
    std::pair{"prefill_chips", &PackRequest::prefill_chips},
    std::pair{"decode_chips", &PackRequest::decode_chips});

// o[key] into `field` when given and not None; an optional field takes the value itself.
template <class T>
void take(const py::dict& o, const char* key, T& field) {
  if (o.contains(key) && !o[key].is_none()) field = o[key].cast<T>();
}
template <class T>
void take(const py::dict& o, const char* key, std::optional<T>& field) {
  if (o.contains(key) && !o[key].is_none()) field = o[key].cast<T>();
}

// The serving flags from pack()'s `serving` dict: {key: value}, None for a flag not given.
// Every value is checked by prepare_serving, with the message the CLI prints.
void apply_serving_options(PackRequest& r, const py::dict& o) {
  std::apply([&](const auto&... f) { (take(o, f.first, r.*(f.second)), ...); }, kServingFields);
}

// pack(): `systolic pack`, with its files when given outdir=.
void bind_pack(py::module_& m) {
  m.def(
      "pack",
      [](const ConfigHandle& config, const std::string& model, const std::string& requests,
         const std::vector<std::string>& buckets, const std::string& packer, double window_ms,
         const std::string& overflow, bool compile_new_shapes, double compile_stall_s, bool skip_bad_lines,
         const py::dict& serving, const std::optional<std::string>& outdir, const std::string& timeline,
         const std::string& lanes, const std::string& lanes_html) {
        PackRequest r;
        r.model = model;
        r.requests = requests;
        r.bucket_files = buckets;
        r.packer = packer;
        r.window_ms = window_ms;
        r.overflow = overflow;
        r.compile_new_shapes = compile_new_shapes;
        r.compile_stall_s = compile_stall_s;
        r.skip_bad_lines = skip_bad_lines;
        apply_serving_options(r, serving);
        if (!outdir && !(timeline.empty() && lanes.empty() && lanes_html.empty()))
          throw InputError(
              "timeline=, lanes=, lanes_html=: expected with outdir= (pack writes them beside "
              "report.json, as `systolic pack -o OUTDIR` does)");
        const PackPaths paths{outdir.value_or(""), timeline, lanes, lanes_html};
        py::gil_scoped_release release;
        std::lock_guard<std::mutex> lock(sim_mutex());
        std::vector<PackOutput> variants = pack_variants(config.config, r, paths);
        // The CLI's files, formatted before the first is written (no partial output).
        if (outdir) write_pack_files(pack_files(variants, paths));
        std::vector<ResultHandle> out;
        for (PackOutput& v : variants) out.push_back(ResultHandle{std::move(v.report)});
        return out;
      },
      py::arg("config"), py::arg("model"), py::arg("requests"), py::arg("buckets"),
      py::arg("packer") = "first-fit-decreasing", py::arg("window_ms") = 0.0, py::arg("overflow") = "reject",
      py::arg("compile_new_shapes") = false, py::arg("compile_stall_s") = 30.0,
      py::arg("skip_bad_lines") = false, py::arg("serving") = py::dict(), py::arg("outdir") = py::none(),
      py::arg("timeline") = "", py::arg("lanes") = "", py::arg("lanes_html") = "",
      "Replays a request log through bucket sets, as `systolic pack` does: one Result per scheduler of "
      "serving['scheduler'] (names separated by commas, as --scheduler); with outdir= it writes the CLI's "
      "files (report.json, requests.csv, comparison.csv, timeline=, lanes=, lanes_html=).");
}

// The names a sweep spec is checked against before any point runs.
void bind_sweep_checks(py::module_& m) {
  // The sweep checks a spec's names before any point runs (systolic/serving_sweep.py).
  m.def(
      "check_pack_name",
      [](const std::string& kind, const std::string& name, const std::string& what) {
        if (kind == "scheduler") {
          serving::schedulers().get(name, what);
        } else if (kind == "router") {
          serving::routers().get(name, what);
        } else if (kind == "packer") {
          return packing::packer_name(name, what);
        } else if (kind == "overflow") {
          if (!packing::kOverflowNames.parse(name))
            throw InputError(what + " '" + name + "': expected one of " + packing::kOverflowNames.choices());
        } else {
          throw InputError("check_pack_name: kind '" + kind +
                           "': expected scheduler, router, packer or overflow");
        }
        return name;
      },
      py::arg("kind"), py::arg("name"), py::arg("what"),
      "The registered name of a scheduler, router, packer or overflow policy; InputError '<what> ...: "
      "expected one of ... (did you mean ...)' for an unknown one.");

  // The sweep checks a workload key's value against the names run() parses (systolic/sweep.py).
  m.def(
      "workload_names",
      [](const std::string& key) {
        if (key == "phase") return packing::kPhaseNames.names();
        if (key == "routing") return transformer::kRoutingNames.names();
        throw InputError("workload_names: key '" + key + "': expected phase or routing");
      },
      py::arg("key"), "The names a workload key takes, as run() parses them: phase, routing.");
}

}  // namespace

// load_config, compile, pack, result_from_json: what the CLI commands do besides run.
void bind_commands(py::module_& m) {
  m.def("load_config", &load, py::arg("path"), py::arg("overrides") = py::none(),
        "Reads a chip config YAML and applies overrides ({'mxu.rows': 64}, "
        "{'mxu': {'rows': 64}} or ['mxu.rows=64']). Raises InputError on bad input.");

  m.def(
      "compile",
      [](const ConfigHandle& config, const std::string& workload, const std::optional<std::string>& bucket,
         const std::string& phase, const std::optional<std::string>& weight_dtype,
         const std::optional<std::string>& activation_dtype, const std::optional<std::string>& kv_dtype) {
        ProgramHandle p;
        p.config = config.config;
        py::gil_scoped_release release;
        p.program = compile(
            config.config,
            load_workload(workload, model_options(bucket, phase, weight_dtype, activation_dtype, kv_dtype)));
        return p;
      },
      py::arg("config"), py::arg("workload"), py::arg("bucket") = py::none(), py::arg("phase") = "prefill",
      py::arg("weight_dtype") = py::none(), py::arg("activation_dtype") = py::none(),
      py::arg("kv_dtype") = py::none(),
      "Lowers a workload to a program for this chip, as `systolic compile` does (weight_dtype= etc. as "
      "--weight-dtype etc.).");

  bind_pack(m);
  bind_sweep_checks(m);

  m.def(
      "result_from_json", [](const std::string& text) { return ResultHandle{json::parse(text)}; },
      py::arg("text"), "A Result from report.json text (e.g. a saved report).");
}

}  // namespace systolic::python
