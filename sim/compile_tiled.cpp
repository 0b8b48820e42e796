// Lowering with a real memory system. Each GEMM instance is cut into tiles that fit the
// scratchpads: an activation block A[m_t, K] in vmem, weight tiles B[k_t, n_t] in the weight
// buffer, an output tile C[m_t, n_t] in the accumulators. DMA engines move them between HBM
// and the scratchpads; with dma.double_buffer every buffer has a ping and a pong copy, so the
// load of tile t+1 overlaps the MXUs' work on tile t (docs/memory.md).
//
// Synchronisation uses monotonic semaphores in producer/consumer pairs per buffer copy:
// the producer of copy p waits until its `free` counter has reached every release emitted so
// far (the previous user is done), the consumer waits until `full` has reached every fill
// emitted so far. Counting emitted signals at compile time gives every threshold.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "sim/compile_detail.hpp"
#include "sim/error.hpp"

namespace systolic::compile_detail {
namespace {

int64_t round_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }
uint64_t align(uint64_t a) { return (a + 4095) / 4096 * 4096; }

struct Tiling {
  int64_t m = 0, k = 0, n = 0;
};

// Layers with big weights are cut into at least this many weight tiles, so that the first
// load (which nothing can hide) is a small part of the layer.
constexpr int64_t kMinWeightTiles = 16;

Tiling choose_tiling(const ChipConfig& c, const Gemm& g, DType dtype) {
  const int64_t w = dtype_bytes(dtype), R = c.mxu.rows, C = c.mxu.cols, P = c.mxu.count;
  const int64_t copies = c.dma.double_buffer ? 2 : 1;
  const int64_t wcap = static_cast<int64_t>(c.sram.weights.capacity_bytes) / copies;
  const int64_t vcap = static_cast<int64_t>(c.sram.vmem.capacity_bytes) / copies;
  const int64_t acap = static_cast<int64_t>(c.sram.accumulators.capacity_bytes) / copies;
  const auto fail = [&](const std::string& why) {
    throw InputError(fmt::format("{}: layer '{}' ({}x{}x{} {}): no tiling fits: {}", g.source, g.name, g.m,
                                 g.k, g.n, dtype_name(dtype), why));
  };
  if (g.k * w > vcap)
    fail(fmt::format("one row of activations (K={} x {} B) needs {} B of vmem{}, but sram.vmem_bytes = {}",
                     g.k, w, g.k * w * copies, copies > 1 ? " (ping and pong)" : "",
                     c.sram.vmem.capacity_bytes));
  Tiling t;
  t.m = std::min(g.m, vcap / (g.k * w));
  // Output columns: as many as the accumulators hold for the whole activation block, at least
  // one column fold per MXU, in whole groups of P folds so every MXU gets the same share.
  t.n = std::min(g.n, std::max(C * P, acap / (t.m * 4) / (C * P) * (C * P)));
  t.k = g.k;
  // ... but never below one fold per MXU, so every MXU has work in each tile.
  const int64_t weight_cap = std::min(wcap, std::max(R * C * P * w, g.k * g.n * w / kMinWeightTiles));
  while (t.k * t.n * w > weight_cap) {
    if (t.k > R) t.k = std::max(R, round_up(t.k / 2, R));
    else if (t.n > C) t.n = std::max(C, round_up(t.n / 2, C));
    else break;
  }
  if (t.k * t.n * w > wcap)  // unreachable for configs that passed validate_config
    fail(fmt::format("a {}x{} weight tile needs {} B, but sram.weights_bytes holds {} B per copy", t.k,
                     t.n, t.k * t.n * w, wcap));
  t.m = std::max<int64_t>(1, std::min(t.m, acap / (t.n * 4)));
  return t;
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
    const size_t base = kind == EngineKind::mxu   ? 0
                        : kind == EngineKind::dma ? static_cast<size_t>(config_.mxu.count)
                                                  : p_.streams.size() - 1;
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

}  // namespace

Program compile_tiled(const ChipConfig& config, const Workload& workload) {
  Program program;
  Emitter emit(config, program);
  const int copies = config.dma.double_buffer ? 2 : 1;
  const int dmas = static_cast<int>(config.dma.engine.engines);
  // Roles spread over the DMA engines: weights stream on one (two when there are four or
  // more engines, alternating tiles), activations load on another, outputs store on a third.
  const auto weight_dma = [&](int64_t tile) { return dmas >= 4 && tile % 2 ? 3 : 0; };
  const int act_dma = 1 % dmas, out_dma = 2 % dmas;

  std::vector<std::pair<const Gemm*, Tiling>> plans;
  uint64_t a_bytes = 0, w_bytes = 0, c_bytes = 0;
  for (const Gemm& g : workload.gemms) {
    const DType dt = g.dtype.value_or(config.mxu.dtype);
    const Tiling t = choose_tiling(config, g, dt);
    const uint64_t w = static_cast<uint64_t>(dtype_bytes(dt));
    a_bytes = std::max(a_bytes, static_cast<uint64_t>(t.m * g.k) * w);
    w_bytes = std::max(w_bytes, static_cast<uint64_t>(t.k * t.n) * w);
    c_bytes = std::max(c_bytes, static_cast<uint64_t>(t.m * t.n) * 4);
    plans.emplace_back(&g, t);
  }

  // Buffers: the scratchpad splits into equal halves for ping and pong (tiles were chosen to
  // fit half), each buffer at the start of its half.
  Slots a{kVmem}, b{kWeights}, c{kAccumulators};
  const std::array<std::pair<Slots*, uint64_t>, 3> kinds = {{{&a, a_bytes}, {&b, w_bytes}, {&c, c_bytes}}};
  const char* names[] = {"act", "wgt", "acc"};
  for (size_t kind = 0; kind < kinds.size(); ++kind)
    for (int p = 0; p < copies; ++p) {
      Slots& s = *kinds[kind].first;
      s.offset[p] = p * (config.sram.all()[static_cast<size_t>(s.space)].capacity_bytes / copies);
      const std::string name = fmt::format("{}_{}", names[kind], p ? "pong" : "ping");
      program.buffers.push_back({name, s.space, s.offset[p], kinds[kind].second});
      s.full[p] = emit.sem(name + "_full");
      s.free[p] = emit.sem(name + "_free");
    }
  const int stores_done = emit.sem("outputs_stored");  // output tiles written back to HBM
  const int vpu_done = emit.sem("vector_done");

  uint64_t hbm_next = 0;
  const auto hbm_alloc = [&](uint64_t bytes, const Gemm& g) {
    const uint64_t at = hbm_next;
    hbm_next = align(hbm_next + bytes);
    if (hbm_next > config.hbm.capacity_bytes)
      throw InputError(fmt::format("{}: layer '{}': the workload's tensors need more than hbm.capacity_bytes "
                                   "= {} of HBM",
                                   g.source, g.name, format_bytes(config.hbm.capacity_bytes)));
    return at;
  };

  const ArrayShape array = config.mxu.shape();
  int64_t a_uses = 0, w_uses = 0, c_uses = 0;  // fills of each buffer so far: copy = uses % copies
  // Each entry reads what the entry before it produced (Producer: instance by instance when
  // both have as many instances). Vector work runs on the VPU once the results it reads are
  // stored; the next GEMM's loads wait for the VPU's results in turn.
  Producer input;
  const auto emit_vector = [&](const VectorWork& v) {
    const int layer = static_cast<int>(program.layers.size());
    program.layers.push_back(vector_layer_info(v));
    const Producer produced{vpu_done, emit.emitted(vpu_done), 1, v.repeat};
    for (int64_t r = 0; r < v.repeat; ++r) {
      Instruction instr{v.op, layer, {}, {}};
      input.add_wait(instr, r, v.repeat);
      emit.signal(instr, vpu_done);
      emit.push(EngineKind::vpu, 0, std::move(instr));
    }
    input = produced;
  };
  for_vectors_after(workload, 0, emit_vector);
  size_t gemms_done = 0;
  for (const auto& [gp, t] : plans) {
    const Gemm& g = *gp;
    const int layer = static_cast<int>(program.layers.size());
    program.layers.push_back(layer_info(config, g));
    const DType dt = program.layers.back().dtype;
    const uint64_t w = static_cast<uint64_t>(dtype_bytes(dt));
    const uint64_t K = g.k, N = g.n;
    // HBM layout: activations and outputs are transient, so every instance of the entry reuses
    // one region each; weights are parameters, so each instance has its own (attention's B
    // operand is activations or a KV cache of the same size each time: one region).
    const uint64_t hbm_a = hbm_alloc(g.m * K * w, g), hbm_c = hbm_alloc(g.m * N * w, g);
    const bool own_weights = g.kind == "matmul";
    uint64_t hbm_b = own_weights ? 0 : hbm_alloc(K * N * w, g);
    // Its repeats are independent instances (heads, slots): one may load while another
    // computes; each needs its input from the entry before (`input`).
    const uint64_t stores_per_instance =
        static_cast<uint64_t>((g.m + t.m - 1) / t.m) * static_cast<uint64_t>((g.n + t.n - 1) / t.n);
    const Producer produced{stores_done, emit.emitted(stores_done), stores_per_instance, g.repeat};
    for (int64_t r = 0; r < g.repeat; ++r) {
      if (own_weights) hbm_b = hbm_alloc(K * N * w, g);
      for (int64_t m0 = 0; m0 < g.m; m0 += t.m) {
        const int64_t mt = std::min(t.m, g.m - m0);
        const int qa = static_cast<int>(a_uses++ % copies);
        // The activation block arrives in K slices matching the weight tiles, so the MXUs
        // start on the first slice while the rest loads. Slice j sits at k0 * mt in the
        // buffer as a dense [mt, kt] matrix (a strided read of the row-major HBM copy).
        const uint64_t a_base = emit.emitted(a.full[qa]);
        for (int64_t k0 = 0; k0 < g.k; k0 += t.k) {
          const int64_t kt = std::min(t.k, g.k - k0);
          DmaDescriptor d;
          d.element_bytes = w;
          d.shape = {static_cast<uint64_t>(kt), static_cast<uint64_t>(mt), 1};
          d.src = DmaEndpoint::hbm(hbm_a + (m0 * K + k0) * w, {1, K, 0});
          d.dst = DmaEndpoint::sram(kVmem, a.offset[qa] + k0 * mt * w, {1, static_cast<uint64_t>(kt), 0});
          Instruction load_a{DmaOp{d}, layer, {}, {}};
          emit.wait_all(load_a, a.free[qa]);
          input.add_wait(load_a, r, g.repeat);
          emit.signal(load_a, a.full[qa]);
          emit.push(EngineKind::dma, act_dma, std::move(load_a));
        }

        for (int64_t n0 = 0; n0 < g.n; n0 += t.n) {
          const int64_t nt = std::min(t.n, g.n - n0);
          const int qc = static_cast<int>(c_uses++ % copies);
          const int64_t col_folds = fold_count(array, {mt, 1, nt}).col_folds;
          const int64_t busy = std::min<int64_t>(config.mxu.count, col_folds);
          for (int64_t k0 = 0; k0 < g.k; k0 += t.k) {
            const int64_t kt = std::min(t.k, g.k - k0);
            const int64_t tile = w_uses++;
            const int qb = static_cast<int>(tile % copies);
            // Weights are static, so the compiler picks their HBM layout: tile by tile, each
            // [kt, nt] tile contiguous (a row-major matrix would make every tile a strided
            // gather hitting a fraction of the channels).
            const uint64_t tile_at = hbm_b + (n0 * K + k0 * nt) * w;
            Instruction load_b{DmaOp{DmaDescriptor::linear(DmaEndpoint::hbm(tile_at),
                                                           DmaEndpoint::sram(kWeights, b.offset[qb]),
                                                           kt * nt * w)},
                               layer, {}, {}};
            emit.wait_all(load_b, b.free[qb]);
            emit.signal(load_b, b.full[qb]);
            emit.push(EngineKind::dma, weight_dma(tile), std::move(load_b));

            const bool first_k = k0 == 0, last_k = k0 + kt >= g.k;
            const bool last_use_of_a = last_k && n0 + nt >= g.n;
            // A tile one column fold wide would leave all MXUs but one idle: split its rows (K)
            // among them instead; their partial sums add up in the accumulators.
            const int64_t row_folds = fold_count(array, {mt, kt, 1}).row_folds;
            const bool split_k = col_folds == 1 && row_folds > 1 && config.mxu.count > 1;
            const int64_t parts = split_k ? std::min<int64_t>(config.mxu.count, row_folds) : busy;
            for (int64_t i = 0; i < parts; ++i) {
              MatmulOp op{mt, kt, nt, n0, dt};
              if (split_k) {
                const auto [f0, f1] = fold_share(row_folds, parts, i);
                op.k = std::min(f1 * array.rows, kt) - f0 * array.rows;
              } else {
                const auto [f0, f1] = fold_share(col_folds, busy, i);
                op.n_offset = n0 + f0 * array.cols;
                op.n = std::min(f1 * array.cols, nt) - f0 * array.cols;
              }
              Instruction mm{op, layer, {}, {}};
              mm.waits.push_back({a.full[qa], a_base + static_cast<uint64_t>(k0 / t.k) + 1});
              emit.wait_all(mm, b.full[qb]);
              if (first_k) emit.wait_all(mm, c.free[qc]);
              emit.signal(mm, b.free[qb]);
              if (last_k) emit.signal(mm, c.full[qc]);
              if (last_use_of_a) emit.signal(mm, a.free[qa]);
              emit.push(EngineKind::mxu, static_cast<int>(i), std::move(mm));
            }
          }
          // Results leave in the operand type (the accumulators' fp32/int32 is converted on
          // the way out), row by row into the output matrix in HBM.
          DmaDescriptor d;
          d.element_bytes = w;
          d.shape = {static_cast<uint64_t>(nt), static_cast<uint64_t>(mt), 1};
          d.src = DmaEndpoint::sram(kAccumulators, c.offset[qc], {1, static_cast<uint64_t>(nt), 0});
          d.dst = DmaEndpoint::hbm(hbm_c + (m0 * N + n0) * w, {1, N, 0});
          Instruction store{DmaOp{d}, layer, {}, {}};
          emit.wait_all(store, c.full[qc]);
          emit.signal(store, c.free[qc]);
          emit.signal(store, stores_done);
          emit.push(EngineKind::dma, out_dma, std::move(store));
        }
      }
    }
    input = produced;
    for_vectors_after(workload, ++gemms_done, emit_vector);
  }
  return program;
}

}  // namespace systolic::compile_detail
