// Fused attention in the tiled compiler (tiled.cpp's file comment): per instance the keys and
// values are loaded, then a block of query rows at a time the MXUs compute the block's scores,
// the VPU turns them into probabilities and the MXUs multiply those by the values.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

#include "sim/compile/tiled_internal.hpp"

namespace systolic::compile_detail::tiled {

// Full/free semaphore pairs of one ring operand, at least `depth` of them.
const std::vector<std::pair<int, int>>& TiledCompiler::ring(const std::string& name, int depth) {
  auto& sems = rings_[name];
  while (static_cast<int>(sems.size()) < depth) {
    const std::string base = fmt::format("attn_{}{}", name, sems.size());
    const int full = emit_.sem(base + "_full");
    sems.emplace_back(full, emit_.sem(base + "_free"));
  }
  return sems;
}

// Semaphores `name`0, 1, ... (at least `depth`), counting one event per slot.
const std::vector<int>& TiledCompiler::counters(const std::string& name, int depth) {
  auto& sems = counters_[name];
  while (static_cast<int>(sems.size()) < depth) sems.push_back(emit_.sem(fmt::format("attn_{}{}", name, sems.size())));
  return sems;
}

void TiledCompiler::flush(Deferred& d) {
  for (auto& [unit, instr] : d.mxu) emit_.push(EngineKind::mxu, unit, std::move(instr));
  for (auto& instr : d.vpu) emit_.push(EngineKind::vpu, 0, std::move(instr));
  for (auto& instr : d.out) emit_.push(EngineKind::dma, out_dma(), std::move(instr));
  d = {};
}

// One fused chain being emitted: its GEMMs and layers, the ring operands its blocks pass
// through, and how many units (query blocks), blocks (query x key blocks) and fills of the
// weight buffer (key/value loads) it has emitted so far.
struct TiledCompiler::AttentionChain {
  AttentionChain(TiledCompiler& tc, size_t index)
      : gs(tc.workload_.gemms[index]), go(tc.workload_.gemms[index + 1]), t(*tc.plans_[index].fused),
        ls(static_cast<int>(tc.program_.layers.size())), lv(ls + 1), lo(ls + 2), ops(operands_of(tc.config_, gs)),
        dt(ops.compute), w(static_cast<uint64_t>(t.w)), wkv(static_cast<uint64_t>(t.wkv)),
        units(gs.repeat * t.q_blocks), blocks(units * t.k_blocks),
        q(tc.emit_, tc.ring("q", t.vmem_slots), tc.a_, tc.copies_, t.vmem_slots, t.vmem_slot(), 0, units),
        p(tc.emit_, tc.ring("p", t.vmem_slots), tc.a_, tc.copies_, t.vmem_slots, t.vmem_slot(), t.q_bytes(), blocks),
        s(tc.emit_, tc.ring("s", t.acc_slots), tc.c_, tc.copies_, t.acc_slots, t.acc_slot(), 0, blocks),
        o(tc.emit_, tc.ring("o", t.acc_slots), tc.c_, tc.copies_, t.acc_slots, t.acc_slot(), t.s_bytes(), units),
        k(tc.emit_, tc.ring("k", t.weight_slots), tc.b_, tc.copies_, t.weight_slots, t.weight_slot(), 0, fills()),
        // MLA decode: V is the latent the keys came from (its first dv columns), already in the
        // weight buffer: the context reads K's slot, and the slot is freed after the context.
        v_is_k(go.b_from_previous && t.dv <= t.dk), hq(tc.hbm_.entries[index].a), ho(tc.hbm_.entries[index + 1].c) {
    if (!v_is_k)
      v.emplace(tc.emit_, tc.ring("v", t.weight_slots), tc.b_, tc.copies_, t.weight_slots, t.weight_slot(),
                t.k_bytes(), fills());
    // With several key blocks the softmax is online: the VPU rescales the context accumulated so
    // far before each further block adds to it, and scales it by 1 / sum at the end.
    scaled = &tc.counters("o_scaled", t.acc_slots);
  }
  int64_t fills() const { return t.resident ? gs.repeat : blocks; }
  RingOperand& values() { return v_is_k ? k : *v; }
  int scaled_sem(int64_t u) const { return (*scaled)[static_cast<size_t>(u % t.acc_slots)]; }

  const Gemm &gs, &go;
  const AttentionTiling& t;
  const int ls, lv, lo;  // layers: scores, softmax, context
  const MxuOperands ops;
  const DType dt;
  const uint64_t w, wkv;
  const int64_t units, blocks;
  RingOperand q, p, s, o, k;
  std::optional<RingOperand> v;
  const bool v_is_k;
  const std::vector<int>* scaled = nullptr;
  const uint64_t hq, ho;  // Q in, the context out
  uint64_t hk = 0, hv = 0;  // K and V of the instance being emitted
  Deferred deferred;
  int64_t unit = 0, block = 0, fill = 0;
};

// One block: query rows [m0, m0 + mt) of instance r against keys [k0, k0 + kn); unit u, block
// b, weight-buffer fill f.
struct TiledCompiler::AttentionBlock {
  int64_t r, m0, mt, u, j, k0, kn, b, f;
  bool last_k, last_use_of_kv;
};

// The scores GEMM `index`, its softmax and the context GEMM after it, fused (file comment).
void TiledCompiler::attention(size_t index) {
  AttentionChain c(*this, index);
  program_.layers.push_back(layer_info(config_, c.gs));
  program_.layers.push_back(vector_layer_info(*plans_[index].softmax));
  program_.layers.push_back(layer_info(config_, c.go));
  const Producer produced = producer(stores_done_, static_cast<uint64_t>(c.t.q_blocks), c.gs.repeat);
  for (int64_t r = 0; r < c.gs.repeat; ++r) {
    c.hk = b_address(index, r), c.hv = b_address(index + 1, r);
    const int64_t resident = c.t.resident ? c.fill++ : -1;
    if (c.t.resident) load_kv(c, r, 0, resident, 0, c.t.n);
    for (int64_t qb = 0; qb < c.t.q_blocks; ++qb) attention_query_block(c, r, qb, resident);
  }
  flush(c.deferred);
  input_ = produced;
}

// Keys [k0, k0 + kn) of K (stored key block by key block) or V (row-major) into the slot of
// fill f. A DMA engine runs its loads in order and a V load may wait for the context of an
// earlier fill, which the MXUs compute after the next scores: so each V load goes after the K
// and Q loads those scores need.
void TiledCompiler::load_kv(AttentionChain& c, int64_t r, int part, int64_t f, int64_t k0, int64_t kn) {
  RingOperand& x = part ? c.values() : c.k;
  const uint64_t width = static_cast<uint64_t>(part ? c.t.dv : c.t.dk);
  Instruction load{DmaOp{DmaDescriptor::linear(DmaEndpoint::hbm((part ? c.hv : c.hk) + k0 * width * c.wkv),
                                               DmaEndpoint::sram(kWeights, x.offset(f)), width * kn * c.wkv)},
                   part ? c.lo : c.ls, x.acquire(f), {}};
  input_.add_wait(load, r, c.gs.repeat);
  emit_.signal(load, x.full(f));
  emit_.push(EngineKind::dma, weight_dma(2 * f + part), std::move(load));
}

// Query block qb of instance r: its rows load, then each key block passes (with resident K
// and V, the keys were loaded with the instance and the values follow the first query block).
void TiledCompiler::attention_query_block(AttentionChain& c, int64_t r, int64_t qb, int64_t resident) {
  const AttentionTiling& t = c.t;
  const int64_t m0 = qb * t.mq, mt = std::min(t.mq, t.m - m0), u = c.unit++;
  Instruction load_q =
      load_rows(c.ls, c.w, activation_block({c.hq, t.dk, c.w}, m0, 0, mt, t.dk), c.q.offset(u));
  add(load_q, c.q.acquire(u));
  input_.add_wait(load_q, r, c.gs.repeat);
  emit_.signal(load_q, c.q.full(u));
  emit_.push(EngineKind::dma, act_dma(), std::move(load_q));
  const bool load_v = !c.v_is_k;
  if (t.resident && qb == 0 && load_v) load_kv(c, r, 1, resident, 0, t.n);
  for (int64_t j = 0; j < t.k_blocks; ++j) {
    const int64_t k0 = j * t.kb, kn = std::min(t.kb, t.n - k0), b = c.block++;
    const int64_t f = t.resident ? resident : c.fill++;
    if (!t.resident)
      for (int part = 0; part < (load_v ? 2 : 1); ++part) load_kv(c, r, part, f, k0, kn);
    const bool last_k = j + 1 == t.k_blocks;
    const AttentionBlock blk{r, m0, mt, u, j, k0, kn, b, f, last_k, !t.resident || (last_k && qb + 1 == t.q_blocks)};
    attention_scores(c, blk);
    attention_probabilities(c, blk);
    flush(c.deferred);
    attention_context(c, blk);
    if (last_k) attention_store(c, blk);
  }
}

// Scores of the block into the accumulators.
void TiledCompiler::attention_scores(AttentionChain& c, const AttentionBlock& b) {
  const std::vector<SemWait> s_free = c.s.acquire(b.b), q_ready = c.q.ready(b.u), k_ready = c.k.ready(b.f);
  const std::vector<MatmulOp> scores =
      typed(mxu_shares(config_, b.mt, c.t.dk, b.kn, b.k0, c.dt, b.m0, b.r), c.ops, c.gs);
  for (size_t i = 0; i < scores.size(); ++i) {
    Instruction mm{scores[i], c.ls, s_free, {}};
    add(mm, q_ready);
    add(mm, k_ready);
    emit_.signal(mm, c.s.full(b.b));
    if (b.last_k)
      for (int sig : c.q.release(b.u)) emit_.signal(mm, sig);
    if (b.last_use_of_kv && !c.v_is_k)
      for (int sig : c.k.release(b.f)) emit_.signal(mm, sig);
    emit_.push(EngineKind::mxu, next_mxu(i), std::move(mm));
  }
  mxu_turn_ += scores.size();
}

// Probabilities into vmem.
void TiledCompiler::attention_probabilities(AttentionChain& c, const AttentionBlock& b) {
  Instruction softmax{VpuOp{VectorKind::softmax, b.mt, b.kn, c.dt}, c.lv, c.s.ready(b.b), {}};
  softmax.frees = region(kAccumulators, c.s.offset(b.b), static_cast<uint64_t>(b.mt * b.kn) * 4, c.s.full(b.b));
  add(softmax, c.p.acquire(b.b));
  for (int sig : c.s.release(b.b)) emit_.signal(softmax, sig);
  emit_.signal(softmax, c.p.full(b.b));
  emit_.push(EngineKind::vpu, 0, std::move(softmax));
}

// Context: probabilities x values, accumulated over the key blocks (after the first, on the
// context the VPU has rescaled).
void TiledCompiler::attention_context(AttentionChain& c, const AttentionBlock& b) {
  const int so = c.scaled_sem(b.u);
  std::vector<SemWait> o_free;
  if (b.j == 0) {
    o_free = c.o.acquire(b.u);
  } else {
    Instruction rescale{VpuOp{VectorKind::mul, b.mt, c.t.dv, c.dt}, c.lv, c.o.ready(b.u), {}};
    emit_.signal(rescale, so);
    emit_.push(EngineKind::vpu, 0, std::move(rescale));
    o_free = {{so, emit_.emitted(so)}};
  }
  const std::vector<SemWait> p_ready = c.p.ready(b.b), v_ready = c.values().ready(b.f);
  const int probabilities = region(kVmem, c.p.offset(b.b), static_cast<uint64_t>(b.mt * b.kn) * c.w, c.p.full(b.b));
  const std::vector<MatmulOp> context = typed(mxu_shares(config_, b.mt, b.kn, c.t.dv, 0, c.dt, b.m0, b.r), c.ops, c.go);
  for (size_t i = 0; i < context.size(); ++i) {
    Instruction mm{context[i], c.lo, o_free, {}};
    mm.frees = probabilities;
    add(mm, p_ready);
    add(mm, v_ready);
    for (int sig : c.p.release(b.b)) emit_.signal(mm, sig);
    if (b.last_use_of_kv)
      for (int sig : c.values().release(b.f)) emit_.signal(mm, sig);
    emit_.signal(mm, c.o.full(b.u));
    c.deferred.mxu.emplace_back(next_mxu(i), std::move(mm));
  }
  mxu_turn_ += context.size();
}

// After the last key block: the context (scaled by 1 / sum when the softmax was online)
// stores to HBM.
void TiledCompiler::attention_store(AttentionChain& c, const AttentionBlock& b) {
  std::vector<SemWait> o_ready = c.o.ready(b.u);
  if (c.t.k_blocks > 1) {
    const int so = c.scaled_sem(b.u);
    Instruction scale{VpuOp{VectorKind::mul, b.mt, c.t.dv, c.dt}, c.lv, o_ready, {}};
    emit_.signal(scale, so);
    c.deferred.vpu.push_back(std::move(scale));
    o_ready = {{so, emit_.emitted(so)}};
  }
  Instruction out =
      store(c.lo, c.w, c.o.offset(b.u), activation_block({c.ho, c.t.dv, c.w}, b.m0, 0, b.mt, c.t.dv));
  add(out, o_ready);
  for (int sig : c.o.release(b.u)) emit_.signal(out, sig);
  emit_.signal(out, stores_done_);
  c.deferred.out.push_back(std::move(out));
}

// An on-chip intermediate for Instruction::frees.
int TiledCompiler::region(int space, uint64_t offset, uint64_t bytes, int full_sem) {
  program_.regions.push_back({space, offset, bytes, full_sem});
  return static_cast<int>(program_.regions.size()) - 1;
}

}  // namespace systolic::compile_detail::tiled
