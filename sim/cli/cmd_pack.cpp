// systolic pack: replay a request log through bucket sets on a chip (docs/replay.md).
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "models/common/error.hpp"
#include "sim/cli/commands.hpp"
#include "sim/config/config.hpp"
#include "sim/packing/bin_packer.hpp"
#include "sim/report/report.hpp"
#include "sim/serving/replay.hpp"

namespace systolic::cli {
namespace {
struct PackCliOptions {
  std::string config = default_config_path();
  std::vector<std::string> overrides;
  PackRequest request;
  std::string outdir = "out";
  std::string timeline;
  bool quiet = false;
};
}  // namespace

Command add_pack_command(CLI::App& app) {
  auto o = std::make_shared<PackCliOptions>();
  PackRequest& r = o->request;
  auto* cmd = app.add_subcommand("pack", "Replay a request log through bucket shapes and packers");
  add_config_options(cmd, o->config, o->overrides);
  cmd->add_option("-m,--model", r.model, "Transformer model YAML (traces/models/)")->required();
  cmd->add_option("--requests", r.requests, "Request log CSV (Azure format or arrival_s,prompt,output)")
      ->required();
  cmd->add_option("--buckets", r.bucket_files, "Bucket-set YAML; repeat to compare sets side by side")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->required();
  cmd->add_option("--policy", r.packer, packing::packer_choices(" | ") + "; default " + r.packer);
  cmd->add_option("--window", r.window_ms, "Arrival window in ms within which requests are packed together");
  cmd->add_option("--overflow", r.overflow, packing::kOverflowNames.choices(" | ") + ": requests longer than every bucket");
  cmd->add_flag("--compile-new-shapes", r.compile_new_shapes, "Compile a new shape for requests that fit badly");
  cmd->add_option("--compile-stall", r.compile_stall_s, "Seconds one compilation stalls dispatch (default 30)");
  cmd->add_flag("--skip-bad-lines", r.skip_bad_lines, "Count and skip malformed log lines");
  cmd->add_option("-o,--outdir", o->outdir, "Directory for report.json (default: out)");
  cmd->add_flag("-q,--quiet", o->quiet, "Do not print the tables");
  cmd->add_option("--timeline", o->timeline,
                  "Write the replay's timeline (Chrome trace-event JSON): prefill instances as the chip serves them");
  return {cmd, [o]() {
    const ChipConfig config = load_config(o->config, o->overrides);
    std::vector<std::string> warnings;
    nlohmann::ordered_json timeline;
    const auto report = pack_report(config, o->request, &warnings, o->timeline.empty() ? nullptr : &timeline);
    for (const auto& w : warnings) fmt::print(stderr, "systolic: warning: {}\n", w);
    write_file_atomically((std::filesystem::path(o->outdir) / "report.json").string(), report.dump(2) + "\n");
    if (!o->timeline.empty()) write_file_atomically(o->timeline, timeline.dump() + "\n");
    if (!o->quiet) {
      const PackRequest& r = o->request;
      fmt::print("{} on {} | {} requests from {} | policy {}, window {} ms, overflow {}\n", r.model, config.name,
                 report["requests"]["count"].get<size_t>(), r.requests, r.packer, r.window_ms, r.overflow);
      fmt::print("{}", memory_timing_line(report["config"]));
      for (const auto& rep : report["replays"]) fmt::print("\n{}", format_replay(rep));
    }
    return 0;
  }};
}

}  // namespace systolic::cli
