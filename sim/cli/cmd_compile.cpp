// systolic compile: lower a workload for a chip and write the compiled trace.
#include <fmt/format.h>

#include <memory>

#include "models/common/error.hpp"
#include "sim/cli/commands.hpp"
#include "sim/compile/compile.hpp"
#include "sim/config/config.hpp"
#include "sim/report/report.hpp"
#include "sim/trace/trace.hpp"
#include "sim/workload/reader.hpp"
#include "sim/workload/workload.hpp"

namespace systolic::cli {
namespace {
struct CompileOptions {
  std::string config = default_config_path();
  std::string workload;
  std::vector<std::string> overrides;
  WorkloadOptions shape;
  std::string output;
  int chip = 0;
  Budget budget;
};
}  // namespace

Command add_compile_command(CLI::App& app) {
  auto opts = std::make_shared<CompileOptions>();
  auto* cmd = app.add_subcommand("compile", "Compile a workload for a chip into a trace file");
  cmd->add_option("-w,--workload", opts->workload, "Workload file: " + workload_formats())->required();
  add_config_options(cmd, opts->config, opts->overrides);
  cmd->add_option("--bucket", opts->shape.bucket, "Static shape of a transformer model: BxS (prefill) or BxL (decode)");
  cmd->add_option("--phase", opts->shape.phase, phase_help(opts->shape.phase));
  cmd->add_option("-o,--output", opts->output, "Trace file to write")->required();
  cmd->add_option("--chip", opts->chip, "Multi-chip configs: the chip whose program to write (default 0)")
      ->check(CLI::NonNegativeNumber);
  add_sharding_options(cmd, opts->shape);
  add_budget_options(cmd, opts->budget);
  return {cmd, [opts]() {
    const ChipConfig config = load_config(opts->config, opts->overrides);
    const int chips = static_cast<int>(config.ici.chips());
    if (opts->chip >= chips)
      throw InputError(fmt::format("compile: --chip {}: expected a chip of the system's {} (ici.dims = {})", opts->chip,
                                   chips, dims_text(config.ici.dims)));
    // One chip's program; a multi-chip system's chips are compiled alike, each for its place.
    const auto workloads =
        config.ici.topology == IciTopologyKind::none
            ? std::vector<Workload>{load_workload(opts->workload, opts->shape)}
            : load_system_workloads(opts->workload, opts->shape, config.ici.build_topology());
    const Program program = compile(config, workloads[static_cast<size_t>(opts->chip)], opts->chip, opts->budget);
    write_file_atomically(opts->output, write_trace(program, config, opts->chip));
    return 0;
  }};
}

}  // namespace systolic::cli
