#pragma once
// Each subcommand registers its options on the CLI11 app and returns the action to run once
// parsing succeeded. Actions throw InputError for bad input; main() turns that into exit 2.
#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/config.hpp"
#include "sim/program.hpp"
#include "sim/trace/trace.hpp"
#include "sim/workload.hpp"

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
Command add_compile_command(CLI::App& app);
Command add_viz_command(CLI::App& app);

// Where a program comes from: a workload (-w; --bucket/--phase for transformer models)
// compiled for the chip, or a compiled trace (-t). Shared by run and viz.
struct ProgramSource {
  std::string workload;
  std::string trace;
  WorkloadOptions shape;
};
void add_program_source_options(CLI::App* cmd, ProgramSource& source);

struct LoadedProgram {
  Workload workload;  // for a trace: only its name (file stem) and path
  Program program;
  std::optional<TraceHeader> trace;  // what a trace was compiled for
};
// Throws InputError "<command>: give a workload (-w) or a compiled trace (-t)" unless exactly
// one is given, and whatever the reader or the compiler rejects.
LoadedProgram load_program(const ChipConfig& config, const ProgramSource& source, const std::string& command);

// Help of --phase: "prefill or decode (default prefill), for transformer models".
std::string phase_help(const std::string& default_phase);

// --tp, --ep, --routing, --skew, --routing-seed: sharding over a multi-chip system.
void add_sharding_options(CLI::App* cmd, WorkloadOptions& shape);

// `-c/--config FILE` and `--set key=value` (repeatable): every command that loads a config.
void add_config_options(CLI::App* cmd, std::string& config, std::vector<std::string>& overrides);

}  // namespace systolic::cli
