// systolic viz: the PE-grid page of a small array (docs/watch-it-compute.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include <memory>

#include "models/common/error.hpp"
#include "sim/cli/commands.hpp"
#include "sim/config/config.hpp"
#include "sim/report/report.hpp"
#include "sim/viz/grid_view.hpp"
#include "sim/viz/html_writer.hpp"
#include "sim/viz/pad_tokens.hpp"
#include "sim/workload/transformer/lower.hpp"

namespace systolic::cli {
namespace {
struct VizOptions {
  std::string config = default_config_path();
  ProgramSource source;
  std::vector<std::string> overrides;
  std::string layer;
  std::string cycles;
  int mxu = 0;
  std::string output;
  // Pad tokens: the same number at the end of every lane, or a packed instance of a log.
  int64_t pad_tokens = 0;
  std::string requests, buckets, policy = "first-fit-decreasing";
  int64_t instance = 0;
  double window_ms = 0;
};

// uniform_pad: --pad-tokens was given.
int run_viz(const VizOptions& o, bool uniform_pad) {
  VizRequest request;
  request.layer = o.layer;
  request.mxu = o.mxu;
  if (!o.cycles.empty()) parse_cycle_range(o.cycles, request);
  // The page always shows the exact model (capture_grid_view switches to it).
  const ChipConfig config = load_config(o.config, o.overrides);
  ProgramSource source = o.source;
  if (!o.requests.empty()) {
    request.pad_tokens = packed_instance(o.requests, o.buckets, o.instance, o.policy, o.window_ms);
    const auto& b = request.pad_tokens->bucket;
    const std::string shape = fmt::format("{}x{}", b.batch, b.length);
    if (!source.shape.bucket.empty() && source.shape.bucket != shape)
      throw InputError(fmt::format("viz: --bucket {} differs from the shape of the packed instance, {}; "
                                   "leave --bucket out with --requests",
                                   source.shape.bucket, shape));
    source.shape.bucket = shape;
  }
  if (request.pad_tokens || uniform_pad) {
    if (source.workload.empty() || source.shape.bucket.empty())
      throw InputError("viz: pad tokens need a transformer model and its bucket: -w MODEL --bucket BxS");
    if (source.shape.phase != "prefill")
      throw InputError(fmt::format("viz: pad tokens are shown for --phase prefill, not {}", source.shape.phase));
  }
  if (uniform_pad)
    request.pad_tokens =
        uniform_pad_tokens(transformer::parse_bucket(source.shape.bucket, "--bucket"), o.pad_tokens);
  const LoadedProgram loaded = load_program(config, source, "viz");
  GridView view = capture_grid_view(config, loaded.workload.name, loaded.program, request);
  // The page's title names the chip as run: the file's name and what --set changed.
  if (!o.overrides.empty()) view.chip += fmt::format(" with {}", fmt::join(o.overrides, ", "));
  const bool replacing = std::filesystem::exists(o.output);
  write_file_atomically(o.output, grid_view_html(view));
  if (replacing) fmt::print(stderr, "note: replaced {} from an earlier run\n", o.output);
  fmt::print("wrote: {}\n", o.output);
  return 0;
}

}  // namespace

Command add_viz_command(CLI::App& app) {
  auto opts = std::make_shared<VizOptions>();
  auto* cmd = app.add_subcommand(
      "viz", "Write an HTML page that plays back the PE grid cycle by cycle (exact model, arrays "
             "up to 32x32)");
  add_program_source_options(cmd, opts->source);
  add_config_options(cmd, opts->config, opts->overrides);
  cmd->add_option("--layer", opts->layer, "Show only this layer's instructions");
  cmd->add_option("--cycles", opts->cycles,
                  "Show run cycles A to B-1 (A:B; A: and :B leave one end open)");
  cmd->add_option("--mxu", opts->mxu, "Which MXU's grid to show (default 0)");
  cmd->add_option("-o,--output", opts->output, "HTML file to write")->required();
  auto* pad = cmd->add_option("--pad-tokens", opts->pad_tokens,
                              "Prefill of a model (-w MODEL --bucket BxS): the last N positions of every "
                              "lane are pad tokens, drawn in their own colour");
  auto* req = cmd->add_option("--requests", opts->requests,
                              "Show a real packed instance: pack this request log (as systolic pack does) "
                              "and run the model (-w) at the shape of prefill instance --instance");
  auto* bkt = cmd->add_option("--buckets", opts->buckets, "Bucket-set YAML for --requests");
  cmd->add_option("--instance", opts->instance, "Which prefill instance of --requests (0-based, default 0)")
      ->needs(req);
  cmd->add_option("--policy", opts->policy, "Packer for --requests (default first-fit-decreasing)")->needs(req);
  cmd->add_option("--window", opts->window_ms, "Arrival window in ms for --requests (default 0)")->needs(req);
  req->needs(bkt);
  bkt->needs(req);
  req->excludes(pad);
  pad->excludes(req);
  return {cmd, [opts, pad]() { return run_viz(*opts, pad->count() > 0); }};
}

}  // namespace systolic::cli
