// systolic viz: the PE-grid page of a small array (docs/watch-it-compute.md).
#include <fmt/format.h>

#include <memory>

#include "sim/cli/commands.hpp"
#include "sim/config.hpp"
#include "sim/error.hpp"
#include "sim/report.hpp"
#include "sim/viz/grid_view.hpp"
#include "sim/viz/html_writer.hpp"

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
};
}  // namespace

Command add_viz_command(CLI::App& app) {
  auto opts = std::make_shared<VizOptions>();
  auto* cmd = app.add_subcommand(
      "viz", "Write an HTML page that plays back the PE grid cycle by cycle (exact model, arrays "
             "up to 32x32)");
  cmd->add_option("-c,--config", opts->config, "Chip config YAML (default: configs/tpu-v4i.yaml)");
  add_program_source_options(cmd, opts->source);
  add_set_option(cmd, opts->overrides);
  cmd->add_option("--layer", opts->layer, "Show only this layer's instructions");
  cmd->add_option("--cycles", opts->cycles,
                  "Show run cycles A to B-1 (A:B; A: and :B leave one end open)");
  cmd->add_option("--mxu", opts->mxu, "Which MXU's grid to show (default 0)");
  cmd->add_option("-o,--output", opts->output, "HTML file to write")->required();
  return {cmd, [opts]() {
    VizRequest request;
    request.layer = opts->layer;
    request.mxu = opts->mxu;
    if (!opts->cycles.empty()) parse_cycle_range(opts->cycles, request);
    // The page always shows the exact model (capture_grid_view switches to it).
    const ChipConfig config = load_config(opts->config, opts->overrides);
    const auto [workload, program] = load_program(config, opts->source, "viz");
    const GridView view = capture_grid_view(config, workload.name, program, request);
    write_file_atomically(opts->output, grid_view_html(view));
    return 0;
  }};
}

}  // namespace systolic::cli
