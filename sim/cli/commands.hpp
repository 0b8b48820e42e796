#pragma once
// Each subcommand registers its options on the CLI11 app and returns the action to run once
// parsing succeeded. Actions throw InputError for bad input; main() turns that into exit 2.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

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

// `--set key=value`, repeatable; shared by every command that loads a config.
void add_set_option(CLI::App* cmd, std::vector<std::string>& overrides);

}  // namespace systolic::cli
