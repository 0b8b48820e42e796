// Where `run` and `viz` get their program: a workload compiled for the chip, or a trace.
#include <filesystem>

#include "sim/cli/commands.hpp"
#include "sim/compile.hpp"
#include "sim/error.hpp"
#include "sim/trace/trace.hpp"
#include "sim/transformer/lower.hpp"
#include "sim/workload/readers/workload_reader.hpp"

namespace systolic::cli {

std::string phase_help(const std::string& default_phase) {
  return transformer::kPhaseNames.choices(" or ") + " (default " + default_phase + "), for transformer models";
}

void add_program_source_options(CLI::App* cmd, ProgramSource& source) {
  auto* w = cmd->add_option("-w,--workload", source.workload, "Workload file: " + workload_formats());
  auto* t = cmd->add_option("-t,--trace", source.trace, "Compiled trace (from systolic compile)");
  w->excludes(t);
  t->excludes(w);
  cmd->add_option("--bucket", source.shape.bucket,
                  "Static shape of a transformer model: BxS (prefill) or BxL (decode)");
  cmd->add_option("--phase", source.shape.phase, phase_help(source.shape.phase));
}

LoadedProgram load_program(const ChipConfig& config, const ProgramSource& source, const std::string& command) {
  if (source.workload.empty() == source.trace.empty())
    throw InputError(command + ": give a workload (-w) or a compiled trace (-t)");
  LoadedProgram out;
  if (!source.trace.empty()) {
    Trace trace = read_trace(source.trace, config);
    out.program = std::move(trace.program);
    out.trace = std::move(trace.header);
    out.workload.name = std::filesystem::path(source.trace).stem().string();
    out.workload.path = source.trace;
  } else {
    out.workload = load_workload(source.workload, source.shape);
    out.program = compile(config, out.workload);
  }
  return out;
}

}  // namespace systolic::cli
