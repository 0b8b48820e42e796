// Lowering with a real memory system. Each GEMM instance is cut into tiles that fit the
// scratchpads: an activation block A[m_t, K] in vmem, weight tiles B[k_t, n_t] in the weight
// buffer, an output tile C[m_t, n_t] in the accumulators. DMA engines move them between HBM
// and the scratchpads; with dma.double_buffer every buffer has a ping and a pong copy, so the
// load of tile t+1 overlaps the MXUs' work on tile t (docs/memory.md).
//
// Attention (scores GEMM -> softmax -> context GEMM) is fused: per instance (head or KV group)
// the keys and values are loaded, a block of query rows at a time the MXUs compute the block's
// scores into the accumulators, the VPU turns them into probabilities in vmem, and the MXUs
// multiply those by the values; only Q, K, V and the context cross HBM (docs/memory.md,
// "Fused attention").
//
// Synchronisation uses monotonic semaphores in producer/consumer pairs per buffer copy:
// the producer of copy p waits until its `free` counter has reached every release emitted so
// far (the previous user is done), the consumer waits until `full` has reached every fill
// emitted so far. Counting emitted signals at compile time gives every threshold.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <stdexcept>

#include "models/common/error.hpp"
#include "models/mxu/dataflow.hpp"
#include "sim/compile/collective.hpp"
#include "sim/compile/detail.hpp"

namespace systolic::compile_detail {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }
uint64_t align(uint64_t a) { return (a + kHbmAlign - 1) / kHbmAlign * kHbmAlign; }

// What one copy of each buffer may use: half of its scratchpad with double buffering (ping
// and pong), all of it without.
struct Copies {
  int count = 1;
  int64_t vmem = 0, weights = 0, acc = 0;
};

Copies copies_of(const ChipConfig& c) {
  const int n = c.dma.double_buffer ? 2 : 1;
  return {n, static_cast<int64_t>(c.sram.vmem.capacity_bytes) / n,
          static_cast<int64_t>(c.sram.weights.capacity_bytes) / n,
          static_cast<int64_t>(c.sram.accumulators.capacity_bytes) / n};
}

// Operand widths (docs/precision.md): A is loaded and C stored in the activation type; B moves
// from HBM in its own (packed) type and sits in the weight buffer as the array reads it (an
// integer B widened by the VPU's dequantise op to the compute type, in place).
struct Widths {
  MxuOperands ops;
  int64_t a = 0;    // bytes per activation (A in vmem, C in HBM)
  int64_t buf = 0;  // bytes per B value in the weight buffer
  uint64_t b_bytes(uint64_t values) const { return dtype_storage_bytes(ops.b, values); }  // B in HBM, packed
};

Widths widths_of(const ChipConfig& c, const Gemm& g) {
  Widths w;
  w.ops = operands_of(c, g);
  w.a = static_cast<int64_t>(dtype_storage_bytes(w.ops.a, 1));
  w.buf = static_cast<int64_t>(dtype_storage_bytes(w.ops.dequantize_b ? w.ops.compute : w.ops.b, 1));
  return w;
}

struct Tiling {
  int64_t m = 0, k = 0, n = 0;
  int64_t panel = 0;  // > 0: weights outer, in panels of this many columns (TiledCompiler::gemm)
};

// Layers with big weights are cut into at least this many weight tiles, so that the first
// load (which nothing can hide) is a small part of the layer.
constexpr int64_t kMinWeightTiles = 16;

Tiling choose_tiling(const ChipConfig& c, const Gemm& g) {
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
  t.m = std::min(g.m, vcap / (g.k * a));
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

// ---------------------------------------------------------------------------------------------
// Fused attention. Per instance, Q [m, dk] x K [dk, n] -> scores, softmax, x V [n, dv] -> O [m, dv].

// Ring slots per buffer copy: with two copies, up to four units of work in flight.
constexpr int64_t kMaxSlotsPerCopy = 2;

struct AttentionTiling {
  int64_t m = 0, dk = 0, n = 0, dv = 0;  // one instance's Q [m, dk], K [dk, n], V [n, dv]
  int64_t w = 0;                         // bytes of Q, probabilities and the context (activations)
  int64_t wkv = 0;                       // bytes of K and V (the KV cache's type)
  int64_t mq = 0, kb = 0;                // query rows and keys per block
  int64_t q_blocks = 0, k_blocks = 0;
  bool resident = false;  // K and V of an instance stay in the weight buffer for all its query blocks
  int vmem_slots = 0, acc_slots = 0, weight_slots = 0;  // ring depths

  int64_t q_bytes() const { return mq * dk * w; }
  int64_t vmem_slot() const { return q_bytes() + mq * kb * w; }  // Q block, probabilities
  int64_t s_bytes() const { return mq * kb * 4; }
  int64_t acc_slot() const { return s_bytes() + mq * dv * 4; }   // scores, context (32-bit)
  int64_t kv_keys() const { return resident ? n : kb; }
  int64_t k_bytes() const { return dk * kv_keys() * wkv; }
  int64_t weight_slot() const { return k_bytes() + kv_keys() * dv * wkv; }  // K, V
};

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
  const VectorWork* found = nullptr;
  for (const VectorWork& v : w.vectors) {
    if (v.after_gemms != i + 1) continue;
    if (found) return nullptr;
    found = &v;
  }
  if (!found || found->op.kind != VectorKind::softmax || found->op.cols != s.n) return nullptr;
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

// How each workload entry is compiled.
struct EntryPlan {
  Tiling tiling;                           // a GEMM on its own
  std::optional<AttentionTiling> fused;    // the scores GEMM of a fused attention chain
  const VectorWork* softmax = nullptr;     // ... and the softmax it absorbs
  bool fused_tail = false;                 // the context GEMM of a fused chain (emitted with it)
};

// `tile`: also choose the tiling of the GEMMs on their own (which throws for one that fits no
// tiling); the HBM layout needs only which chains are fused.
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

// ---------------------------------------------------------------------------------------------
// HBM layout. Two transient regions, each as large as the largest input or output of an entry,
// take the entries' activations in turn (an entry reads one and writes the other, which the next
// entry reads); then every instance of every B operand gets its own region: the weights, and
// the keys and values attention reads (the KV cache); last, the area collectives send from and
// receive into, as large as the largest one needs (an activation too). Regions are 4 KiB aligned.
struct HbmLayout {
  struct Entry {
    uint64_t a = 0, c = 0;         // input and output (transient)
    uint64_t b = 0, b_stride = 0;  // B operand of instance r at b + (r / b_group) * b_stride
    int64_t b_group = 1;           // instances sharing one B (GQA)
  };
  std::vector<Entry> entries;
  HbmFootprint footprint;
  uint64_t collectives = 0;  // where the collectives' area starts
};

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

// Emits instructions and keeps, per semaphore, how many signals have been emitted so far.
class Emitter {
 public:
  Emitter(const ChipConfig& config, Program& p) : config_(config), p_(p) {
    for (int i = 0; i < config.mxu.count; ++i) p_.streams.push_back({{EngineKind::mxu, i}, {}});
    for (int i = 0; i < static_cast<int>(config.dma.engine.engines); ++i)
      p_.streams.push_back({{EngineKind::dma, i}, {}});
    p_.streams.push_back({{EngineKind::vpu, 0}, {}});
  }
  int sem(const std::string& name) {
    p_.semaphores.push_back(name);
    emitted_.push_back(0);
    return static_cast<int>(p_.semaphores.size()) - 1;
  }
  // Wait until every signal emitted so far on `s` has happened.
  void wait_all(Instruction& i, int s) const {
    if (emitted_[s] > 0) i.waits.push_back({s, emitted_[s]});
  }
  void signal(Instruction& i, int s) {
    i.signals.push_back(s);
    ++emitted_[s];
  }
  uint64_t emitted(int s) const { return emitted_[s]; }
  void push(EngineKind kind, int index, Instruction i) {
    // Streams: the MXUs, the DMA engines, the VPU (the ICI engine's, which a collective adds,
    // comes after them all and is filled by compile_collective.cpp).
    const size_t mxus = static_cast<size_t>(config_.mxu.count), dmas = config_.dma.engine.engines;
    size_t base = 0;
    switch (kind) {
      case EngineKind::mxu: base = 0; break;
      case EngineKind::dma: base = mxus; break;
      case EngineKind::vpu: base = mxus + dmas; break;
      case EngineKind::ici: throw std::logic_error("compile: ICI instructions go through compile_collective");
    }
    p_.streams[base + static_cast<size_t>(index)].instructions.push_back(std::move(i));
  }

 private:
  const ChipConfig& config_;
  Program& p_;
  std::vector<uint64_t> emitted_;
};

// Ping/pong copies of one buffer: where each copy lives and its full/free semaphores.
struct Slots {
  int space = 0;
  std::array<uint64_t, 2> offset{};
  std::array<int, 2> full{}, free{};
};

// `op` cut to [lo, hi) of dimension d (clamped to its extent).
MatmulOp slice(MatmulOp op, GemmDim d, int64_t lo, int64_t hi) {
  switch (d) {
    case GemmDim::m: op.m = std::min(hi, op.m) - lo, op.m_offset += lo; break;
    case GemmDim::k: op.k = std::min(hi, op.k) - lo; break;
    case GemmDim::n: op.n = std::min(hi, op.n) - lo, op.n_offset += lo; break;
  }
  return op;
}

// The shares of one matmul [m, k] x [k, n] (output columns from n0) over the MXUs: its column
// folds split among them (the dimension the dataflow lays along the array's columns: N for ws
// and os, M for is). A matmul one column fold wide would leave all MXUs but one idle, so its
// row folds are split instead (ws, is: K, the partial sums adding up in the accumulators;
// os: M). (m0, instance: the rows of the layer instance it computes, for views of the grid.)
std::vector<MatmulOp> mxu_shares(const ChipConfig& c, int64_t m, int64_t k, int64_t n, int64_t n0, DType dt,
                                 int64_t m0, int64_t instance) {
  const ArrayShape array = c.mxu.shape(dt);
  const Dataflow& dataflow = dataflow_of(c.mxu.dataflow);
  const Folds f = dataflow.folds(array, {m, k, n});
  const bool by_rows = f.col_folds == 1 && f.row_folds > 1 && c.mxu.count > 1;
  const GemmDim dim = by_rows ? dataflow.mapping().rows : dataflow.mapping().cols;
  const int64_t folds = by_rows ? f.row_folds : f.col_folds, side = by_rows ? dataflow.fold_rows(array) : array.cols;
  const int64_t parts = std::min<int64_t>(c.mxu.count, folds);
  const MatmulOp whole{m, k, n, n0, dt, m0, instance};
  std::vector<MatmulOp> ops;
  for (int64_t i = 0; i < parts; ++i) {
    const auto [f0, f1] = fold_share(folds, parts, i);
    ops.push_back(slice(whole, dim, f0 * side, f1 * side));
  }
  return ops;
}

// One operand of a fused attention chain in a ring of slots laid over the copies of a buffer:
// slot i in copy i % copies. Each use (a unit of work) takes slot use % depth; a writer waits for
// the slot's previous readers (`free`), readers wait for its writers (`full`). The first writer
// of a slot in the chain also waits for the buffer copy's users before the chain, and the
// slot's last readers release the copy for those after it.
class RingOperand {
 public:
  RingOperand(Emitter& emit, const std::vector<std::pair<int, int>>& sems, const Slots& copy, int copies,
              int depth, uint64_t slot_bytes, uint64_t part_offset, int64_t uses)
      : emit_(emit), sems_(sems), copy_(copy), copies_(copies), depth_(depth), slot_bytes_(slot_bytes),
        part_offset_(part_offset), uses_(uses), used_(static_cast<size_t>(depth), false) {
    for (int p = 0; p < copies; ++p) before_[p] = emit.emitted(copy.free[p]);
  }
  uint64_t offset(int64_t use) const {
    const int s = slot(use);
    return copy_.offset[s % copies_] + static_cast<uint64_t>(s / copies_) * slot_bytes_ + part_offset_;
  }
  // Waits for the writers of `use` (call once per use, before creating them).
  std::vector<SemWait> acquire(int64_t use) {
    const int s = slot(use);
    std::vector<SemWait> waits;
    if (emit_.emitted(sems_[s].second) > 0) waits.push_back({sems_[s].second, emit_.emitted(sems_[s].second)});
    if (!used_[s]) {
      used_[s] = true;
      const int p = s % copies_;
      if (before_[p] > 0) waits.push_back({copy_.free[p], before_[p]});
    }
    return waits;
  }
  int full(int64_t use) const { return sems_[slot(use)].first; }
  // Waits for a reader of `use`: every writer so far.
  std::vector<SemWait> ready(int64_t use) const {
    const int s = full(use);
    if (emit_.emitted(s) == 0) return {};
    return {{s, emit_.emitted(s)}};
  }
  // Signals of the last readers of `use`.
  std::vector<int> release(int64_t use) const {
    std::vector<int> signals{sems_[slot(use)].second};
    if (use + depth_ >= uses_) signals.push_back(copy_.free[slot(use) % copies_]);
    return signals;
  }

 private:
  int slot(int64_t use) const { return static_cast<int>(use % depth_); }
  Emitter& emit_;
  const std::vector<std::pair<int, int>>& sems_;  // full, free per slot
  const Slots& copy_;
  int copies_, depth_;
  uint64_t slot_bytes_, part_offset_;
  int64_t uses_;
  std::vector<bool> used_;
  std::array<uint64_t, 2> before_{};
};

// The shares with their operands' stored types (when they differ from the compute type) and
// the static scales of fp8 ones (docs/precision.md).
std::vector<MatmulOp> typed(std::vector<MatmulOp> shares, const MxuOperands& o, const Gemm& g) {
  const DType b_in_array = o.dequantize_b ? o.compute : o.b;
  for (MatmulOp& op : shares) {
    if (o.a != o.compute) op.a_dtype = o.a;
    if (b_in_array != o.compute) op.b_dtype = b_in_array;
    if (dtype_is_fp8(o.a)) op.a_scale = g.fp8_scale;
    if (dtype_is_fp8(b_in_array)) op.b_scale = g.fp8_scale;
  }
  return shares;
}

void add(Instruction& i, const std::vector<SemWait>& waits) {
  i.waits.insert(i.waits.end(), waits.begin(), waits.end());
}

class TiledCompiler {
 public:
  TiledCompiler(const ChipConfig& config, const Workload& workload, int chip)
      : config_(config), workload_(workload), chip_(chip), emit_(config, program_), copies_(copies_of(config).count),
        dmas_(static_cast<int>(config.dma.engine.engines)), plans_(plan_entries(config, workload, true)),
        hbm_(layout_hbm(config, workload, plans_)) {}

  Program run() {
    declare_buffers();
    const auto vector_work = [&](const VectorWork& v) { vector(v); };
    const auto collective_work = [&](const CollectiveWork& c) { collective(c); };
    for_side_work_after(workload_, 0, vector_work, collective_work);
    for (size_t i = 0; i < workload_.gemms.size(); ++i) {
      if (plans_[i].fused_tail) continue;
      joins_.before_gemm(i, input_);
      if (plans_[i].fused) {
        attention(i);
        ++i;
      } else {
        gemm(i);
      }
      next_gemm_ = i + 1;
      for_side_work_after(workload_, i + 1, vector_work, collective_work);
    }
    return std::move(program_);
  }

 private:
  // Roles spread over the DMA engines: weights stream on one (two when there are four or
  // more engines, alternating tiles), activations load on another, outputs store on a third.
  int weight_dma(int64_t tile) const { return dmas_ >= 4 && tile % 2 ? 3 : 0; }
  int act_dma() const { return 1 % dmas_; }
  int out_dma() const { return 2 % dmas_; }

  // compile() refused a workload that does not fit the HBM (sim/compile/capacity.hpp), so every
  // address of the layout lies inside it.
  uint64_t b_address(size_t i, int64_t r) const {
    const HbmLayout::Entry& e = hbm_.entries[i];
    return e.b + static_cast<uint64_t>(r / e.b_group) * e.b_stride;
  }

  // Buffers: the scratchpad splits into equal halves for ping and pong (tiles were chosen to
  // fit half), each buffer at the start of its half; fused attention lays its ring slots over
  // the same copies.
  void declare_buffers() {
    uint64_t a_bytes = 0, w_bytes = 0, c_bytes = 0;
    for (size_t i = 0; i < plans_.size(); ++i) {
      const Gemm& g = workload_.gemms[i];
      const Widths ww = widths_of(config_, g);
      const auto per_copy = [&](int depth, int64_t slot) {
        return static_cast<uint64_t>(ceil_div(depth, copies_) * slot);
      };
      if (const auto& t = plans_[i].fused) {
        a_bytes = std::max(a_bytes, per_copy(t->vmem_slots, t->vmem_slot()));
        w_bytes = std::max(w_bytes, per_copy(t->weight_slots, t->weight_slot()));
        c_bytes = std::max(c_bytes, per_copy(t->acc_slots, t->acc_slot()));
      } else if (!plans_[i].fused_tail) {
        const Tiling& t = plans_[i].tiling;
        a_bytes = std::max(a_bytes, static_cast<uint64_t>(t.m * g.k * ww.a));
        w_bytes = std::max(w_bytes, static_cast<uint64_t>((t.panel > 0 ? g.k * t.panel : t.k * t.n) * ww.buf));
        c_bytes = std::max(c_bytes, static_cast<uint64_t>(t.m * t.n) * 4);
      }
    }
    const std::array<std::pair<Slots*, uint64_t>, 3> kinds = {{{&a_, a_bytes}, {&b_, w_bytes}, {&c_, c_bytes}}};
    const char* names[] = {"act", "wgt", "acc"};
    for (size_t kind = 0; kind < kinds.size(); ++kind)
      for (int p = 0; p < copies_; ++p) {
        Slots& s = *kinds[kind].first;
        s.offset[p] = p * (config_.sram.all()[static_cast<size_t>(s.space)].capacity_bytes / copies_);
        const std::string name = fmt::format("{}_{}", names[kind], p ? "pong" : "ping");
        program_.buffers.push_back({name, s.space, s.offset[p], kinds[kind].second});
        s.full[p] = emit_.sem(name + "_full");
        s.free[p] = emit_.sem(name + "_free");
      }
    stores_done_ = emit_.sem("outputs_stored");  // output tiles written back to HBM
    vpu_done_ = emit_.sem("vector_done");
  }

  // The entry about to be emitted as the next one's input: `per_instance` signals on `sem` each.
  Producer producer(int sem, uint64_t per_instance, int64_t instances) const {
    Producer p;
    p.sem = sem;
    p.base = emit_.emitted(sem);
    p.per_instance = per_instance;
    p.instances = instances;
    return p;
  }

  // Vector work runs on the VPU once the results it reads are stored; the next GEMM's loads
  // wait for the VPU's results in turn.
  void vector(const VectorWork& v) {
    const int layer = static_cast<int>(program_.layers.size());
    program_.layers.push_back(vector_layer_info(v));
    const Producer produced = producer(vpu_done_, 1, v.repeat);
    for (int64_t r = 0; r < v.repeat; ++r) {
      Instruction instr{v.op, layer, {}, {}};
      input_.add_wait(instr, r, v.repeat);
      emit_.signal(instr, vpu_done_);
      emit_.push(EngineKind::vpu, 0, std::move(instr));
    }
    input_ = produced;
  }

  // Stores an output tile [rows, cols] from the accumulators to row-major HBM (row stride
  // `stride`), converting to the operand type; it releases the tile and counts as a store.
  Instruction store(int layer, uint64_t w, int64_t rows, int64_t cols, uint64_t from, uint64_t to, uint64_t stride) {
    DmaDescriptor d;
    d.element_bytes = w;
    d.shape = {static_cast<uint64_t>(cols), static_cast<uint64_t>(rows), 1};
    d.src = DmaEndpoint::sram(kAccumulators, from, {1, static_cast<uint64_t>(cols), 0});
    d.dst = DmaEndpoint::hbm(to, {1, stride, 0});
    return Instruction{DmaOp{d}, layer, {}, {}};
  }

  // Loads rows [rows, cols] of a row-major HBM matrix (row stride `stride`) densely into vmem.
  Instruction load_rows(int layer, uint64_t w, int64_t rows, int64_t cols, uint64_t from, uint64_t stride, uint64_t to) {
    DmaDescriptor d;
    d.element_bytes = w;
    d.shape = {static_cast<uint64_t>(cols), static_cast<uint64_t>(rows), 1};
    d.src = DmaEndpoint::hbm(from, {1, stride, 0});
    d.dst = DmaEndpoint::sram(kVmem, to, {1, static_cast<uint64_t>(cols), 0});
    return Instruction{DmaOp{d}, layer, {}, {}};
  }

  // One GEMM entry. Activations outer (the default): each activation block stays in vmem while
  // every weight tile streams past it, so the weights are read once per block of rows. Weights
  // outer (Tiling::panel): a panel of weight columns stays in the weight buffer while every
  // activation block streams past it, so the activations are read once per panel; the
  // compiler takes it when that moves fewer bytes.
  void gemm(size_t index) {
    const Gemm& g = workload_.gemms[index];
    const Tiling& t = plans_[index].tiling;
    const int layer = static_cast<int>(program_.layers.size());
    program_.layers.push_back(layer_info(config_, g));
    const GemmTiles at{g, t, layer, widths_of(config_, g), hbm_.entries[index].a, hbm_.entries[index].c};
    // Its repeats are independent instances (heads, slots): one may load while another
    // computes; each needs its input from the entry before (`input_`).
    const uint64_t stores_per_instance =
        static_cast<uint64_t>((g.m + t.m - 1) / t.m) * static_cast<uint64_t>((g.n + t.n - 1) / t.n);
    const Producer produced = producer(stores_done_, stores_per_instance, g.repeat);
    for (int64_t r = 0; r < g.repeat; ++r) {
      const uint64_t hbm_b = b_address(index, r);
      if (t.panel > 0) {
        for (int64_t p0 = 0; p0 < g.n; p0 += t.panel) weight_panel(at, r, hbm_b, p0, std::min(t.panel, g.n - p0));
        continue;
      }
      for (int64_t m0 = 0; m0 < g.m; m0 += t.m) {
        const int64_t mt = std::min(t.m, g.m - m0);
        const ABlock a = load_a(at, r, m0, mt);
        for (int64_t n0 = 0; n0 < g.n; n0 += t.n) {
          const int64_t nt = std::min(t.n, g.n - n0);
          const int qc = static_cast<int>(c_uses_++ % copies_);
          for (int64_t k0 = 0; k0 < g.k; k0 += t.k) {
            const int64_t kt = std::min(t.k, g.k - k0);
            const int64_t tile = w_uses_++;
            const int qb = static_cast<int>(tile % copies_);
            Instruction load_b = load_weights(at, hbm_b, k0, kt, n0, nt, b_.offset[qb]);
            emit_.wait_all(load_b, b_.free[qb]);
            emit_.signal(load_b, b_.full[qb]);
            emit_.push(EngineKind::dma, weight_dma(tile), std::move(load_b));
            SemWait ready = dequantize(at, kt, nt, {b_.full[qb], emit_.emitted(b_.full[qb])});
            multiply(at, a, mt, k0, kt, n0, nt, qc, ready, b_.free[qb], n0 + nt >= g.n);
          }
          store_tile(at, mt, nt, m0, n0, qc);
        }
      }
    }
    input_ = produced;
  }

  // What the loops of one GEMM entry share.
  struct GemmTiles {
    const Gemm& g;
    const Tiling& t;
    int layer;
    Widths widths;
    uint64_t hbm_a, hbm_c;
    uint64_t w() const { return static_cast<uint64_t>(widths.a); }  // A and C
  };
  struct ABlock {
    int copy = 0;
    uint64_t base = 0;     // fills of the copy before this block
    int64_t instance = 0;  // the layer instance and first row it holds
    int64_t m0 = 0;
  };

  // The activation block [mt, K] from row m0 arrives in K slices matching the weight tiles, so
  // the MXUs start on the first slice while the rest loads. Slice j sits at k0 * mt in the
  // buffer as a dense [mt, kt] matrix (a strided read of the row-major HBM copy).
  ABlock load_a(const GemmTiles& at, int64_t r, int64_t m0, int64_t mt) {
    const uint64_t K = at.g.k, w = at.w();
    const int copy = static_cast<int>(a_uses_++ % copies_);
    const ABlock a{copy, emit_.emitted(a_.full[copy]), r, m0};
    for (int64_t k0 = 0; k0 < at.g.k; k0 += at.t.k) {
      const int64_t kt = std::min(at.t.k, at.g.k - k0);
      Instruction load = load_rows(at.layer, w, mt, kt, at.hbm_a + (m0 * K + k0) * w, K, a_.offset[a.copy] + k0 * mt * w);
      emit_.wait_all(load, a_.free[a.copy]);
      input_.add_wait(load, r, at.g.repeat);
      emit_.signal(load, a_.full[a.copy]);
      emit_.push(EngineKind::dma, act_dma(), std::move(load));
    }
    return a;
  }

  // Weights are static, so the compiler picks their HBM layout: tile by tile, each [kt, nt]
  // tile contiguous (a row-major matrix would make every tile a strided gather hitting a
  // fraction of the channels).
  Instruction load_weights(const GemmTiles& at, uint64_t hbm_b, int64_t k0, int64_t kt, int64_t n0, int64_t nt,
                           uint64_t to) {
    const uint64_t tile_at = hbm_b + at.widths.b_bytes(n0 * at.g.k + k0 * nt);
    return Instruction{DmaOp{DmaDescriptor::linear(DmaEndpoint::hbm(tile_at), DmaEndpoint::sram(kWeights, to),
                                                   at.widths.b_bytes(kt * nt))},
                       at.layer, {}, {}};
  }

  // Integer weights under float activations (weight-only quantisation): the VPU widens the tile
  // [kt, nt] that `loaded` says has landed to the compute type, in place, one scale multiply a
  // value; the MXU waits for that instead. Without dequantisation, `loaded` itself.
  SemWait dequantize(const GemmTiles& at, int64_t kt, int64_t nt, SemWait loaded) {
    if (!at.widths.ops.dequantize_b) return loaded;
    if (dequantized_ < 0) dequantized_ = emit_.sem("weights_dequantized");
    VpuOp op{VectorKind::dequantize, kt, nt, at.widths.ops.b};
    op.to_dtype = at.widths.ops.compute;
    Instruction widen{op, at.layer, {loaded}, {}};
    emit_.signal(widen, dequantized_);
    emit_.push(EngineKind::vpu, 0, std::move(widen));
    return {dequantized_, emit_.emitted(dequantized_)};
  }

  // The MXUs' shares of the weight tile [kt, nt] at (k0, n0) against the activation block's
  // slice k0, into output copy qc; `weights_ready` says when the tile has arrived, the shares
  // signal `release` (-1: none) when done with it.
  void multiply(const GemmTiles& at, const ABlock& a, int64_t mt, int64_t k0, int64_t kt, int64_t n0, int64_t nt,
                int qc, SemWait weights_ready, int release, bool last_n) {
    const bool first_k = k0 == 0, last_k = k0 + kt >= at.g.k;
    const std::vector<MatmulOp> shares =
        typed(mxu_shares(config_, mt, kt, nt, n0, at.widths.ops.compute, a.m0, a.instance), at.widths.ops, at.g);
    for (size_t i = 0; i < shares.size(); ++i) {
      Instruction mm{shares[i], at.layer, {}, {}};
      mm.waits.push_back({a_.full[a.copy], a.base + static_cast<uint64_t>(k0 / at.t.k) + 1});
      if (weights_ready.at_least > 0) mm.waits.push_back(weights_ready);
      if (first_k) emit_.wait_all(mm, c_.free[qc]);
      if (release >= 0) emit_.signal(mm, release);
      if (last_k) emit_.signal(mm, c_.full[qc]);
      if (last_k && last_n) emit_.signal(mm, a_.free[a.copy]);
      emit_.push(EngineKind::mxu, static_cast<int>(i), std::move(mm));
    }
  }

  // Results leave in the operand type (the accumulators' fp32/int32 is converted on the way
  // out), row by row into the output matrix in HBM.
  void store_tile(const GemmTiles& at, int64_t mt, int64_t nt, int64_t m0, int64_t n0, int qc) {
    const uint64_t N = at.g.n, w = at.w();
    Instruction out = store(at.layer, w, mt, nt, c_.offset[qc], at.hbm_c + (m0 * N + n0) * w, N);
    emit_.wait_all(out, c_.full[qc]);
    emit_.signal(out, c_.free[qc]);
    emit_.signal(out, stores_done_);
    emit_.push(EngineKind::dma, out_dma(), std::move(out));
  }

  // Weights outer: the panel of columns [p0, p0 + pn) loads into one weight-buffer copy, tile by
  // tile in the order the first activation block uses them (the MXUs start on the first tile);
  // then every activation block passes. Each weight DMA engine counts its own tiles (a per-copy,
  // per-engine semaphore), since two engines finish theirs in no set order.
  void weight_panel(const GemmTiles& at, int64_t r, uint64_t hbm_b, int64_t p0, int64_t pn) {
    const Gemm& g = at.g;
    const Tiling& t = at.t;
    const int qb = static_cast<int>(w_uses_++ % copies_);
    std::vector<SemWait> ready;  // per tile
    const uint64_t released = emit_.emitted(b_.free[qb]);
    uint64_t offset = b_.offset[qb];
    for (int64_t n0 = p0; n0 < p0 + pn; n0 += t.n)
      for (int64_t k0 = 0; k0 < g.k; k0 += t.k) {
        const int64_t nt = std::min(t.n, p0 + pn - n0), kt = std::min(t.k, g.k - k0);
        const int engine = weight_dma(panel_tiles_++);
        const int full = panel_full(qb, engine);
        Instruction load = load_weights(at, hbm_b, k0, kt, n0, nt, offset);
        if (released > 0) load.waits.push_back({b_.free[qb], released});  // the copy's last users
        emit_.signal(load, full);
        emit_.push(EngineKind::dma, engine, std::move(load));
        ready.push_back(dequantize(at, kt, nt, {full, emit_.emitted(full)}));
        offset += static_cast<uint64_t>(kt * nt * at.widths.buf);
      }
    for (int64_t m0 = 0; m0 < g.m; m0 += t.m) {
      const int64_t mt = std::min(t.m, g.m - m0);
      const bool last_m = m0 + mt >= g.m;
      const ABlock a = load_a(at, r, m0, mt);
      size_t tile = 0;
      for (int64_t n0 = p0; n0 < p0 + pn; n0 += t.n) {
        const int64_t nt = std::min(t.n, p0 + pn - n0);
        const int qc = static_cast<int>(c_uses_++ % copies_);
        for (int64_t k0 = 0; k0 < g.k; k0 += t.k)
          multiply(at, a, mt, k0, std::min(t.k, g.k - k0), n0, nt, qc, ready[tile++],
                   last_m ? b_.free[qb] : -1, n0 + nt >= p0 + pn);
        store_tile(at, mt, nt, m0, n0, qc);
      }
    }
  }
  // Counts the weight tiles DMA engine `engine` has landed in weight-buffer copy `copy`.
  int panel_full(int copy, int engine) {
    auto [it, added] = panel_full_.try_emplace({copy, engine}, -1);
    if (added) it->second = emit_.sem(fmt::format("wgt_{}_full_dma{}", copy ? "pong" : "ping", engine));
    return it->second;
  }

  // Full/free semaphore pairs of one ring operand, at least `depth` of them.
  const std::vector<std::pair<int, int>>& ring(const std::string& name, int depth) {
    auto& sems = rings_[name];
    while (static_cast<int>(sems.size()) < depth) {
      const std::string base = fmt::format("attn_{}{}", name, sems.size());
      const int full = emit_.sem(base + "_full");
      sems.emplace_back(full, emit_.sem(base + "_free"));
    }
    return sems;
  }

  // Semaphores `name`0, 1, ... (at least `depth`), counting one event per slot.
  const std::vector<int>& counters(const std::string& name, int depth) {
    auto& sems = counters_[name];
    while (static_cast<int>(sems.size()) < depth) sems.push_back(emit_.sem(fmt::format("attn_{}{}", name, sems.size())));
    return sems;
  }

  // Instructions of one block that the MXU streams take after the next block's scores, so the
  // MXUs compute scores while the VPU turns the previous block's into probabilities.
  struct Deferred {
    std::vector<std::pair<int, Instruction>> mxu;
    std::vector<Instruction> vpu, out;
  };
  void flush(Deferred& d) {
    for (auto& [unit, instr] : d.mxu) emit_.push(EngineKind::mxu, unit, std::move(instr));
    for (auto& instr : d.vpu) emit_.push(EngineKind::vpu, 0, std::move(instr));
    for (auto& instr : d.out) emit_.push(EngineKind::dma, out_dma(), std::move(instr));
    d = {};
  }
  // Small matmuls take the MXUs in turn, so independent instances run side by side.
  int next_mxu(size_t share) const { return static_cast<int>((mxu_turn_ + share) % config_.mxu.count); }

  // The scores GEMM `index`, its softmax and the context GEMM after it, fused (file comment).
  void attention(size_t index) {
    const Gemm &gs = workload_.gemms[index], &go = workload_.gemms[index + 1];
    const AttentionTiling& t = *plans_[index].fused;
    const int ls = static_cast<int>(program_.layers.size());
    program_.layers.push_back(layer_info(config_, gs));
    program_.layers.push_back(vector_layer_info(*plans_[index].softmax));
    program_.layers.push_back(layer_info(config_, go));
    const int lv = ls + 1, lo = ls + 2;
    const MxuOperands ops = operands_of(config_, gs);
    const DType dt = ops.compute;
    const uint64_t w = static_cast<uint64_t>(t.w), wkv = static_cast<uint64_t>(t.wkv);
    const int64_t units = gs.repeat * t.q_blocks, blocks = units * t.k_blocks;
    const int64_t fills = t.resident ? gs.repeat : blocks;
    const uint64_t vslot = t.vmem_slot(), aslot = t.acc_slot(), wslot = t.weight_slot();
    RingOperand q(emit_, ring("q", t.vmem_slots), a_, copies_, t.vmem_slots, vslot, 0, units);
    RingOperand p(emit_, ring("p", t.vmem_slots), a_, copies_, t.vmem_slots, vslot, t.q_bytes(), blocks);
    RingOperand s(emit_, ring("s", t.acc_slots), c_, copies_, t.acc_slots, aslot, 0, blocks);
    RingOperand o(emit_, ring("o", t.acc_slots), c_, copies_, t.acc_slots, aslot, t.s_bytes(), units);
    RingOperand k(emit_, ring("k", t.weight_slots), b_, copies_, t.weight_slots, wslot, 0, fills);
    // MLA decode: V is the latent the keys came from (its first dv columns), already in the
    // weight buffer: the context reads K's slot, and the slot is freed after the context.
    const bool v_is_k = go.b_from_previous && t.dv <= t.dk;
    std::optional<RingOperand> v;
    if (!v_is_k) v.emplace(emit_, ring("v", t.weight_slots), b_, copies_, t.weight_slots, wslot, t.k_bytes(), fills);
    RingOperand& values = v_is_k ? k : *v;
    // With several key blocks the softmax is online: the VPU rescales the context accumulated so
    // far before each further block adds to it, and scales it by 1 / sum at the end.
    const std::vector<int>& scaled = counters("o_scaled", t.acc_slots);
    const uint64_t hq = hbm_.entries[index].a, ho = hbm_.entries[index + 1].c;
    const uint64_t dk = t.dk, dv = t.dv;
    const Producer produced = producer(stores_done_, static_cast<uint64_t>(t.q_blocks), gs.repeat);
    Deferred deferred;
    int64_t unit = 0, block = 0, fill = 0;
    for (int64_t r = 0; r < gs.repeat; ++r) {
      const uint64_t hk = b_address(index, r), hv = b_address(index + 1, r);
      // Keys [k0, k0 + kn) of K (stored key block by key block) or V (row-major) into the
      // slot of fill f. A DMA engine runs its loads in order and a V load may wait for the
      // context of an earlier fill, which the MXUs compute after the next scores: so each V
      // load goes after the K and Q loads those scores need.
      const auto load_kv = [&](int part, int64_t f, int64_t k0, int64_t kn) {
        RingOperand& x = part ? values : k;
        const uint64_t width = part ? dv : dk;
        Instruction load{DmaOp{DmaDescriptor::linear(DmaEndpoint::hbm((part ? hv : hk) + k0 * width * wkv),
                                                     DmaEndpoint::sram(kWeights, x.offset(f)), width * kn * wkv)},
                         part ? lo : ls, x.acquire(f), {}};
        input_.add_wait(load, r, gs.repeat);
        emit_.signal(load, x.full(f));
        emit_.push(EngineKind::dma, weight_dma(2 * f + part), std::move(load));
      };
      const int64_t resident = t.resident ? fill++ : -1;
      if (t.resident) load_kv(0, resident, 0, t.n);
      const bool load_v = !v_is_k;
      for (int64_t qb = 0; qb < t.q_blocks; ++qb) {
        const int64_t m0 = qb * t.mq, mt = std::min(t.mq, t.m - m0), u = unit++;
        Instruction load_q = load_rows(ls, w, mt, t.dk, hq + m0 * dk * w, dk, q.offset(u));
        add(load_q, q.acquire(u));
        input_.add_wait(load_q, r, gs.repeat);
        emit_.signal(load_q, q.full(u));
        emit_.push(EngineKind::dma, act_dma(), std::move(load_q));
        if (t.resident && qb == 0 && load_v) load_kv(1, resident, 0, t.n);
        for (int64_t j = 0; j < t.k_blocks; ++j) {
          const int64_t k0 = j * t.kb, kn = std::min(t.kb, t.n - k0), b = block++;
          const int64_t f = t.resident ? resident : fill++;
          if (!t.resident)
            for (int part = 0; part < (load_v ? 2 : 1); ++part) load_kv(part, f, k0, kn);
          const bool last_k = j + 1 == t.k_blocks, last_use_of_kv = !t.resident || (last_k && qb + 1 == t.q_blocks);
          // Scores of the block into the accumulators.
          const std::vector<SemWait> s_free = s.acquire(b), q_ready = q.ready(u), k_ready = k.ready(f);
          const std::vector<MatmulOp> scores = typed(mxu_shares(config_, mt, t.dk, kn, k0, dt, m0, r), ops, gs);
          for (size_t i = 0; i < scores.size(); ++i) {
            Instruction mm{scores[i], ls, s_free, {}};
            add(mm, q_ready);
            add(mm, k_ready);
            emit_.signal(mm, s.full(b));
            if (last_k)
              for (int sig : q.release(u)) emit_.signal(mm, sig);
            if (last_use_of_kv && !v_is_k)
              for (int sig : k.release(f)) emit_.signal(mm, sig);
            emit_.push(EngineKind::mxu, next_mxu(i), std::move(mm));
          }
          mxu_turn_ += scores.size();
          // Probabilities into vmem.
          Instruction softmax{VpuOp{VectorKind::softmax, mt, kn, dt}, lv, s.ready(b), {}};
          softmax.frees = region(kAccumulators, s.offset(b), static_cast<uint64_t>(mt * kn) * 4, s.full(b));
          add(softmax, p.acquire(b));
          for (int sig : s.release(b)) emit_.signal(softmax, sig);
          emit_.signal(softmax, p.full(b));
          emit_.push(EngineKind::vpu, 0, std::move(softmax));
          flush(deferred);
          const int so = scaled[static_cast<size_t>(u % t.acc_slots)];
          std::vector<SemWait> o_free;
          if (j == 0) {
            o_free = o.acquire(u);
          } else {
            Instruction rescale{VpuOp{VectorKind::mul, mt, t.dv, dt}, lv, o.ready(u), {}};
            emit_.signal(rescale, so);
            emit_.push(EngineKind::vpu, 0, std::move(rescale));
            o_free = {{so, emit_.emitted(so)}};
          }
          // Context: probabilities x values, accumulated over the key blocks.
          const std::vector<SemWait> p_ready = p.ready(b), v_ready = values.ready(f);
          const int probabilities = region(kVmem, p.offset(b), static_cast<uint64_t>(mt * kn) * w, p.full(b));
          const std::vector<MatmulOp> context = typed(mxu_shares(config_, mt, kn, t.dv, 0, dt, m0, r), ops, go);
          for (size_t i = 0; i < context.size(); ++i) {
            Instruction mm{context[i], lo, o_free, {}};
            mm.frees = probabilities;
            add(mm, p_ready);
            add(mm, v_ready);
            for (int sig : p.release(b)) emit_.signal(mm, sig);
            if (last_use_of_kv)
              for (int sig : values.release(f)) emit_.signal(mm, sig);
            emit_.signal(mm, o.full(u));
            deferred.mxu.emplace_back(next_mxu(i), std::move(mm));
          }
          mxu_turn_ += context.size();
          if (!last_k) continue;
          std::vector<SemWait> o_ready = o.ready(u);
          if (t.k_blocks > 1) {
            Instruction scale{VpuOp{VectorKind::mul, mt, t.dv, dt}, lv, o_ready, {}};
            emit_.signal(scale, so);
            deferred.vpu.push_back(std::move(scale));
            o_ready = {{so, emit_.emitted(so)}};
          }
          Instruction out = store(lo, w, mt, t.dv, o.offset(u), ho + m0 * dv * w, dv);
          add(out, o_ready);
          for (int sig : o.release(u)) emit_.signal(out, sig);
          emit_.signal(out, stores_done_);
          deferred.out.push_back(std::move(out));
        }
      }
    }
    flush(deferred);
    input_ = produced;
  }

  // An on-chip intermediate for Instruction::frees.
  int region(int space, uint64_t offset, uint64_t bytes, int full_sem) {
    program_.regions.push_back({space, offset, bytes, full_sem});
    return static_cast<int>(program_.regions.size()) - 1;
  }

  // Collectives move HBM to HBM, through the area the layout keeps past the workload's tensors.
  void collective(const CollectiveWork& c) {
    CollectiveTarget target{program_, config_, chip_, [&](const std::string& name) { return emit_.sem(name); },
                            hbm_.collectives};
    input_ = joins_.after(c, next_gemm_, input_, emit_collective(target, c, input_));
  }

  const ChipConfig& config_;
  const Workload& workload_;
  int chip_;
  Program program_;
  Emitter emit_;
  int copies_, dmas_;
  std::vector<EntryPlan> plans_;
  HbmLayout hbm_;
  Slots a_{kVmem}, b_{kWeights}, c_{kAccumulators};
  int stores_done_ = -1, vpu_done_ = -1;
  int dequantized_ = -1;  // weight tiles widened by the VPU (created by the first)
  int64_t a_uses_ = 0, w_uses_ = 0, c_uses_ = 0;  // fills of each buffer so far: copy = uses % copies
  size_t mxu_turn_ = 0;
  std::map<std::string, std::vector<std::pair<int, int>>> rings_;
  std::map<std::string, std::vector<int>> counters_;
  std::map<std::pair<int, int>, int> panel_full_;  // weight copy, DMA engine -> semaphore
  int64_t panel_tiles_ = 0;                        // weight tiles loaded in panels so far
  // Each entry reads what the entry before it produced (Producer: instance by instance when
  // both have as many instances).
  Producer input_;
  CollectiveJoins joins_;
  size_t next_gemm_ = 0;  // the GEMM after the side work being emitted
};

}  // namespace

HbmFootprint hbm_footprint(const ChipConfig& config, const Workload& workload) {
  return layout_hbm(config, workload, plan_entries(config, workload, false)).footprint;
}

Program compile_tiled(const ChipConfig& config, const Workload& workload, int chip) {
  return TiledCompiler(config, workload, chip).run();
}

}  // namespace systolic::compile_detail
