// systolic: command-line entry point. Exit codes: 0 success, 2 bad input, 1 internal error.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "models/common/error.hpp"
#include "sim/cli/commands.hpp"

namespace {

// glibc's allocator, set for programs of millions of instructions (a Llama-3-8B prefill at
// [4, 8192] compiles to 7.2 M, about 3 GB): transparent huge pages for the heap (one page fault
// per 2 MiB instead of per 4 KiB, and fewer TLB misses), and freed memory kept for the next
// allocation instead of handed back to the kernel and faulted in again (the serving replay
// compiles and frees one program per bucket shape). The same bytes in every report, about half
// the CPU time on the serving cases (docs/performance.md, "Memory allocator").
constexpr const char* kMallocTunables =
    "glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=4294967295:glibc.malloc.trim_threshold=4294967295";

// glibc reads its tunables only from the environment as a process starts, so `systolic` runs
// itself again (the same pid) with them added to GLIBC_TUNABLES, once: a GLIBC_TUNABLES that
// already names a glibc.malloc tunable (ours after the exec, or the user's own choice) is left
// alone. If the exec fails the run goes on with the defaults, only slower.
void use_allocator_tunables(char** argv) {
  const char* old = std::getenv("GLIBC_TUNABLES");
  if (old && std::strstr(old, "glibc.malloc.")) return;
  const std::string previous = old ? old : "";
  const std::string tunables = previous.empty() ? kMallocTunables : previous + ":" + kMallocTunables;
  // The executable's own path rather than /proc/self/exe, which `ps` would then list as "exe".
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return;
  setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
  execv(self.c_str(), argv);
  if (old)
    setenv("GLIBC_TUNABLES", previous.c_str(), 1);
  else
    unsetenv("GLIBC_TUNABLES");
}

}  // namespace

int main(int argc, char** argv) {
  use_allocator_tunables(argv);
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
