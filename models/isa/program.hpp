#pragma once
// A program: what the chip executes. Per-engine instruction streams that synchronise through
// monotonic semaphores (a wait blocks until a counter reaches a threshold; a signal adds one
// when the instruction completes), plus the layer table statistics are attributed to.
// The compiler produces programs; the compiled-trace text format is their serialisation.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "models/common/dtype.hpp"
#include "models/common/names.hpp"
#include "models/common/small_vector.hpp"
#include "models/isa/dma_descriptor.hpp"
#include "models/isa/vpu_op.hpp"

namespace systolic {

enum class EngineKind { mxu, dma, vpu, ici };
inline constexpr auto kEngineKindNames = name_table<EngineKind>({{EngineKind::mxu, "mxu"}, {EngineKind::dma, "dma"}, {EngineKind::vpu, "vpu"}, {EngineKind::ici, "ici"}});
std::string engine_name(EngineKind kind, int index);  // "mxu0", "dma1", "vpu0", "ici0"

struct EngineId {
  EngineKind kind = EngineKind::mxu;
  int index = 0;
  bool operator==(const EngineId& o) const { return kind == o.kind && index == o.index; }
};

// C[:, n_offset : n_offset + n] (+)= A[m, k] * B[k, n_offset : n_offset + n]
struct MatmulOp {
  int64_t m = 0;
  int64_t k = 0;
  int64_t n = 0;
  int64_t n_offset = 0;  // which output columns of the layer this share computes
  DType dtype = DType::bf16;  // what the array multiplies in (its MAC energy)
  int64_t m_offset = 0;  // which rows of its layer instance (tiles of rows) it computes
  int64_t instance = 0;  // which instance (repeat: head, slot) of its layer
  // Mixed precision (models/mxu/operands.hpp): A and B as they sit in the scratchpads when
  // they differ from `dtype` (widened on the way into the array); unset: `dtype`.
  std::optional<DType> a_dtype{}, b_dtype{};
  // Static scales of fp8 operands: compile-time constants the output is multiplied by.
  double a_scale = 1.0, b_scale = 1.0;
  DType a() const { return a_dtype.value_or(dtype); }
  DType b() const { return b_dtype.value_or(dtype); }
  bool operator==(const MatmulOp& o) const;  // every field (program.cpp)
};

// One message to another chip of the system, sent by this chip's ICI engine over the links
// (models/ici/ici_network.hpp). When its last byte has landed, the destination chip's
// semaphore `recv_sem` (a name in the destination's program) gains one: the receiver's
// engines wait on it, as a TPU's remote DMA signals a semaphore on the receiving core.
struct IciCopy {
  int to = 0;            // destination chip
  uint64_t bytes = 0;
  std::string recv_sem;  // semaphore of the destination's program
  int tie = +1;          // way round a ring when both are equally short (Topology::route)
  // With a real memory system the message is read from this chip's HBM and written to the
  // destination's, each chunk timed by both HBM models.
  bool via_hbm = false;
  uint64_t src_addr = 0;
  uint64_t dst_addr = 0;
  bool operator==(const IciCopy& o) const;
};

// The messages of one step of a collective, sent concurrently (e.g. both ways round a
// bidirectional ring); the instruction completes when all have landed.
struct IciOp {
  std::vector<IciCopy> copies;
  uint64_t bytes() const {
    uint64_t b = 0;
    for (const auto& c : copies) b += c.bytes;
    return b;
  }
  bool operator==(const IciOp& o) const { return copies == o.copies; }
};

// A DMA transfer (models/isa/dma_descriptor.hpp): HBM <-> scratchpad, 1-D to 3-D, strided;
// a vector-unit op (models/vpu/vpu_core.hpp) over a [rows, cols] tensor; ICI messages.
using Operation = std::variant<MatmulOp, DmaOp, VpuOp, IciOp>;

// A named region of a scratchpad the compiler allocated (ping/pong tiles), for readers of
// traces and for checking hand-written ones: regions of one scratchpad must not overlap.
struct Buffer {
  std::string name;
  int space = 0;  // scratchpad id (sim/config/config.hpp ScratchpadId)
  uint64_t offset = 0;
  uint64_t bytes = 0;
  bool operator==(const Buffer& o) const {
    return name == o.name && space == o.space && offset == o.offset && bytes == o.bytes;
  }
};

// A wait: the instruction starts once semaphore `sem` has counted `at_least` signals. The count
// is held in 32 bits (8 B a wait; a program is millions of instructions): it is at most the
// number of instructions that signal the semaphore, and 2^32 of them would be over 800 GB,
// far past the instruction budget (sim/compile/budget.hpp); the trace reader refuses more.
struct SemWait {
  int sem = 0;
  uint32_t at_least = 0;
  SemWait() = default;
  SemWait(int semaphore, uint64_t count) : sem(semaphore), at_least(static_cast<uint32_t>(count)) {
    if (count > UINT32_MAX) throw std::length_error("semaphore wait: a count of 2^32 or more");
  }
  bool operator==(const SemWait& o) const { return sem == o.sem && at_least == o.at_least; }
};

// A scratchpad region written on chip (no DMA moves it: fused attention's scores in the
// accumulators, its probabilities in vmem) that an instruction reads last. It is live from the
// start of the writer whose signal on `full_sem` the reader waits for to the reader's end.
// Only the timeline's SRAM occupancy reads it; it changes no timing.
struct SramRegion {
  int space = 0;  // ScratchpadId
  uint64_t offset = 0, bytes = 0;
  int full_sem = -1;
  bool operator==(const SramRegion& o) const {
    return space == o.space && offset == o.offset && bytes == o.bytes && full_sem == o.full_sem;
  }
};

// An instruction's semaphore waits and signals, held in place up to the counts the compiler
// emits for most instructions (models/common/small_vector.hpp): a program is millions of them.
using SemWaits = SmallVector<SemWait, 3>;
using SemSignals = SmallVector<int, 4>;

struct Instruction {
  Operation op;
  int layer = -1;                // index into Program::layers
  SemWaits waits;                // all must hold before the instruction starts
  SemSignals signals;            // each incremented by one when it completes
  int frees = -1;                // the on-chip intermediate it reads last: Program::regions index
  bool operator==(const Instruction& o) const;
  bool operator!=(const Instruction& o) const { return !(*this == o); }
};

// An engine's instructions. Copies share one list until one of them is changed (copy on
// write), so the chips of a system whose streams are equal hold them once (compile_system
// shares them) and an engine reads its program's stream without a copy. Reading is by index
// or iterator; changing is appending (all the compiler and the trace reader do).
// The list is held in blocks of kBlock instructions: a program of millions of instructions
// grows without copying itself and without a vector's spare capacity (up to as much again
// as it holds), so its peak memory is its size (docs/performance.md, "Memory allocator"). The first
// block grows as a vector does, up to kBlock (short streams stay small); the full blocks and
// those after never move.
class InstructionList {
 public:
  static constexpr size_t kBlockShift = 12;
  static constexpr size_t kBlock = size_t{1} << kBlockShift;  // instructions per block (0.8 MB)
  class const_iterator;
  using value_type = Instruction;
  InstructionList() = default;
  InstructionList(const std::vector<Instruction>& instructions)  // NOLINT(google-explicit-constructor)
      : InstructionList(instructions.begin(), instructions.end()) {}
  InstructionList(std::initializer_list<Instruction> instructions)
      : InstructionList(instructions.begin(), instructions.end()) {}
  // Each block reserved to what it will hold (a system splices a list per chip: no spare room).
  template <class It>
  InstructionList(It first, It last) {
    if (first == last) return;
    own().expected = static_cast<size_t>(std::distance(first, last));
    for (; first != last; ++first) push_back(*first);
  }

  size_t size() const { return data_ ? data_->size : 0; }
  bool empty() const { return size() == 0; }
  const Instruction& operator[](size_t i) const { return data_->blocks[i >> kBlockShift][i & (kBlock - 1)]; }
  const Instruction& at(size_t i) const;  // throws std::out_of_range past the end
  const Instruction& back() const { return (*this)[size() - 1]; }
  const_iterator begin() const;
  const_iterator end() const;
  std::vector<Instruction> to_vector() const;  // a copy, to edit
  void push_back(Instruction i);
  // Whether the two hold one list (not merely equal ones).
  bool shares(const InstructionList& o) const { return data_ == o.data_; }
  bool operator==(const InstructionList& o) const;
  bool operator!=(const InstructionList& o) const { return !(*this == o); }

 private:
  struct Blocks {
    std::vector<std::vector<Instruction>> blocks;  // kBlock each but the last; never grown past it
    size_t size = 0;
    size_t expected = 0;  // the size the list is being built to, when known (the range constructor)
  };
  Blocks& own();                  // this copy's own list, copied first if another shares it
  std::shared_ptr<Blocks> data_;  // null: empty
};

class InstructionList::const_iterator {
 public:
  using iterator_category = std::random_access_iterator_tag;
  using value_type = Instruction;
  using difference_type = std::ptrdiff_t;
  using pointer = const Instruction*;
  using reference = const Instruction&;
  const_iterator() = default;
  const_iterator(const InstructionList* list, size_t i) : list_(list), i_(i) {}
  reference operator*() const { return (*list_)[i_]; }
  pointer operator->() const { return &(*list_)[i_]; }
  reference operator[](difference_type n) const { return (*list_)[i_ + static_cast<size_t>(n)]; }
  const_iterator& operator++() {
    ++i_;
    return *this;
  }
  const_iterator operator++(int) {
    const_iterator old = *this;
    ++i_;
    return old;
  }
  const_iterator& operator--() {
    --i_;
    return *this;
  }
  const_iterator operator--(int) {
    const_iterator old = *this;
    --i_;
    return old;
  }
  const_iterator& operator+=(difference_type n) {
    i_ += static_cast<size_t>(n);
    return *this;
  }
  const_iterator& operator-=(difference_type n) {
    i_ -= static_cast<size_t>(n);
    return *this;
  }
  friend const_iterator operator+(const_iterator it, difference_type n) { return it += n; }
  friend const_iterator operator+(difference_type n, const_iterator it) { return it += n; }
  friend const_iterator operator-(const_iterator it, difference_type n) { return it -= n; }
  friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
    return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
  }
  friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.i_ == b.i_; }
  friend bool operator!=(const const_iterator& a, const const_iterator& b) { return a.i_ != b.i_; }
  friend bool operator<(const const_iterator& a, const const_iterator& b) { return a.i_ < b.i_; }
  friend bool operator>(const const_iterator& a, const const_iterator& b) { return a.i_ > b.i_; }
  friend bool operator<=(const const_iterator& a, const const_iterator& b) { return a.i_ <= b.i_; }
  friend bool operator>=(const const_iterator& a, const const_iterator& b) { return a.i_ >= b.i_; }

 private:
  const InstructionList* list_ = nullptr;
  size_t i_ = 0;
};

inline InstructionList::const_iterator InstructionList::begin() const { return {this, 0}; }
inline InstructionList::const_iterator InstructionList::end() const { return {this, size()}; }

struct Stream {
  EngineId engine;
  InstructionList instructions;
};

// What a layer-table entry computes. Traces and reports spell it through one name table
// (kLayerKindNames).
enum class LayerKind {
  matmul,      // activations x weights
  attention,   // activations x activations or KV cache
  vector,      // VPU work: m = rows, n = cols, k = 1
  collective,  // ICI communication: m = bytes per chip, k = n = 1, no MACs
};
inline constexpr auto kLayerKindNames =
    name_table<LayerKind>({{LayerKind::matmul, "matmul"}, {LayerKind::attention, "attention"},
                           {LayerKind::vector, "vector"}, {LayerKind::collective, "collective"}});
std::string layer_kind_choices();  // "matmul, attention, vector or collective"

struct LayerInfo {
  std::string name;
  int64_t m = 0, k = 0, n = 0;
  DType dtype = DType::bf16;
  int64_t repeat = 1;
  uint64_t useful_macs = 0;  // m * k * n * repeat (pads and masked cells excluded, when any)
  std::string source;        // "file:line" of the workload entry
  LayerKind kind = LayerKind::matmul;
  bool operator==(const LayerInfo& o) const;
};

struct Program {
  std::vector<LayerInfo> layers;
  std::vector<Buffer> buffers;
  std::vector<std::string> semaphores;  // names; index = semaphore id
  std::vector<SramRegion> regions;      // on-chip intermediates (Instruction::frees)
  std::vector<Stream> streams;
};

// A program held by every chip that runs it (sim/compile: compile_system).
using SharedProgram = std::shared_ptr<const Program>;

}  // namespace systolic
