// systolic config: print a resolved chip config, or the reference of every key.
#include <fmt/format.h>

#include <memory>

#include "sim/cli/commands.hpp"
#include "sim/config/config.hpp"

namespace systolic::cli {
namespace {
struct ConfigOptions {
  std::string config = default_config_path();
  std::vector<std::string> overrides;
  bool reference = false;
};
}  // namespace

Command add_config_command(CLI::App& app) {
  auto opts = std::make_shared<ConfigOptions>();
  auto* cmd = app.add_subcommand("config", "Print a resolved chip config as JSON, or the key reference");
  add_config_options(cmd, opts->config, opts->overrides);
  cmd->add_flag("--reference", opts->reference, "Print the markdown table of every config key");
  return {cmd, [opts]() {
    if (opts->reference) {
      fmt::print("{}", config_reference_markdown());
      return 0;
    }
    fmt::print("{}\n", config_to_json(load_config(opts->config, opts->overrides)).dump(2));
    return 0;
  }};
}

}  // namespace systolic::cli
