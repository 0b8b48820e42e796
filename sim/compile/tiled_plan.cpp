// The tiled compiler's plan: how each GEMM is tiled (choose_tiling), which attention chains
// are fused and how (choose_attention_tiling), and where every tensor lives in HBM
// (layout_hbm). tiled.cpp describes the lowering that follows the plan.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

#include "models/common/error.hpp"
#include "sim/compile/tiled_internal.hpp"

namespace systolic::compile_detail::tiled {

Copies copies_of(const ChipConfig& c) {
  const int n = c.dma.double_buffer ? 2 : 1;
  return {n, static_cast<int64_t>(c.sram.vmem.capacity_bytes) / n,
          static_cast<int64_t>(c.sram.weights.capacity_bytes) / n,
          static_cast<int64_t>(c.sram.accumulators.capacity_bytes) / n};
}

Widths widths_of(const ChipConfig& c, const Gemm& g) {
  Widths w;
  w.ops = operands_of(c, g);
  w.a = static_cast<int64_t>(dtype_storage_bytes(w.ops.a, 1));
  w.buf = static_cast<int64_t>(dtype_storage_bytes(w.ops.dequantize_b ? w.ops.compute : w.ops.b, 1));
  return w;
}

namespace {

// Layers with big weights are cut into at least this many weight tiles, so that the first
// load (which nothing can hide) is a small part of the layer.
constexpr int64_t kMinWeightTiles = 16;

}  // namespace

Tiling choose_tiling(const ChipConfig& c, const Gemm& g, int64_t max_rows) {
  const Widths ww = widths_of(c, g);
  // R: the K rows of one fold (the array's rows times the products each PE packs along K).
  const int64_t a = ww.a, w = ww.buf, C = c.mxu.cols, P = c.mxu.count,
                R = c.mxu.rows * c.mxu.rate_of(ww.ops.compute).products;
  const Copies cap = copies_of(c);
  const int64_t copies = cap.count, wcap = cap.weights, vcap = cap.vmem, acap = cap.acc;
  const auto fail = [&](const std::string& why) {
    throw InputError(fmt::format("{}: layer '{}' ({}x{}x{} {}): no tiling fits: {}", g.source, g.name, g.m,
                                 g.k, g.n, kDTypeNames.name(ww.ops.compute), why));
  };
  if (g.k * a > vcap)
    fail(fmt::format("one row of activations (K={} x {} B) needs {} B of vmem{}, but sram.vmem_bytes = {}",
                     g.k, a, g.k * a * copies, copies > 1 ? " (ping and pong)" : "",
                     c.sram.vmem.capacity_bytes));
  Tiling t;
  t.m = std::min(max_rows > 0 ? std::min(g.m, max_rows) : g.m, vcap / (g.k * a));
  // Output columns: as many as the accumulators hold for the whole activation block, at least
  // one column fold per MXU, in whole groups of P folds so every MXU gets the same share.
  t.n = std::min(g.n, std::max(C * P, acap / (t.m * 4) / (C * P) * (C * P)));
  t.k = g.k;
  // ... but never below one fold per MXU, so every MXU has work in each tile. A layer of fewer
  // than kMinWeightTiles fold groups is not cut for this: its first load is short, and a cut
  // would cost each tile the weight load the MXU otherwise overlaps with the fold before it.
  const int64_t fold_group = R * C * P * w, weights = g.k * g.n * w;
  const int64_t weight_cap =
      std::min(wcap, weights < kMinWeightTiles * fold_group ? weights : std::max(fold_group, weights / kMinWeightTiles));
  while (t.k * t.n * w > weight_cap) {
    if (t.k > R) t.k = std::max(R, round_up(t.k / 2, R));
    else if (t.n > C) t.n = std::max(C, round_up(t.n / 2, C));
    else break;
  }
  if (t.k * t.n * w > wcap)  // unreachable for configs that passed validate_config
    fail(fmt::format("a {}x{} weight tile needs {} B, but sram.weights_bytes holds {} B per copy", t.k,
                     t.n, t.k * t.n * w, wcap));
  t.m = std::max<int64_t>(1, std::min(t.m, acap / (t.n * 4)));
  // With tiled activations, blocks of whole rows of tiles (a vector register's rows) where the
  // tensors are whole rows of tiles and A's or C's column blocks whole tiles, so that a block
  // can move as one run per row of tiles (activation_layout.cpp); other GEMMs keep their rows.
  // Not within the parts an overlapped collective cuts (max_rows): there the parts' own bounds
  // decide whether the blocks are whole tiles, and a rounded m_t would cut each part in two.
  const Tile tile = activation_tile(c);
  if (c.memory.activation_layout == ActivationLayout::tiled && max_rows <= 0 && t.m < g.m &&
      t.m > tile.rows && g.m % tile.rows == 0 &&
      (columns_cover_tiles(g.k, t.k, tile) || columns_cover_tiles(g.n, t.n, tile)))
    t.m = t.m / tile.rows * tile.rows;
  // Weights outer when the activations come in several blocks, a panel of whole tiles' columns
  // fits a weight-buffer copy, and reading A once per panel moves fewer bytes than reading W
  // once per block of rows.
  const int64_t blocks = ceil_div(g.m, t.m), panel = std::min(g.n, wcap / (g.k * w) / t.n * t.n);
  if (blocks > 1 && panel >= t.n) {
    using u128 = unsigned __int128;  // bits moved from HBM either way
    const u128 ab = static_cast<u128>(g.m) * static_cast<u128>(g.k) * static_cast<u128>(dtype_bits(ww.ops.a)),
               bb = static_cast<u128>(g.k) * static_cast<u128>(g.n) * static_cast<u128>(dtype_bits(ww.ops.b));
    if (bb + ab * static_cast<u128>(ceil_div(g.n, panel)) < ab + bb * static_cast<u128>(blocks)) t.panel = panel;
  }
  return t;
}

void plan_row_blocks(const ChipConfig& c, const Gemm& g, int64_t blocks, EntryPlan& plan) {
  plan.row_blocks = blocks;
  plan.tiling = choose_tiling(c, g, ceil_div(g.m, blocks));
  plan.tiling.panel = g.k * g.n * widths_of(c, g).buf <= copies_of(c).weights ? g.n : 0;
}

void cut_row_blocks(const ChipConfig& c, const Workload& w, const std::vector<OverlapPlan>& overlap,
                    std::vector<EntryPlan>& plans) {
  for (const OverlapPlan& o : overlap)
    if (o.decomposed) plan_row_blocks(c, w.gemms[o.gemm], o.blocks, plans[o.gemm]);
}

std::vector<RowBlock> row_blocks(const Gemm& g, const EntryPlan& plan) {
  const int64_t parts = std::max<int64_t>(1, plan.row_blocks), step = plan.tiling.m;
  std::vector<RowBlock> out;
  for (int64_t j = 0; j < parts; ++j) {
    const int64_t lo = j * (g.m / parts) + std::min(j, g.m % parts),
                  hi = lo + g.m / parts + (j < g.m % parts ? 1 : 0);
    for (int64_t m0 = lo; m0 < hi; m0 += step) out.push_back({m0, std::min(step, hi - m0), m0 + step >= hi});
  }
  return out;
}

namespace {

// Ring slots per buffer copy: with two copies, up to four units of work in flight.
constexpr int64_t kMaxSlotsPerCopy = 2;

// The softmax between GEMMs i and i+1 when they are scores -> softmax -> context of attention:
// both attention entries with as many instances, the context GEMM taking the scores' shape as
// its A operand, and the one vector entry between them a softmax over exactly the scores.
const VectorWork* attention_softmax(const ChipConfig& c, const Workload& w, size_t i) {
  if (i + 1 >= w.gemms.size()) return nullptr;
  const Gemm &s = w.gemms[i], &o = w.gemms[i + 1];
  if (s.kind != LayerKind::attention || o.kind != LayerKind::attention || o.m != s.m || o.k != s.n || o.repeat != s.repeat)
    return nullptr;
  // One operand pair for both GEMMs, and K and V read as they are (no dequantise step).
  const MxuOperands so = operands_of(c, s), oo = operands_of(c, o);
  if (so.a != oo.a || so.b != oo.b || so.dequantize_b) return nullptr;
  // The one vector entry after the scores (vectors are in order of after_gemms: a binary
  // search, not a scan per GEMM, which was quadratic in the layers).
  const auto placed_before = [](size_t gemms) {
    return [gemms](const VectorWork& v) { return v.after_gemms < gemms; };
  };
  const auto first = std::partition_point(w.vectors.begin(), w.vectors.end(), placed_before(i + 1));
  const auto last = std::partition_point(first, w.vectors.end(), placed_before(i + 2));
  if (last - first != 1) return nullptr;
  const VectorWork* found = &*first;
  if (found->op.kind != VectorKind::softmax || found->op.cols != s.n) return nullptr;
  using u128 = unsigned __int128;
  if (static_cast<u128>(found->op.rows) * static_cast<u128>(found->repeat) !=
      static_cast<u128>(s.m) * static_cast<u128>(s.repeat))
    return nullptr;
  return found;
}

// Keys per block: all of them when a block of at least a vreg's rows of scores (32-bit) and
// probabilities fits, else whole array-column multiples. Query rows per block: as many as fit
// beside them, in whole vreg rows, balanced over the blocks. K and V stay resident per
// instance when both fit a weight-buffer copy. nullopt: not even one array-column of keys fits
// (the chain then runs unfused, through HBM).
std::optional<AttentionTiling> choose_attention_tiling(const ChipConfig& c, const Gemm& s, const Gemm& o) {
  const Copies cap = copies_of(c);
  AttentionTiling t;
  const Widths ww = widths_of(c, s);
  t.m = s.m, t.dk = s.k, t.n = s.n, t.dv = o.n, t.w = ww.a, t.wkv = ww.buf;
  const int64_t sub = c.vpu.sublanes, rows_min = std::min(t.m, sub);
  t.resident = (t.dk + t.dv) * t.n * t.wkv <= cap.weights;
  int64_t kb_max = std::min(cap.acc / (rows_min * 4) - t.dv, cap.vmem / (rows_min * t.w) - t.dk);
  if (!t.resident) kb_max = std::min(kb_max, cap.weights / ((t.dk + t.dv) * t.wkv));
  if (kb_max >= t.n) {
    t.kb = t.n;
  } else {
    if (kb_max < c.mxu.cols) return std::nullopt;
    t.k_blocks = ceil_div(t.n, kb_max / c.mxu.cols * c.mxu.cols);
    t.kb = round_up(ceil_div(t.n, t.k_blocks), c.mxu.cols);
  }
  t.k_blocks = ceil_div(t.n, t.kb);
  const int64_t rows_max = std::min(cap.acc / ((t.kb + t.dv) * 4), cap.vmem / ((t.dk + t.kb) * t.w));
  if (rows_max >= t.m) {
    t.mq = t.m;
  } else {
    const int64_t step = rows_max >= sub ? sub : 1, most = rows_max / step * step;
    t.mq = std::min(most, round_up(ceil_div(t.m, ceil_div(t.m, most)), step));
  }
  t.q_blocks = ceil_div(t.m, t.mq);
  const auto depth = [&](int64_t per_copy, int64_t slot) {
    return static_cast<int>(cap.count * (cap.count > 1 ? std::min(kMaxSlotsPerCopy, per_copy / slot) : 1));
  };
  t.vmem_slots = depth(cap.vmem, t.vmem_slot());
  t.acc_slots = depth(cap.acc, t.acc_slot());
  t.weight_slots = depth(cap.weights, t.weight_slot());
  return t;
}

}  // namespace

std::vector<EntryPlan> plan_entries(const ChipConfig& c, const Workload& w, bool tile) {
  std::vector<EntryPlan> plans(w.gemms.size());
  for (size_t i = 0; i < w.gemms.size(); ++i) {
    if (plans[i].fused_tail) continue;
    if (const VectorWork* sm = attention_softmax(c, w, i)) {
      if (auto t = choose_attention_tiling(c, w.gemms[i], w.gemms[i + 1])) {
        plans[i].fused = t;
        plans[i].softmax = sm;
        plans[i + 1].fused_tail = true;
        continue;
      }
    }
    if (tile) plans[i].tiling = choose_tiling(c, w.gemms[i]);
  }
  return plans;
}

HbmLayout layout_hbm(const ChipConfig& c, const Workload& w, const std::vector<EntryPlan>& plans) {
  HbmLayout l;
  l.entries.resize(w.gemms.size());
  uint64_t transient = 0;
  for (size_t i = 0; i < w.gemms.size(); ++i) {
    const Gemm& g = w.gemms[i];
    const DType a = operands_of(c, g).a;  // inputs and outputs in the activation type
    // A fused chain reads Q (the scores' input) and writes the context (the tail's output).
    if (!plans[i].fused_tail) transient = std::max(transient, align(dtype_storage_bytes(a, g.m * g.k)));
    if (!plans[i].fused) transient = std::max(transient, align(dtype_storage_bytes(a, g.m * g.n)));
  }
  uint64_t next = 2 * transient;
  int side = 0;
  for (size_t i = 0; i < w.gemms.size(); ++i) {
    const Gemm& g = w.gemms[i];
    HbmLayout::Entry& e = l.entries[i];
    if (!plans[i].fused_tail) {
      e.a = side * transient;
      side ^= 1;
    } else {
      e.a = l.entries[i - 1].a;
    }
    e.c = side * transient;
    if (g.weights_of && *g.weights_of < i) {  // the same weights as an earlier entry, held once
      const HbmLayout::Entry& same = l.entries[*g.weights_of];
      e.b = same.b;
      e.b_stride = same.b_stride;
      e.b_group = same.b_group;
      continue;
    }
    if (i > 0 && g.b_from_previous && g.repeat == w.gemms[i - 1].repeat &&
        g.k * g.n <= w.gemms[i - 1].k * w.gemms[i - 1].n) {
      e.b = l.entries[i - 1].b;  // the same tensor (MLA's latent), held once
      e.b_stride = l.entries[i - 1].b_stride;
      e.b_group = l.entries[i - 1].b_group;
      continue;
    }
    e.b_stride = align(dtype_storage_bytes(operands_of(c, g).b, g.k * g.n));  // packed: int4 two per byte
    e.b_group = std::max<int64_t>(1, g.b_group);
    e.b = next;
    const uint64_t held = e.b_stride * static_cast<uint64_t>(ceil_div(g.repeat, e.b_group));  // distinct Bs
    next += held;
    (g.kind == LayerKind::attention ? l.footprint.kv_cache : l.footprint.weights) += held;
  }
  uint64_t exchanged = 0;  // the largest collective's input and receive area
  for (const CollectiveWork& cw : w.collectives) exchanged = std::max(exchanged, align(collective_hbm_bytes(cw)));
  l.collectives = next;
  l.footprint.activations = 2 * transient + exchanged;
  return l;
}

}  // namespace systolic::compile_detail::tiled

namespace systolic::compile_detail {

HbmFootprint hbm_footprint(const ChipConfig& config, const Workload& workload) {
  return tiled::layout_hbm(config, workload, tiled::plan_entries(config, workload, false)).footprint;
}

}  // namespace systolic::compile_detail
