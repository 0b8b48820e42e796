// systolic pack: replay a request log through bucket sets on a chip (docs/replay.md) and serve
// it through a scheduler (docs/serving.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <memory>
#include <sstream>

#include "models/common/error.hpp"
#include "sim/cli/commands.hpp"
#include "sim/config/config.hpp"
#include "sim/packing/bin_packer.hpp"
#include "sim/packing/lane_view.hpp"
#include "sim/report/report.hpp"
#include "sim/serving/compare.hpp"
#include "sim/serving/pack_report.hpp"
#include "sim/serving/replay.hpp"
#include "sim/serving/requests_csv.hpp"
#include "sim/serving/router.hpp"
#include "sim/serving/scheduler.hpp"

namespace systolic::cli {
namespace {
struct PackCliOptions {
  std::string config = default_config_path();
  std::vector<std::string> overrides;
  PackRequest request;
  std::string outdir = "out";
  std::string timeline;
  std::string lanes;       // lanes.json of the first bucket set
  std::string lanes_html;  // the same as a page
  bool quiet = false;
};

// requests.csv for the first bucket set, requests-<set>.csv for the others.
std::string requests_csv_name(size_t set, const std::string& name) {
  return set == 0 ? "requests.csv" : fmt::format("requests-{}.csv", name);
}

using Files = std::vector<std::pair<std::string, std::string>>;

// `path` with "-<suffix>" before its extension: timeline.json -> timeline-static.json.
std::string with_suffix(const std::string& path, const std::string& suffix) {
  std::filesystem::path p(path);
  return p.replace_filename(p.stem().string() + "-" + suffix + p.extension().string()).string();
}

// One variant's files: report.json and the requests CSVs in `dir`, its timeline.
void add_outputs(const PackOutput& out, const std::filesystem::path& dir, const std::string& timeline,
                 Files& files) {
  files.emplace_back((dir / "report.json").string(), out.report.dump(2) + "\n");
  for (size_t i = 0; i < out.serving.size(); ++i) {
    std::ostringstream csv;
    serving::write_requests_csv(csv, out.serving[i]);
    const auto name = out.report["replays"][i]["bucket_set"].get<std::string>();
    files.emplace_back((dir / requests_csv_name(i, name)).string(), csv.str());
  }
  if (!timeline.empty()) files.emplace_back(timeline, out.timeline.dump() + "\n");
}

// Everything is formatted before the first file is written: an error leaves no partial output.
// One scheduler: its files in the output folder; several: each in <outdir>/<scheduler>/ (its
// timeline as <timeline>-<scheduler>.json), plus comparison.csv. The lane view does not depend
// on the scheduler: written once.
Files output_files(const PackCliOptions& o, const std::vector<PackOutput>& variants) {
  const std::filesystem::path dir(o.outdir);
  Files files;
  if (variants.size() == 1) {
    add_outputs(variants[0], dir, o.timeline, files);
  } else {
    for (const PackOutput& v : variants) {
      const auto scheduler = v.report["policy"]["scheduler"].get<std::string>();
      add_outputs(v, dir / scheduler, o.timeline.empty() ? "" : with_suffix(o.timeline, scheduler), files);
    }
    files.emplace_back((dir / "comparison.csv").string(), comparison_csv(variants));
  }
  if (!o.lanes.empty()) files.emplace_back(o.lanes, variants[0].lanes.dump() + "\n");
  if (!o.lanes_html.empty()) files.emplace_back(o.lanes_html, packing::lanes_html(variants[0].lanes));
  return files;
}

void print_variants(const PackCliOptions& o, const ChipConfig& config,
                    const std::vector<PackOutput>& variants, const Files& files) {
  const PackRequest& r = o.request;
  fmt::print("{} on {} | {} requests from {} | policy {}, window {} ms, overflow {}, scheduler {}\n", r.model,
             config.name, variants[0].report["requests"]["count"].get<size_t>(), r.requests, r.packer,
             r.window_ms, r.overflow, r.scheduler);
  fmt::print("{}", memory_timing_line(variants[0].report["config"]));
  if (variants.size() == 1) {
    for (const auto& rep : variants[0].report["replays"]) fmt::print("\n{}", format_replay(rep));
    return;
  }
  fmt::print("\n{}", format_comparison(variants));
  std::vector<std::string> paths;
  for (const auto& f : files) paths.push_back(f.first);
  fmt::print("wrote: {}\n", fmt::join(paths, ", "));
}
}  // namespace

void add_serving_options(CLI::App* cmd, PackRequest& r) {
  cmd->add_option("--scheduler", r.scheduler,
                  serving::schedulers().choices(" | ") + "; default " + r.scheduler +
                      " (docs/serving.md); pack takes several, separated by commas, side by side");
  cmd->add_option(
      "--chunk-tokens", r.chunk_tokens,
      fmt::format("chunked: prompt tokens per step (default {}, as in Sarathi-Serve)", r.chunk_tokens));
  cmd->add_option("--slo-ttft", r.slo_ttft_s, "SLO on the time to first token, seconds (with --slo-tbt)");
  cmd->add_option("--slo-tbt", r.slo_tbt_s, "SLO on the mean time between tokens, seconds (with --slo-ttft)");
  cmd->add_option(
      "--router", r.router,
      serving::routers().choices(" | ") + ": which replica serves a request; default " + r.router);
  cmd->add_option("--rate-scale", r.rate_scale,
                  "Divide every arrival time by X (offer the log X times as fast)");
  cmd->add_option("--poisson", r.poisson_qps, "Poisson arrivals at QPS requests/s with the log's lengths");
  cmd->add_option("--poisson-requests", r.poisson_requests,
                  "With --poisson: how many requests to draw (default: as many as the log has)");
  cmd->add_option("--seed", r.seed, "Seed of --poisson (default 1)");
  cmd->add_option(
      "--tp", r.tp,
      "Chips per replica on a multi-chip config: 1 (default), its chip count, or any count whose slice "
      "tiles its dims (the model sharded over the slice, as run --tp)");
  cmd->add_option("--prefill-chips", r.prefill_chips, "disaggregated: chips of the prefill pool (default 1)");
  cmd->add_option("--decode-chips", r.decode_chips, "disaggregated: chips of the decode pool (default 1)");
}

Command add_pack_command(CLI::App& app) {
  auto o = std::make_shared<PackCliOptions>();
  PackRequest& r = o->request;
  auto* cmd = app.add_subcommand("pack", "Replay a request log through bucket shapes, packers and a serving scheduler");
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
  add_serving_options(cmd, r);
  cmd->add_option("--replicas", r.replicas,
                  "Replicas serving the log (default: the config's chips / --tp; copies of a single chip)");
  cmd->add_option("-o,--outdir", o->outdir, "Directory for report.json and requests.csv (default: out)");
  cmd->add_flag("-q,--quiet", o->quiet, "Do not print the tables");
  cmd->add_option("--timeline", o->timeline,
                  "Write the serving replay's timeline (Chrome trace-event JSON): each request's prefill and decode");
  cmd->add_option(
      "--lanes", o->lanes,
      "Write the lane view of the first bucket set (JSON): every prefill instance's lanes, requests and "
      "segment ids");
  cmd->add_option("--lanes-html", o->lanes_html, "Write the same lane view as a self-contained HTML page");
  return {cmd, [o]() {
    const ChipConfig config = load_config(o->config, o->overrides);
    const std::vector<std::string> schedulers = scheduler_list(o->request.scheduler);
    const bool timeline = !o->timeline.empty(), lanes = !o->lanes.empty() || !o->lanes_html.empty();
    const std::vector<PackOutput> variants =
        schedulers.size() == 1 ? std::vector<PackOutput>{pack_report(config, o->request, timeline, lanes)}
                               : pack_compare(config, o->request, schedulers, timeline, lanes);
    for (const auto& w : variants[0].warnings) fmt::print(stderr, "systolic: warning: {}\n", w);
    const Files files = output_files(*o, variants);
    for (const auto& [path, text] : files) write_file_atomically(path, text);
    if (!o->quiet) print_variants(*o, config, variants, files);
    return 0;
  }};
}

}  // namespace systolic::cli
