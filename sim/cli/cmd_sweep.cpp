// systolic sweep: design-space sweeps (docs/sweeps.md). The sweep driver is Python
// (sim/python/systolic/sweep.py: process pool, Dask, SQLite); this command replaces itself with
//   /usr/bin/python3 -m systolic.sweep ARGS...
// with PYTHONPATH set to the package built beside this executable (<dir of systolic>/python),
// so every argument, the output and the exit code are the Python driver's own.
// $SYSTOLIC_PYTHON names another interpreter (it must be the one the module was built for).
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "models/common/error.hpp"
#include "sim/cli/commands.hpp"

namespace systolic::cli {
namespace {

// The folder holding the `systolic` package: beside the executable in a build tree
// (<build>/python), or where `cmake --install` puts it (<prefix>/lib/python3/dist-packages,
// which Debian's python3 searches for prefix /usr/local).
std::filesystem::path python_package_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw InputError("sweep: cannot locate the systolic executable (/proc/self/exe)");
  const auto build_tree = exe.parent_path() / "python";
  const auto installed = exe.parent_path().parent_path() / "lib" / "python3" / "dist-packages";
  for (const auto& dir : {build_tree, installed})
    if (std::filesystem::exists(dir / "systolic" / "__init__.py")) return dir;
  throw InputError(fmt::format(
      "sweep: the systolic Python package is neither built next to this executable ({}/systolic) nor "
      "installed beside it ({}/systolic); install pybind11-dev and python3-dev and rebuild",
      build_tree.string(), installed.string()));
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "sweep", "Run a design-space sweep in a process pool or on Dask (sweep --help for more)");
  // Everything after `sweep`, --help included, belongs to the Python driver.
  cmd->prefix_command();
  cmd->set_help_flag();
  cmd->allow_extras();
  return {cmd, [cmd]() -> int {
    const auto pydir = python_package_dir();
    const char* python_env = std::getenv("SYSTOLIC_PYTHON");
    const std::string python = python_env && *python_env ? python_env : "/usr/bin/python3";

    std::string pythonpath = pydir.string();
    if (const char* old = std::getenv("PYTHONPATH"); old && *old) pythonpath += ":" + std::string(old);
    setenv("PYTHONPATH", pythonpath.c_str(), 1);
    setenv("SYSTOLIC_SWEEP_PROG", "systolic sweep", 1);

    std::vector<std::string> args = {python, "-m", "systolic.sweep"};
    for (const auto& a : cmd->remaining()) args.push_back(a);
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(stdout);
    std::fflush(stderr);
    execv(python.c_str(), argv.data());
    throw InputError(fmt::format("sweep: cannot run {}: {}", python, std::strerror(errno)));
  }};
}

}  // namespace systolic::cli
