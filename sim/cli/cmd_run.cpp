// systolic run: simulate a workload on a chip, print the summary, write OUTDIR/report.json.
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "sim/cli/commands.hpp"
#include "sim/compile.hpp"
#include "sim/config.hpp"
#include "sim/report.hpp"
#include "sim/error.hpp"
#include "sim/simulate.hpp"
#include "sim/timeline.hpp"
#include "sim/transformer/shard.hpp"
#include "sim/viz/vcd_tracer.hpp"

namespace systolic::cli {

std::string default_config_path() {
  return std::string(SYSTOLIC_SOURCE_DIR) + "/configs/tpu-v4i.yaml";
}

void add_config_options(CLI::App* cmd, std::string& config, std::vector<std::string>& overrides) {
  cmd->add_option("-c,--config", config, "Chip config YAML (default: configs/tpu-v4i.yaml)");
  cmd->add_option("--set", overrides, "Override a config key: key=value (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

namespace {
struct RunOptions {
  std::string config = default_config_path();
  ProgramSource source;
  std::vector<std::string> overrides;
  std::string outdir = "out";
  bool quiet = false;
  std::string vcd;       // waveforms (sim/viz/vcd_tracer.hpp)
  std::string timeline;  // trace-event JSON (sim/timeline.hpp)
};
}  // namespace

void add_sharding_options(CLI::App* cmd, WorkloadOptions& shape) {
  cmd->add_option("--tp", shape.tp, "Tensor-parallel degree of a transformer on a multi-chip config: 1 or the chip count")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--ep", shape.ep, "Expert-parallel degree of a MoE transformer: 1 or the chip count (with --tp)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--routing", shape.routing,
                  "MoE token routing with --ep: " + transformer::kRoutingNames.choices(" or ") + " (Zipf), default " +
                      shape.routing)
      ->check(CLI::IsMember(transformer::kRoutingNames.names()));
  cmd->add_option("--skew", shape.skew, "Zipf exponent of --routing skewed (default 1.0)")->check(CLI::Range(0.0, 10.0));
  cmd->add_option("--routing-seed", shape.routing_seed, "Seed of --routing skewed: which experts are popular");
  // Mixed precision of a transformer model (docs/precision.md), over its file's types.
  cmd->add_option("--weight-dtype", shape.weight_dtype, "Transformer weights' type, e.g. int8 (W8A16) or int4");
  cmd->add_option("--activation-dtype", shape.activation_dtype, "Transformer activations' type, e.g. bf16");
  cmd->add_option("--kv-dtype", shape.kv_dtype, "Transformer KV cache's type, e.g. fp8_e4m3");
}

namespace {
// A multi-chip config: one workload per chip (sharded with --tp/--ep), one simulation.
int run_system(const ChipConfig& config, const RunOptions& opts) {
  if (!opts.source.trace.empty())
    throw InputError(fmt::format("run: {} is a {}-chip system (ici.topology = {}); compiled traces describe "
                                 "one chip: give a workload (-w)",
                                 config.source, config.ici.chips(), kIciTopologyNames.name(config.ici.topology)));
  if (opts.source.workload.empty()) throw InputError("run: give a workload (-w)");
  if (!opts.vcd.empty())
    throw InputError("run: --vcd records one chip's PE grid; use a single-chip config (ici.topology: none)");
  const auto workloads = load_system_workloads(opts.source.workload, opts.source.shape,
                                               static_cast<int>(config.ici.chips()));
  const auto programs = compile_system(config, workloads);
  const SystemResult result = simulate_system(config, programs, {nullptr, nullptr, !opts.timeline.empty()});
  const auto report = make_system_report(config, workloads, programs, result);
  write_file_atomically((std::filesystem::path(opts.outdir) / "report.json").string(), report.dump(2) + "\n");
  if (!opts.timeline.empty())
    write_file_atomically(opts.timeline, make_system_timeline(config, programs, result).dump() + "\n");
  if (!opts.quiet) fmt::print("{}", format_system_summary(report));
  return 0;
}
}  // namespace

Command add_run_command(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Simulate a workload on a chip configuration");
  add_program_source_options(cmd, opts->source);
  add_config_options(cmd, opts->config, opts->overrides);
  cmd->add_option("-o,--outdir", opts->outdir, "Directory for report.json (default: out)");
  cmd->add_flag("-q,--quiet", opts->quiet, "Do not print the summary table");
  cmd->add_option("--vcd", opts->vcd,
                  "Write waveforms (VCD, for GTKWave) of the exact model: per-PE values (arrays up "
                  "to 32x32), engine busy/stalled, semaphores");
  cmd->add_option("--timeline", opts->timeline,
                  "Write a timeline (Chrome trace-event JSON, for Perfetto / chrome://tracing)");
  add_sharding_options(cmd, opts->source.shape);
  return {cmd, [opts]() {
    const ChipConfig config = load_config(opts->config, opts->overrides);
    if (config.ici.topology != IciTopologyKind::none) return run_system(config, *opts);
    const auto [workload, program, trace] = load_program(config, opts->source, "run");
    const bool channels = !opts->timeline.empty();  // the timeline's HBM channel counters
    const SimResult result = opts->vcd.empty() ? simulate(config, program, {nullptr, nullptr, channels})
                                               : simulate_with_vcd(config, program, opts->vcd, channels);
    auto report = make_report(config, workload, program, result);
    if (trace) {
      report["trace"] = trace_report(*trace, config);
      if (trace->memory_ideal != config.memory.ideal)
        fmt::print(stderr, "note: {} was compiled with memory.ideal={} and is timed with memory.ideal={}\n",
                   opts->source.trace, trace->memory_ideal, config.memory.ideal);
    }
    write_file_atomically((std::filesystem::path(opts->outdir) / "report.json").string(),
                          report.dump(2) + "\n");
    if (!opts->timeline.empty())
      write_file_atomically(opts->timeline, make_timeline(config, program, result).dump() + "\n");
    if (!opts->quiet) fmt::print("{}", format_summary(report));
    return 0;
  }};
}

}  // namespace systolic::cli
