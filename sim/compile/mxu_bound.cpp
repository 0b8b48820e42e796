#include "sim/compile/mxu_bound.hpp"

#include <algorithm>
#include <vector>

#include "models/common/saturating.hpp"
#include "models/mxu/dataflow.hpp"
#include "sim/compile/overlap.hpp"
#include "sim/compile/tiled_internal.hpp"

namespace systolic {
namespace {

using compile_detail::tiled::AttentionTiling;
using compile_detail::tiled::EntryPlan;
using compile_detail::tiled::Tiling;

// The cycles of the MXU shares of one matmul [m, k] x [k, n] (TiledCompiler::multiply and the
// attention chain's scores and context both emit mxu_shares).
uint64_t shares_cycles(const ChipConfig& c, int64_t m, int64_t k, int64_t n, DType dt) {
  const Dataflow& dataflow = dataflow_of(c.mxu.dataflow);
  uint64_t total = 0;
  for (const MatmulOp& op : compile_detail::tiled::mxu_shares(c, m, k, n, 0, dt, 0, 0)) {
    uint64_t cycles = UINT64_MAX;
    try {
      cycles = dataflow.cycles(c.mxu.shape(op.dtype), c.mxu.convention, {op.m, op.k, op.n});
    } catch (const std::overflow_error&) {  // past the range anyway
    }
    total = saturating_add(total, cycles);  // a bound past the range bounds nothing smaller
  }
  return total;
}

// One instance of a GEMM on its own (TiledCompiler::gemm, weight_panel): per row block, the
// (k, n) tiles of its weights, cut at the panels' edges when the weights are outer.
uint64_t gemm_cycles(const ChipConfig& c, const Gemm& g, const EntryPlan& plan) {
  const Tiling& t = plan.tiling;
  const DType dt = compile_detail::operands_of(c, g).compute;
  const int64_t panel = t.panel > 0 ? t.panel : g.n;
  uint64_t total = 0;
  for (const compile_detail::tiled::RowBlock& block : compile_detail::tiled::row_blocks(g, plan))
    for (int64_t p0 = 0; p0 < g.n; p0 += panel)
      for (int64_t n0 = p0, end = std::min(p0 + panel, g.n); n0 < end; n0 += t.n)
        for (int64_t k0 = 0; k0 < g.k; k0 += t.k)
          total = saturating_add(
              total, shares_cycles(c, block.rows, std::min(t.k, g.k - k0), std::min(t.n, end - n0), dt));
  return total;
}

// One instance of a fused attention chain (TiledCompiler::attention_query_block): per query
// block and key block, the scores [mt, dk] x [dk, kn] and the context [mt, kn] x [kn, dv].
uint64_t attention_cycles(const ChipConfig& c, const Gemm& scores, const AttentionTiling& t) {
  const DType dt = compile_detail::operands_of(c, scores).compute;
  uint64_t total = 0;
  for (int64_t qb = 0; qb < t.q_blocks; ++qb) {
    const int64_t mt = std::min(t.mq, t.m - qb * t.mq);
    for (int64_t j = 0; j < t.k_blocks; ++j) {
      const int64_t kn = std::min(t.kb, t.n - j * t.kb);
      total = saturating_add(
          total, saturating_add(shares_cycles(c, mt, t.dk, kn, dt), shares_cycles(c, mt, kn, t.dv, dt)));
    }
  }
  return total;
}

}  // namespace

uint64_t mxu_instruction_cycles(const ChipConfig& config, const Workload& workload, int chip) {
  std::vector<EntryPlan> plans = compile_detail::tiled::plan_entries(config, workload, true);
  compile_detail::tiled::cut_row_blocks(config, workload,
                                        compile_detail::plan_overlap(config, workload, chip), plans);
  uint64_t total = 0;
  for (size_t i = 0; i < workload.gemms.size(); ++i) {
    const Gemm& g = workload.gemms[i];
    if (plans[i].fused_tail) continue;  // counted with its chain's head
    // Every instance (head, slot) is tiled alike.
    const uint64_t instance =
        plans[i].fused ? attention_cycles(config, g, *plans[i].fused) : gemm_cycles(config, g, plans[i]);
    total = saturating_add(total, saturating_mul(instance, static_cast<uint64_t>(g.repeat)));
  }
  return total;
}

uint64_t mxu_cycles_lower_bound(const ChipConfig& config, const Workload& workload, int chip) {
  return mxu_instruction_cycles(config, workload, chip) / static_cast<uint64_t>(config.mxu.count);
}

}  // namespace systolic
