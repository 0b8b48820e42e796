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
#include <stdexcept>

#include "models/mxu/dataflow.hpp"
#include "sim/compile/tiled_internal.hpp"

namespace systolic::compile_detail::tiled {
namespace {

// `op` cut to [lo, hi) of dimension d (clamped to its extent).
MatmulOp slice(MatmulOp op, GemmDim d, int64_t lo, int64_t hi) {
  switch (d) {
    case GemmDim::m: op.m = std::min(hi, op.m) - lo, op.m_offset += lo; break;
    case GemmDim::k: op.k = std::min(hi, op.k) - lo; break;
    case GemmDim::n: op.n = std::min(hi, op.n) - lo, op.n_offset += lo; break;
  }
  return op;
}

}  // namespace

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

Program TiledCompiler::run() {
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

// An activation at `base` with `width` columns of w bytes, tiled or row-major.
ActivationTensor TiledCompiler::activation(uint64_t base, int64_t width, int64_t w, bool tiled) const {
  return {base, width, static_cast<uint64_t>(w), tiled ? activation_tile(config_) : Tile{}};
}

// compile() refused a workload that does not fit the HBM (sim/compile/capacity.hpp), so every
// address of the layout lies inside it.
uint64_t TiledCompiler::b_address(size_t i, int64_t r) const {
  const HbmLayout::Entry& e = hbm_.entries[i];
  return e.b + static_cast<uint64_t>(r / e.b_group) * e.b_stride;
}

// Buffers: the scratchpad splits into equal halves for ping and pong (tiles were chosen to
// fit half), each buffer at the start of its half; fused attention lays its ring slots over
// the same copies.
void TiledCompiler::declare_buffers() {
  uint64_t a_bytes = 0, w_bytes = 0, c_bytes = 0;
  for (size_t i = 0; i < plans_.size(); ++i) {
    const Gemm& g = workload_.gemms[i];
    const Widths ww = widths_of(config_, g);
    const auto per_copy = [&](int depth, int64_t slot) {
      return static_cast<uint64_t>(ceil_div(int64_t{depth}, int64_t{copies_}) * slot);
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
Producer TiledCompiler::producer(int sem, uint64_t per_instance, int64_t instances) const {
  Producer p;
  p.sem = sem;
  p.base = emit_.emitted(sem);
  p.per_instance = per_instance;
  p.instances = instances;
  return p;
}

// Vector work runs on the VPU once the results it reads are stored; the next GEMM's loads
// wait for the VPU's results in turn.
void TiledCompiler::vector(const VectorWork& v) {
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

// Stores an output tile from the accumulators (dense in `to`'s shape) to its block of an HBM
// activation (activation_block), converting to the operand type; it releases the tile and
// counts as a store.
Instruction TiledCompiler::store(int layer, uint64_t w, uint64_t from, const HbmBlock& to) {
  DmaDescriptor d;
  d.element_bytes = w;
  d.shape = to.shape;
  d.src = DmaEndpoint::sram(kAccumulators, from, {1, to.shape[0], 0});
  d.dst = to.hbm;
  return Instruction{DmaOp{d}, layer, {}, {}};
}

// Loads a block of an HBM activation (activation_block) densely into vmem at `to`.
Instruction TiledCompiler::load_rows(int layer, uint64_t w, const HbmBlock& from, uint64_t to) {
  DmaDescriptor d;
  d.element_bytes = w;
  d.shape = from.shape;
  d.src = from.hbm;
  d.dst = DmaEndpoint::sram(kVmem, to, {1, from.shape[0], 0});
  return Instruction{DmaOp{d}, layer, {}, {}};
}

// One GEMM entry. Activations outer (the default): each activation block stays in vmem while
// every weight tile streams past it, so the weights are read once per block of rows. Weights
// outer (Tiling::panel): a panel of weight columns stays in the weight buffer while every
// activation block streams past it, so the activations are read once per panel; the
// compiler takes it when that moves fewer bytes.
void TiledCompiler::gemm(size_t index) {
  const Gemm& g = workload_.gemms[index];
  const Tiling& t = plans_[index].tiling;
  const int layer = static_cast<int>(program_.layers.size());
  program_.layers.push_back(layer_info(config_, g));
  const Widths widths = widths_of(config_, g);
  const ActivationTensor in = activation(hbm_.entries[index].a, g.k, widths.a, layouts_[index].a),
                         out = activation(hbm_.entries[index].c, g.n, widths.a, layouts_[index].c);
  const GemmTiles at{g, t, layer, widths, in, out, feeds_reduce_[index]};
  // Its repeats are independent instances (heads, slots): one may load while another
  // computes; each needs its input from the entry before (`input_`).
  const std::vector<RowBlock> blocks = row_blocks(g, plans_[index]);
  const uint64_t stores_per_instance = blocks.size() * static_cast<uint64_t>((g.n + t.n - 1) / t.n);
  Producer produced = producer(stores_done_, stores_per_instance, g.repeat);
  for (int64_t r = 0; r < g.repeat; ++r) {
    const uint64_t hbm_b = b_address(index, r);
    if (t.panel > 0) {
      for (int64_t p0 = 0; p0 < g.n; p0 += t.panel)
        weight_panel(at, r, hbm_b, p0, std::min(t.panel, g.n - p0), blocks, produced);
      continue;
    }
    for (const RowBlock& block : blocks) {
      const int64_t m0 = block.m0, mt = block.rows;
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
      if (block.last) block_stored(at, produced);
    }
  }
  input_ = produced;
}

// The activation block [mt, K] from row m0 arrives in K slices matching the weight tiles, so
// the MXUs start on the first slice while the rest loads. Slice j sits at k0 * mt in the
// buffer as a dense [mt, kt] matrix (a strided read of the HBM copy: row by row, or by rows of
// tiles).
TiledCompiler::ABlock TiledCompiler::load_a(const GemmTiles& at, int64_t r, int64_t m0, int64_t mt) {
  const uint64_t w = at.w();
  const int copy = static_cast<int>(a_uses_++ % copies_);
  const ABlock a{copy, emit_.emitted(a_.full[copy]), r, m0};
  for (int64_t k0 = 0; k0 < at.g.k; k0 += at.t.k) {
    const int64_t kt = std::min(at.t.k, at.g.k - k0);
    Instruction load =
        load_rows(at.layer, w, activation_block(at.a, m0, k0, mt, kt), a_.offset[a.copy] + k0 * mt * w);
    emit_.wait_all(load, a_.free[a.copy]);
    if (input_.chunks.empty())
      input_.add_wait(load, r, at.g.repeat);
    else
      input_.add_row_wait(load, at.g.m, m0, m0 + mt);
    emit_.signal(load, a_.full[a.copy]);
    emit_.push(EngineKind::dma, act_dma(), std::move(load));
  }
  return a;
}

// Weights are static, so the compiler picks their HBM layout: tile by tile, each [kt, nt]
// tile contiguous (a row-major matrix would make every tile a strided gather hitting a
// fraction of the channels).
Instruction TiledCompiler::load_weights(const GemmTiles& at, uint64_t hbm_b, int64_t k0, int64_t kt, int64_t n0,
                                        int64_t nt, uint64_t to) {
  const uint64_t tile_at = hbm_b + at.widths.b_bytes(n0 * at.g.k + k0 * nt);
  return Instruction{DmaOp{DmaDescriptor::linear(DmaEndpoint::hbm(tile_at), DmaEndpoint::sram(kWeights, to),
                                                 at.widths.b_bytes(kt * nt))},
                     at.layer, {}, {}};
}

// Integer weights under float activations (weight-only quantisation): the VPU widens the tile
// [kt, nt] that `loaded` says has landed to the compute type, in place, one scale multiply a
// value; the MXU waits for that instead. Without dequantisation, `loaded` itself.
SemWait TiledCompiler::dequantize(const GemmTiles& at, int64_t kt, int64_t nt, SemWait loaded) {
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
void TiledCompiler::multiply(const GemmTiles& at, const ABlock& a, int64_t mt, int64_t k0, int64_t kt, int64_t n0,
                             int64_t nt, int qc, SemWait weights_ready, int release, bool last_n) {
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
// out), into their block of the output matrix in HBM.
void TiledCompiler::store_tile(const GemmTiles& at, int64_t mt, int64_t nt, int64_t m0, int64_t n0, int qc) {
  Instruction out = store(at.layer, at.w(), c_.offset[qc], activation_block(at.c, m0, n0, mt, nt));
  emit_.wait_all(out, c_.full[qc]);
  emit_.signal(out, c_.free[qc]);
  emit_.signal(out, stores_done_);
  emit_.push(EngineKind::dma, out_dma(), std::move(out));
}

// Weights outer: the panel of columns [p0, p0 + pn) loads into one weight-buffer copy, tile by
// tile in the order the first activation block uses them (the MXUs start on the first tile);
// then every activation block passes. Each weight DMA engine counts its own tiles (a per-copy,
// per-engine semaphore), since two engines finish theirs in no set order.
void TiledCompiler::weight_panel(const GemmTiles& at, int64_t r, uint64_t hbm_b, int64_t p0, int64_t pn,
                                 const std::vector<RowBlock>& blocks, Producer& produced) {
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
  for (const RowBlock& block : blocks) {
    const int64_t m0 = block.m0, mt = block.rows;
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
    if (block.last && p0 + pn >= g.n) block_stored(at, produced);
  }
}

// Counts the weight tiles DMA engine `engine` has landed in weight-buffer copy `copy`.
int TiledCompiler::panel_full(int copy, int engine) {
  auto [it, added] = panel_full_.try_emplace({copy, engine}, -1);
  if (added) it->second = emit_.sem(fmt::format("wgt_{}_full_dma{}", copy ? "pong" : "ping", engine));
  return it->second;
}

}  // namespace systolic::compile_detail::tiled

namespace systolic::compile_detail {

Program compile_tiled(const ChipConfig& config, const Workload& workload, int chip,
                      CollectiveObserver* observer) {
  return tiled::TiledCompiler(config, workload, chip, observer).run();
}

}  // namespace systolic::compile_detail
