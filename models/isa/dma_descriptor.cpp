#include "models/isa/dma_descriptor.hpp"

namespace systolic {

uint64_t DmaDescriptor::extent_bytes(const DmaEndpoint& side) const {
  if (elements() == 0) return 0;
  uint64_t last = 0;
  for (int k = 0; k < 3; ++k) last += (shape[k] - 1) * side.stride[k];
  return (last + 1) * element_bytes;
}

DmaDescriptor DmaDescriptor::linear(DmaEndpoint src, DmaEndpoint dst, uint64_t bytes) {
  DmaDescriptor d;
  src.stride = {1, 0, 0};
  dst.stride = {1, 0, 0};
  d.src = src;
  d.dst = dst;
  d.element_bytes = 1;
  d.shape = {bytes, 1, 1};
  return d;
}

RunCursor::RunCursor(const DmaDescriptor& d, const DmaEndpoint& side) {
  if (d.elements() == 0 || d.element_bytes == 0) return;
  // Merge dimensions from the inside while each continues the run.
  uint64_t run_elements = 1;
  int level = 0;
  while (level < 3 && (d.shape[level] == 1 || side.stride[level] == run_elements)) {
    run_elements *= d.shape[level];
    ++level;
  }
  run_bytes_ = run_elements * d.element_bytes;
  // The rest is a grid of run starts.
  int g = 0;
  for (int k = level; k < 3; ++k) {
    if (d.shape[k] == 1) continue;
    count_[g] = d.shape[k];
    step_[g] = side.stride[k] * d.element_bytes;
    ++g;
  }
  runs_ = count_[0] * count_[1] * count_[2];
  remaining_runs_ = runs_;
  address_ = side.base;
}

std::vector<DmaRun> runs_of(const DmaDescriptor& d, const DmaEndpoint& side) {
  std::vector<DmaRun> out;
  for (RunCursor c(d, side); !c.done(); c.advance()) out.push_back(c.current());
  return out;
}

}  // namespace systolic
