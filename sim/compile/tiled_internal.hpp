#pragma once
// The tiled compiler's parts (the lowering itself is described in tiled.cpp): its plan
// (tiled_plan.cpp: tilings, the fused attention chains, the HBM layout), the emitter and
// ring operands the instruction streams are written through, and the compiler class whose
// GEMM lowering lives in tiled.cpp and fused attention in tiled_attention.cpp. Internal to
// sim/compile/.
#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/common/divide.hpp"
#include "sim/compile/collective.hpp"
#include "sim/compile/detail.hpp"
#include "sim/compile/overlap.hpp"

namespace systolic::compile_detail::tiled {

inline uint64_t align(uint64_t a) { return (a + kHbmAlign - 1) / kHbmAlign * kHbmAlign; }

// What one copy of each buffer may use: half of its scratchpad with double buffering (ping
// and pong), all of it without.
struct Copies {
  int count = 1;
  int64_t vmem = 0, weights = 0, acc = 0;
};

Copies copies_of(const ChipConfig& c);

// Operand widths (docs/precision.md): A is loaded and C stored in the activation type; B moves
// from HBM in its own (packed) type and sits in the weight buffer as the array reads it (an
// integer B widened by the VPU's dequantise op to the compute type, in place).
struct Widths {
  MxuOperands ops;
  int64_t a = 0;    // bytes per activation (A in vmem, C in HBM)
  int64_t buf = 0;  // bytes per B value in the weight buffer
  uint64_t b_bytes(uint64_t values) const { return dtype_storage_bytes(ops.b, values); }  // B in HBM, packed
};

Widths widths_of(const ChipConfig& c, const Gemm& g);

struct Tiling {
  int64_t m = 0, k = 0, n = 0;
  int64_t panel = 0;  // > 0: weights outer, in panels of this many columns (TiledCompiler::gemm)
};

// Fused attention. Per instance, Q [m, dk] x K [dk, n] -> scores, softmax, x V [n, dv] -> O [m, dv].
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

// How each workload entry is compiled.
struct EntryPlan {
  Tiling tiling;                           // a GEMM on its own
  std::optional<AttentionTiling> fused;    // the scores GEMM of a fused attention chain
  const VectorWork* softmax = nullptr;     // ... and the softmax it absorbs
  bool fused_tail = false;                 // the context GEMM of a fused chain (emitted with it)
  // > 0: the GEMM overlaps a decomposed collective (sim/compile/overlap.hpp), computed in this
  // many row blocks in turn, none of its A blocks crossing from one into the next.
  int64_t row_blocks = 0;
};

// `tile`: also choose the tiling of the GEMMs on their own (which throws for one that fits no
// tiling); the HBM layout needs only which chains are fused.
std::vector<EntryPlan> plan_entries(const ChipConfig& c, const Workload& w, bool tile);

// The tiling of GEMM `g` (throws InputError when none fits), its activation blocks at most
// `max_rows` rows when > 0.
Tiling choose_tiling(const ChipConfig& c, const Gemm& g, int64_t max_rows = 0);

// A GEMM computed in `blocks` row blocks beside a decomposed collective: blocks of at most
// ceil(m / blocks) rows, the weights outer in one panel when they all fit a weight-buffer copy
// (read once), else activations outer (re-read per block).
void plan_row_blocks(const ChipConfig& c, const Gemm& g, int64_t blocks, EntryPlan& plan);

// The row blocks [m0, m0 + rows) a GEMM's activations come in: t.m rows at a time, cut where
// its row blocks (plan.row_blocks) end; `last` marks a block that ends one.
struct RowBlock {
  int64_t m0 = 0, rows = 0;
  bool last = false;
};
std::vector<RowBlock> row_blocks(const Gemm& g, const EntryPlan& plan);

// Cuts the GEMMs beside the collectives `overlap` decomposes (plan_overlap) into their row
// blocks (plan_row_blocks).
void cut_row_blocks(const ChipConfig& c, const Workload& w, const std::vector<OverlapPlan>& overlap,
                    std::vector<EntryPlan>& plans);

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

HbmLayout layout_hbm(const ChipConfig& c, const Workload& w, const std::vector<EntryPlan>& plans);

// ---------------------------------------------------------------------------------------------
// Activation layout (activation_layout.cpp; docs/memory.md, "Activation layout").
// An activation tensor [*, width] in HBM: row-major, or tiled (memory.activation_layout) in
// tiles of `tile` = one vector register (vpu.sublanes x vpu.lanes elements), each tile
// contiguous and the tiles in row-major order, as XLA lays arrays out on TPUs.
struct Tile {
  int64_t rows = 0, cols = 0;  // 0 x 0: row-major
  bool tiled() const { return rows > 0; }
};
struct ActivationTensor {
  uint64_t base = 0;
  int64_t width = 0;  // columns
  uint64_t w = 0;     // bytes an element
  Tile tile{};
};
// A block of a tensor as one DMA moves it: its HBM side, and the shape both sides share (the
// scratchpad side is dense in it). Row-major: a run per row. Tiled (the block covers whole
// tiles): a run per row of tiles, all the block's tiles in that row being contiguous.
struct HbmBlock {
  DmaEndpoint hbm;
  std::array<uint64_t, 3> shape{};
};
HbmBlock activation_block(const ActivationTensor& t, int64_t r0, int64_t c0, int64_t rows, int64_t cols);

// Whether an entry's input (A) and output (C) are tiled: where memory.activation_layout is tiled
// and every block that writes or reads the tensor covers whole tiles (so it needs no padding);
// else row-major. A GEMM's output is the next GEMM's input, so both decide it together.
struct EntryLayouts {
  bool a = false, c = false;
};
std::vector<EntryLayouts> plan_activation_layouts(const ChipConfig& c, const Workload& w,
                                                  const std::vector<EntryPlan>& plans);
Tile activation_tile(const ChipConfig& c);  // the vector register's
// Whether blocks `step` columns wide (from column 0, the last one cut short) of a tensor
// `width` columns wide cover whole tiles.
bool columns_cover_tiles(int64_t width, int64_t step, const Tile& tile);

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
    stream(kind, index).instructions.push_back(std::move(i));
  }
  Stream& stream(EngineKind kind, int index) {
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
    return p_.streams[base + static_cast<size_t>(index)];
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

// The shares of one matmul [m, k] x [k, n] (output columns from n0) over the MXUs: its column
// folds split among them (the dimension the dataflow lays along the array's columns: N for ws
// and os, M for is). A matmul one column fold wide would leave all MXUs but one idle, so its
// row folds are split instead (ws, is: K, the partial sums adding up in the accumulators;
// os: M). (m0, instance: the rows of the layer instance it computes, for views of the grid.)
std::vector<MatmulOp> mxu_shares(const ChipConfig& c, int64_t m, int64_t k, int64_t n, int64_t n0, DType dt,
                                 int64_t m0, int64_t instance);

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
std::vector<MatmulOp> typed(std::vector<MatmulOp> shares, const MxuOperands& o, const Gemm& g);

inline void add(Instruction& i, const std::vector<SemWait>& waits) {
  i.waits.insert(i.waits.end(), waits.begin(), waits.end());
}

// Lowers one chip's workload (tiled.cpp: the plan's GEMMs and vector work;
// tiled_collective.cpp: the collectives; tiled_attention.cpp: the fused attention chains).
class TiledCompiler {
 public:
  TiledCompiler(const ChipConfig& config, const Workload& workload, int chip,
                CollectiveObserver* observer = nullptr)
      : config_(config),
        workload_(workload),
        chip_(chip),
        observer_(observer),
        emit_(config, program_),
        copies_(copies_of(config).count),
        dmas_(static_cast<int>(config.dma.engine.engines)),
        plans_(plan_entries(config, workload, true)),
        hbm_(layout_hbm(config, workload, plans_)),
        overlap_(plan_overlap(config, workload, chip)),
        feeds_reduce_(workload.gemms.size(), false) {
    cut_row_blocks(config, workload, overlap_, plans_);
    layouts_ = plan_activation_layouts(config, workload, plans_);  // on the final row blocks
    for (size_t i = 0; i < overlap_.size(); ++i)
      if (overlap_[i].decomposed && workload.collectives[i].kind == CollectiveKind::reduce_scatter)
        feeds_reduce_[overlap_[i].gemm] = true;
  }

  Program run();

 private:
  // What the loops of one GEMM entry share.
  struct GemmTiles {
    const Gemm& g;
    const Tiling& t;
    int layer;
    Widths widths;
    ActivationTensor a, c;      // [M, K] and [M, N] in HBM
    bool feeds_reduce = false;  // a decomposed reduce-scatter adds its row blocks as they are stored
    uint64_t w() const { return static_cast<uint64_t>(widths.a); }  // A and C
  };
  struct ABlock {
    int copy = 0;
    uint64_t base = 0;     // fills of the copy before this block
    int64_t instance = 0;  // the layer instance and first row it holds
    int64_t m0 = 0;
  };
  // Instructions of one block that the MXU streams take after the next block's scores, so the
  // MXUs compute scores while the VPU turns the previous block's into probabilities.
  struct Deferred {
    std::vector<std::pair<int, Instruction>> mxu;
    std::vector<Instruction> vpu, out;
  };
  struct AttentionChain;
  struct AttentionBlock;

  // Roles spread over the DMA engines: weights stream on one (two when there are four or
  // more engines, alternating tiles), activations load on another, outputs store on a third.
  int weight_dma(int64_t tile) const { return dmas_ >= 4 && tile % 2 ? 3 : 0; }
  int act_dma() const { return 1 % dmas_; }
  int out_dma() const { return 2 % dmas_; }
  uint64_t b_address(size_t i, int64_t r) const;
  void declare_buffers();
  Producer producer(int sem, uint64_t per_instance, int64_t instances) const;
  void vector(const VectorWork& v);
  ActivationTensor activation(uint64_t base, int64_t width, int64_t w, bool tiled) const;
  Instruction store(int layer, uint64_t w, uint64_t from, const HbmBlock& to);
  Instruction load_rows(int layer, uint64_t w, const HbmBlock& from, uint64_t to);
  void gemm(size_t index);
  ABlock load_a(const GemmTiles& at, int64_t r, int64_t m0, int64_t mt);
  Instruction load_weights(const GemmTiles& at, uint64_t hbm_b, int64_t k0, int64_t kt, int64_t n0, int64_t nt,
                           uint64_t to);
  SemWait dequantize(const GemmTiles& at, int64_t kt, int64_t nt, SemWait loaded);
  void multiply(const GemmTiles& at, const ABlock& a, int64_t mt, int64_t k0, int64_t kt, int64_t n0, int64_t nt,
                int qc, SemWait weights_ready, int release, bool last_n);
  void store_tile(const GemmTiles& at, int64_t mt, int64_t nt, int64_t m0, int64_t n0, int qc);
  void weight_panel(const GemmTiles& at, int64_t r, uint64_t hbm_b, int64_t p0, int64_t pn,
                    const std::vector<RowBlock>& blocks, Producer& produced);
  void block_stored(const GemmTiles& at, Producer& produced);
  std::vector<std::pair<size_t, size_t>> interleave_adds(size_t from);
  int panel_full(int copy, int engine);
  void collective(const CollectiveWork& c);

  // Fused attention (tiled_attention.cpp).
  const std::vector<std::pair<int, int>>& ring(const std::string& name, int depth);
  const std::vector<int>& counters(const std::string& name, int depth);
  void flush(Deferred& d);
  // Small matmuls take the MXUs in turn, so independent instances run side by side.
  int next_mxu(size_t share) const { return static_cast<int>((mxu_turn_ + share) % config_.mxu.count); }
  void attention(size_t index);
  void load_kv(AttentionChain& c, int64_t r, int part, int64_t f, int64_t k0, int64_t kn);
  void attention_query_block(AttentionChain& c, int64_t r, int64_t qb, int64_t resident);
  void attention_scores(AttentionChain& c, const AttentionBlock& b);
  void attention_probabilities(AttentionChain& c, const AttentionBlock& b);
  void attention_context(AttentionChain& c, const AttentionBlock& b);
  void attention_store(AttentionChain& c, const AttentionBlock& b);
  int region(int space, uint64_t offset, uint64_t bytes, int full_sem);

  const ChipConfig& config_;
  const Workload& workload_;
  int chip_;
  CollectiveObserver* observer_;
  Program program_;
  Emitter emit_;
  int copies_, dmas_;
  std::vector<EntryPlan> plans_;
  HbmLayout hbm_;
  std::vector<EntryLayouts> layouts_;  // per entry: which activations are tiled
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
  std::vector<OverlapPlan> overlap_;  // per collective (sim/compile/overlap.hpp)
  std::vector<bool> feeds_reduce_;    // per GEMM: before a decomposed reduce-scatter
  std::vector<size_t> block_marks_;   // ... the VPU stream's length as each of its row blocks ends
  std::map<std::string, std::pair<int, uint64_t>> channels_;  // permute channels (pipeline stages)
  size_t next_gemm_ = 0;  // the GEMM after the side work being emitted
};

}  // namespace systolic::compile_detail::tiled
