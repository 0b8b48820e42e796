#pragma once
// What a DMA engine is asked to move: a tensor of up to three dimensions, element by element
// from a source to a destination, each side in HBM or in one of the chip's scratchpads and
// each with its own strides, so a strided 2-D/3-D tile (a weight tile out of a row-major
// matrix, a transposed gather) is one descriptor. Element (i0, i1, i2) lives at
//   base + (i0 * stride[0] + i1 * stride[1] + i2 * stride[2]) * element_bytes
// with d0 the innermost dimension. The HBM side becomes a list of contiguous runs
// (for_each_run); the DMA core cuts those into requests.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace systolic {

constexpr int kHbmSpace = -1;  // DmaEndpoint::space: HBM; >= 0: a scratchpad id

struct DmaEndpoint {
  int space = kHbmSpace;
  uint64_t base = 0;  // byte address in HBM, or byte offset in the scratchpad
  std::array<uint64_t, 3> stride = {1, 0, 0};  // in elements; {1, d0, d0 * d1} is dense

  bool is_hbm() const { return space == kHbmSpace; }
  static DmaEndpoint hbm(uint64_t address, std::array<uint64_t, 3> stride = {1, 0, 0}) {
    return {kHbmSpace, address, stride};
  }
  static DmaEndpoint sram(int scratchpad, uint64_t offset, std::array<uint64_t, 3> stride = {1, 0, 0}) {
    return {scratchpad, offset, stride};
  }
  bool operator==(const DmaEndpoint& o) const {
    return space == o.space && base == o.base && stride == o.stride;
  }
};

struct DmaDescriptor {
  DmaEndpoint src;
  DmaEndpoint dst;
  uint64_t element_bytes = 1;
  std::array<uint64_t, 3> shape = {0, 1, 1};  // {d0, d1, d2}; unused dimensions are 1

  uint64_t elements() const { return shape[0] * shape[1] * shape[2]; }
  uint64_t total_bytes() const { return elements() * element_bytes; }
  // Byte offset one past the last element an endpoint touches (0 for an empty tensor).
  uint64_t extent_bytes(const DmaEndpoint& side) const;
  // A 1-D dense copy of `bytes`.
  static DmaDescriptor linear(DmaEndpoint src, DmaEndpoint dst, uint64_t bytes);
  bool operator==(const DmaDescriptor& o) const {
    return src == o.src && dst == o.dst && element_bytes == o.element_bytes && shape == o.shape;
  }
};

// The op a DMA instruction carries (to join the `Operation` variant of models/isa/program.hpp).
// Completion is signalled through the instruction's `signals`, like every instruction.
struct DmaOp {
  DmaDescriptor descriptor;
  bool operator==(const DmaOp& o) const { return descriptor == o.descriptor; }
};

struct DmaRun {
  uint64_t address = 0;
  uint64_t bytes = 0;
  bool operator==(const DmaRun& o) const { return address == o.address && bytes == o.bytes; }
};

// One side's contiguous runs in element order: the innermost dimension is one run when its
// stride is 1, and dimensions whose stride continues the run (stride[1] == d0, ...) merge into
// it; otherwise every element is its own run.
class RunCursor {
 public:
  RunCursor() = default;
  RunCursor(const DmaDescriptor& d, const DmaEndpoint& side);
  bool done() const { return remaining_runs_ == 0; }
  DmaRun current() const { return {address_, run_bytes_}; }
  void advance() {  // inline: a strided tile has a run per row
    if (remaining_runs_ == 0) return;
    --remaining_runs_;
    for (int g = 0; g < 3; ++g) {
      if (++index_[g] < count_[g]) {
        address_ += step_[g];
        return;
      }
      index_[g] = 0;
      address_ -= (count_[g] - 1) * step_[g];  // unsigned wrap-around is exact
    }
  }
  uint64_t run_bytes() const { return run_bytes_; }
  uint64_t run_count() const { return runs_; }

 private:
  uint64_t run_bytes_ = 0;
  uint64_t runs_ = 0;
  uint64_t remaining_runs_ = 0;
  uint64_t address_ = 0;
  // The runs form a (up to) 3-D grid of starts: counts and byte steps per level.
  std::array<uint64_t, 3> count_ = {1, 1, 1};
  std::array<uint64_t, 3> step_ = {0, 0, 0};
  std::array<uint64_t, 3> index_ = {0, 0, 0};
};

// Every run of one side, for tests and small tensors.
std::vector<DmaRun> runs_of(const DmaDescriptor& d, const DmaEndpoint& side);

}  // namespace systolic
