// systolic: command-line entry point. Exit codes: 0 success, 2 bad input, 1 internal error.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <exception>
#include <vector>

#include "models/common/error.hpp"
#include "sim/cli/commands.hpp"

int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  CLI::App app{"Systolic: cycle-accurate simulator of TPU-style accelerators"};
  app.set_version_flag("--version", fmt::format("systolic {}", SYSTOLIC_VERSION));
  app.require_subcommand(1);
  const std::vector<systolic::cli::Command> commands = {
      systolic::cli::add_run_command(app),
      systolic::cli::add_compile_command(app),
      systolic::cli::add_config_command(app),
      systolic::cli::add_sweep_command(app),
      systolic::cli::add_pack_command(app),
      systolic::cli::add_capacity_command(app),
      systolic::cli::add_viz_command(app),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    for (const auto& c : commands)
      if (c.app->parsed()) return c.action();
  } catch (const systolic::InputError& e) {
    fmt::print(stderr, "systolic: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "systolic: internal error: {}\n", e.what());
    return 1;
  }
  return 0;
}
