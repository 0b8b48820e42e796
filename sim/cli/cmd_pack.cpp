// systolic pack: replay a request log through bucket sets on a chip (docs/replay.md).
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "sim/cli/commands.hpp"
#include "sim/config.hpp"
#include "sim/error.hpp"
#include "sim/replay.hpp"
#include "sim/report.hpp"
#include "sim/suggest.hpp"

namespace systolic::cli {
namespace {
struct PackCliOptions {
  std::string config = default_config_path();
  std::vector<std::string> overrides;
  std::string model;
  std::string requests;
  std::vector<std::string> buckets;
  std::string policy = "first-fit-decreasing";
  double window_ms = 0;
  std::string overflow = "reject";
  bool compile_new_shapes = false;
  double compile_stall_s = 30;
  bool skip_bad_lines = false;
  std::string outdir = "out";
  bool quiet = false;
};

packing::Packer packer_of(const std::string& name) {
  const std::string full = name == "ffd" ? "first-fit-decreasing" : name == "ff" ? "first-fit"
                           : name == "bf" ? "best-fit" : name;
  if (auto p = packing::parse_packer(full)) return *p;
  throw InputError(fmt::format("--policy '{}': expected one of none, first-fit (ff), first-fit-decreasing "
                               "(ffd), best-fit (bf){}",
                               name, did_you_mean(name, packing::packer_names())));
}
}  // namespace

Command add_pack_command(CLI::App& app) {
  auto o = std::make_shared<PackCliOptions>();
  auto* cmd = app.add_subcommand("pack", "Replay a request log through bucket shapes and packers");
  cmd->add_option("-c,--config", o->config, "Chip config YAML (default: configs/tpu-v4i.yaml)");
  add_set_option(cmd, o->overrides);
  cmd->add_option("-m,--model", o->model, "Transformer model YAML (traces/models/)")->required();
  cmd->add_option("--requests", o->requests, "Request log CSV (Azure format or arrival_s,prompt,output)")
      ->required();
  cmd->add_option("--buckets", o->buckets, "Bucket-set YAML; repeat to compare sets side by side")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->required();
  cmd->add_option("--policy", o->policy, "none | first-fit | first-fit-decreasing (ffd) | best-fit");
  cmd->add_option("--window", o->window_ms, "Arrival window in ms within which requests are packed together");
  cmd->add_option("--overflow", o->overflow, "reject | split: requests longer than every bucket");
  cmd->add_flag("--compile-new-shapes", o->compile_new_shapes, "Compile a new shape for requests that fit badly");
  cmd->add_option("--compile-stall", o->compile_stall_s, "Seconds one compilation stalls dispatch (default 30)");
  cmd->add_flag("--skip-bad-lines", o->skip_bad_lines, "Count and skip malformed log lines");
  cmd->add_option("-o,--outdir", o->outdir, "Directory for report.json (default: out)");
  cmd->add_flag("-q,--quiet", o->quiet, "Do not print the tables");
  return {cmd, [o]() {
    // Everything is read and checked before anything is simulated or written.
    const ChipConfig config = load_config(o->config, o->overrides);
    const packing::RequestLog log = packing::load_request_log(o->requests, o->skip_bad_lines);
    std::vector<packing::BucketSet> sets;
    for (const auto& b : o->buckets) {
      sets.push_back(packing::load_bucket_set(b));
      packing::check_buckets_fit_array(sets.back(), config.mxu.rows, config.mxu.cols);
    }
    packing::PackOptions options;
    options.packer = packer_of(o->policy);
    options.window_ms = o->window_ms;
    const auto overflow = packing::parse_overflow(o->overflow);
    if (!overflow) throw InputError(fmt::format("--overflow '{}': expected reject or split", o->overflow));
    options.overflow = *overflow;
    options.compile_new_shapes = o->compile_new_shapes;
    options.compile_stall_s = o->compile_stall_s;
    options.compile_granule = packing::array_tile(config.mxu.rows, config.mxu.cols);
    try {
      packing::validate(options);
    } catch (const InputError& e) {
      throw InputError(std::string("pack options: ") + e.what());
    }
    for (const auto& w : log.warnings) fmt::print(stderr, "systolic: warning: {}\n", w);
    if (log.skipped_lines > 0)
      fmt::print(stderr, "systolic: warning: {}: skipped {} malformed line(s)\n", o->requests, log.skipped_lines);

    ShapeSimulator sim(config, o->model);
    nlohmann::ordered_json replays = nlohmann::ordered_json::array();
    for (const auto& set : sets) replays.push_back(replay(sim, log, set, options));

    nlohmann::ordered_json report;
    report["schema_version"] = kReportSchemaVersion;
    report["generator"] = fmt::format("systolic {}", SYSTOLIC_VERSION);
    report["config"] = config_to_json(config);
    report["model"] = o->model;
    report["requests"] = {{"path", o->requests}, {"count", log.requests.size()}, {"skipped_lines", log.skipped_lines}};
    report["policy"] = {{"packer", o->policy}, {"window_ms", o->window_ms}, {"overflow", o->overflow},
                        {"compile_new_shapes", o->compile_new_shapes}};
    // The first bucket set's results at the top level; every set (the first included) in
    // `replays`, for side-by-side comparison.
    for (const char* k : {"buckets", "totals", "varlen", "latency"}) report[k] = replays[0][k];
    report["replays"] = replays;
    report["shapes_simulated"] = sim.simulated();
    write_file_atomically((std::filesystem::path(o->outdir) / "report.json").string(), report.dump(2) + "\n");
    if (!o->quiet) {
      fmt::print("{} on {} | {} requests from {} | policy {}, window {} ms, overflow {}\n", o->model, config.name,
                 log.requests.size(), o->requests, o->policy, o->window_ms, o->overflow);
      for (const auto& r : replays) fmt::print("\n{}", format_replay(r));
    }
    return 0;
  }};
}

}  // namespace systolic::cli
