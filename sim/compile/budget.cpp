#include "sim/compile/budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "models/common/clock.hpp"
#include "models/common/error.hpp"
#include "models/common/saturating.hpp"
#include "models/mxu/dataflow.hpp"
#include "sim/compile/detail.hpp"
#include "sim/compile/tiled_internal.hpp"

namespace systolic {
namespace {

// Saturating at UINT64_MAX: an estimate only has to be past the limit.
constexpr auto times = saturating_mul;
constexpr auto plus = saturating_add;

}  // namespace

uint64_t estimate_instructions(const ChipConfig& config, const Workload& workload) {
  const auto plans = compile_detail::tiled::plan_entries(config, workload, true);
  uint64_t total = 0;
  for (size_t i = 0; i < workload.gemms.size(); ++i) {
    const Gemm& g = workload.gemms[i];
    uint64_t tiles = 0;
    if (plans[i].fused_tail) continue;  // counted with its chain's head
    if (const auto& a = plans[i].fused) {
      tiles = times(static_cast<uint64_t>(a->q_blocks), static_cast<uint64_t>(a->k_blocks));
    } else {
      // TiledCompiler::gemm: a multiply per (m, n, k) tile, a weight load per tile (per (n, k)
      // tile of a panel when the weights are outer), an activation load per (m, k) tile
      // (load_a) and a store per (m, n) tile (store_tile).
      const compile_detail::tiled::Tiling& t = plans[i].tiling;
      const auto m = static_cast<uint64_t>(ceil_div(g.m, t.m)), n = static_cast<uint64_t>(ceil_div(g.n, t.n)),
                 k = static_cast<uint64_t>(ceil_div(g.k, t.k));
      const uint64_t nk = times(n, k), mnk = times(m, nk);
      tiles = plus(plus(mnk, t.panel > 0 ? nk : mnk), plus(times(m, k), times(m, n)));
    }
    total = plus(total, times(tiles, static_cast<uint64_t>(g.repeat)));
  }
  return plus(total, workload.vectors.size() + workload.collectives.size());
}

void check_instructions(uint64_t estimate, const Budget& budget, const std::string& what) {
  if (estimate <= budget.max_instructions) return;
  throw InputError(fmt::format(
      "{}: compiles to at least {} instructions (a multiply and its loads and store per tile), more than "
      "--max-instructions {} (about 0.5 KB each; raise it if the memory is there, or shrink the workload)",
      what, estimate, budget.max_instructions));
}

uint64_t estimate_pe_cycles(const ChipConfig& config, const Program& program) {
  if (config.mxu.model != MxuModel::exact) return 0;
  const Dataflow& dataflow = dataflow_of(config.mxu.dataflow);
  const auto pes = static_cast<uint64_t>(config.mxu.rows) * static_cast<uint64_t>(config.mxu.cols);
  uint64_t total = 0;
  for (const Stream& s : program.streams)
      for (const Instruction& i : s.instructions)
        if (const auto* mm = std::get_if<MatmulOp>(&i.op)) {
          uint64_t cycles = UINT64_MAX;
          try {
            cycles = dataflow.cycles(config.mxu.shape(mm->dtype), config.mxu.convention, {mm->m, mm->k, mm->n});
          } catch (const std::overflow_error&) {  // past any limit anyway
          }
          total = plus(total, times(cycles, pes));
        }
  return total;
}

void check_matmul_cycle_range(const ChipConfig& config, const Program& program, const std::string& what) {
  const Dataflow& dataflow = dataflow_of(config.mxu.dataflow);
  uint64_t total = 0;
  for (const Stream& s : program.streams)
    for (const Instruction& i : s.instructions)
      if (const auto* mm = std::get_if<MatmulOp>(&i.op)) {
        uint64_t cycles = kMaxCycles + 1;
        try {
          cycles = dataflow.cycles(config.mxu.shape(mm->dtype), config.mxu.convention, {mm->m, mm->k, mm->n});
        } catch (const std::overflow_error&) {  // past the range anyway
        }
        total = plus(total, cycles);
        if (total > kMaxCycles)
          throw InputError(
              fmt::format("{}: matmul m={} k={} n={}: the matmuls' cycles together pass the "
                          "64-bit simulated-time range ({} cycles at most)",
                          what, mm->m, mm->k, mm->n, kMaxCycles));
      }
}

void check_pe_cycles(const ChipConfig& config, uint64_t estimate, const Budget& budget, const std::string& what) {
  if (estimate <= budget.max_pe_cycles) return;
  throw InputError(fmt::format(
      "{}: the exact MXU model would step {} PE-cycles (matmul cycles x {}x{} PEs), more than --max-pe-cycles {} "
      "(~5 x 10^8 a second); mxu.model=fast gives the same cycle counts without stepping the grid",
      what, estimate, config.mxu.rows, config.mxu.cols, budget.max_pe_cycles));
}

uint64_t estimate_ici_chunks(const ChipConfig& config, const Program& program) {
  const uint64_t chunk = std::max<uint64_t>(config.ici.chunk_bytes, 1);
  uint64_t total = 0;
  for (const Stream& s : program.streams)
    for (const Instruction& i : s.instructions)
      if (const auto* ici = std::get_if<IciOp>(&i.op))
        for (const IciCopy& c : ici->copies) total = plus(total, c.bytes / chunk + (c.bytes % chunk != 0));
  return total;
}

void check_ici_chunks(const ChipConfig& config, uint64_t estimate, const Budget& budget, const std::string& what) {
  if (estimate <= budget.max_ici_chunks) return;
  throw InputError(fmt::format(
      "{}: the interconnect would move {} chunks of ici.chunk_bytes = {} B, more than --max-ici-chunks {} "
      "(a larger ici.chunk_bytes times the same transfers in fewer events)",
      what, estimate, config.ici.chunk_bytes, budget.max_ici_chunks));
}

}  // namespace systolic
