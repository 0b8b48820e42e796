// systolic pack: replay a request log through bucket sets on a chip (docs/replay.md) and serve
// it through a scheduler (docs/serving.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sched.h>

#include <algorithm>
#include <memory>

#include "models/common/error.hpp"
#include "sim/cli/commands.hpp"
#include "sim/config/config.hpp"
#include "sim/packing/bin_packer.hpp"
#include "sim/report/report.hpp"
#include "sim/serving/compare.hpp"
#include "sim/serving/pack_files.hpp"
#include "sim/serving/replay.hpp"
#include "sim/serving/router.hpp"
#include "sim/serving/scheduler.hpp"

namespace systolic::cli {
namespace {
struct PackCliOptions {
  std::string config = default_config_path();
  std::vector<std::string> overrides;
  PackRequest request;
  PackPaths paths;
  bool quiet = false;
};

using Files = std::vector<std::pair<std::string, std::string>>;

// Each process holds one shape's program at a time (Llama-3-8B prefill [2, 8192]: 1 GB), so the
// default stays at a few of them however many CPUs there are.
constexpr int kMaxDefaultJobs = 4;

// The CPUs this process may run on (its affinity: what taskset or a cpuset leaves it), at most
// kMaxDefaultJobs.
int default_jobs() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::clamp(CPU_COUNT(&set), 1, kMaxDefaultJobs);
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
  cmd->add_option(
      "--policy", r.packer,
      packing::packer_choices(" | ") + ": how prompts fill the lanes of a prefill step; default " + r.packer);
  cmd->add_option(
      "--window", r.window_ms,
      "Batching window in ms: a prefill step waits until its oldest request has waited this long");
  cmd->add_option("--overflow", r.overflow,
                  packing::kOverflowNames.choices(" | ") +
                      ": a context longer than the decode L is rejected or its "
                      "output truncated (split)");
  cmd->add_flag("--compile-new-shapes", r.compile_new_shapes,
                "Compile a new prefill shape for a prompt that fits the buckets badly or not at all");
  cmd->add_option("--compile-stall", r.compile_stall_s,
                  "Seconds the first step of a new shape waits (default 30)");
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
  // The CLI runs nothing else in its process, so it may fork workers (the Python module may not).
  // The output is the same bytes whatever N (docs/serving.md, "Simulating the shapes").
  r.jobs = default_jobs();
  cmd->add_option("-j,--jobs", r.jobs,
                  fmt::format("Processes simulating the bucket shapes: N - 1 workers simulate the shapes the "
                              "scheduler may run ahead of the replay; 1: each shape when the replay first "
                              "needs it (default: the CPUs this process may use, at most {}, here {})",
                              kMaxDefaultJobs, r.jobs))
      ->check(CLI::Range(1, 256));
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
  cmd->add_flag("--skip-bad-lines", r.skip_bad_lines, "Count and skip malformed log lines");
  add_serving_options(cmd, r);
  cmd->add_option("--replicas", r.replicas,
                  "Replicas serving the log (default: the config's chips / --tp; copies of a single chip)");
  cmd->add_option("-o,--outdir", o->paths.outdir,
                  "Directory for report.json and requests.csv (default: out)");
  cmd->add_flag("-q,--quiet", o->quiet, "Do not print the tables");
  cmd->add_option(
      "--timeline", o->paths.timeline,
      "Write the serving replay's timeline (Chrome trace-event JSON): each request's prefill and decode");
  cmd->add_option(
      "--lanes", o->paths.lanes,
      "Write the lane view of the first bucket set (JSON): every prefill instance's lanes, requests and "
      "segment ids");
  cmd->add_option("--lanes-html", o->paths.lanes_html,
                  "Write the same lane view as a self-contained HTML page");
  return {cmd, [o]() {
    const ChipConfig config = load_config(o->config, o->overrides);
    const std::vector<PackOutput> variants = pack_variants(config, o->request, o->paths);
    for (const auto& w : variants[0].warnings) fmt::print(stderr, "systolic: warning: {}\n", w);
    const Files files = pack_files(variants, o->paths);
    write_pack_files(files);
    if (!o->quiet) print_variants(*o, config, variants, files);
    return 0;
  }};
}

}  // namespace systolic::cli
