#pragma once
// Each subcommand registers its options on the CLI11 app and returns the action to run once
// parsing succeeded. Actions throw InputError for bad input; main() turns that into exit 2.
#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/isa/program.hpp"
#include "sim/config/config.hpp"
#include "sim/run/pipeline.hpp"
#include "sim/serving/setup.hpp"
#include "sim/trace/trace.hpp"
#include "sim/workload/workload.hpp"

namespace systolic::cli {

using Action = std::function<int()>;

struct Command {
  CLI::App* app;  // the subcommand, to know whether it was the one parsed
  Action action;
};

// The preset used when -c is not given.
std::string default_config_path();

Command add_run_command(CLI::App& app);
Command add_config_command(CLI::App& app);
Command add_sweep_command(CLI::App& app);
Command add_pack_command(CLI::App& app);
Command add_capacity_command(CLI::App& app);
Command add_compile_command(CLI::App& app);
Command add_viz_command(CLI::App& app);

// -w/-t, --bucket, --phase: where a program comes from (ProgramSource, sim/run/pipeline.hpp).
// Shared by run and viz.
void add_program_source_options(CLI::App* cmd, ProgramSource& source);

// Help of --phase: "prefill or decode (default prefill), for transformer models".
std::string phase_help(const std::string& default_phase);

// --tp, --ep, --routing, --skew, --routing-seed: sharding over a multi-chip system.
void add_sharding_options(CLI::App* cmd, WorkloadOptions& shape);

// --scheduler, --chunk-tokens, --slo-ttft/--slo-tbt, --router, --rate-scale, --poisson, --seed:
// the serving replay, shared by pack and capacity.
void add_serving_options(CLI::App* cmd, PackRequest& request);
// --max-instructions, --max-pe-cycles, --max-ici-chunks: the limits a run is estimated against before the work
// (sim/compile/budget.hpp, docs/reliability.md).
void add_budget_options(CLI::App* cmd, Budget& budget);

// `-c/--config FILE`, `--set key=value` (repeatable) and `--max-yaml-bytes`: every command that loads a
// config.
void add_config_options(CLI::App* cmd, std::string& config, std::vector<std::string>& overrides);

}  // namespace systolic::cli
