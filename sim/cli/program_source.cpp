// Where `run` and `viz` get their program: a workload compiled for the chip, or a trace
// (loaded by load_program, sim/run/pipeline.hpp).
#include "models/common/error.hpp"
#include "sim/cli/commands.hpp"
#include "sim/compile/compile.hpp"
#include "sim/trace/trace.hpp"
#include "sim/workload/reader.hpp"
#include "sim/workload/transformer/lower.hpp"

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

}  // namespace systolic::cli
