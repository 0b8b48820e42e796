// Where `run` and `viz` get their program: a workload compiled for the chip, or a trace
// (loaded by load_program, sim/run/pipeline.hpp).
#include "sim/cli/commands.hpp"

namespace systolic::cli {

void add_program_source_options(CLI::App* cmd, ProgramSource& source) {
  auto* w = cmd->add_option("-w,--workload", source.workload,
                            "GEMM list YAML, SCALE-Sim topology CSV or transformer model YAML");
  auto* t = cmd->add_option("-t,--trace", source.trace, "Compiled trace (from systolic compile)");
  w->excludes(t);
  t->excludes(w);
  cmd->add_option("--bucket", source.shape.bucket,
                  "Static shape of a transformer model: BxS (prefill) or BxL (decode)");
  cmd->add_option("--phase", source.shape.phase, "prefill (default) or decode, for transformer models");
}

}  // namespace systolic::cli
