#pragma once
// Which layers of a chip's program waited for which, as the run resolved its semaphores: the
// dependency graph a Chakra execution trace carries (sim/chakra/chakra_et.hpp).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/isa/program.hpp"
#include "sim/simulate/simulate.hpp"

namespace systolic {

// Where an entry's span starts: loads that ran while the entry before it was still working
// (prefetched weights) are hidden, not its time, so the span starts when the entry before ended
// (`previous_end`, 0 for the first), or at the entry's first compute instruction if that came
// earlier (a fused chain's entries interleave), and never before its own first instruction.
// report.json's `cycles` and the Chakra nodes' durations both use it.
inline uint64_t layer_span_start(uint64_t first_start, uint64_t first_compute, uint64_t previous_end) {
  return std::max(first_start, std::min(previous_end, first_compute));
}

// One entry of the program's layer table that ran on the chip: its span [start, end) (start as
// layer_span_start() puts it, end the end of its last instruction), and the entries it waited for.
struct LayerNode {
  int layer = 0;  // index into Program::layers
  uint64_t start = 0, end = 0;
  uint64_t hbm_bytes = 0;    // its DMA descriptors' bytes read from and written to HBM
  std::vector<int> parents;  // ascending, without the layer itself
};

// Per semaphore of chip `chip`'s program, the layer of the other chips' ICI messages that signal
// it on arrival (-1: none). The programs of a system share one layer table (each chip runs its
// share of every entry), so that index is the same entry in this chip's table: the collective.
std::vector<int> remote_signallers(const std::vector<SharedProgram>& programs, size_t chip);

// Layer j depends on layer i (i != j) when an instruction of j waited on `S >= N` and the N-th
// signal of S to complete came from an instruction of i (ties at one cycle broken by engine,
// then by position in its stream), or S is signalled by other chips' messages of layer i
// (`remote`, one entry per semaphore; empty for a single chip). Nodes in layer order.
std::vector<LayerNode> layer_graph(const Program& program, const SimResult& result,
                                   const std::vector<int>& remote = {});

}  // namespace systolic
