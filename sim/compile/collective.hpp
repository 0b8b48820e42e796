#pragma once
// Lowering collectives (sim/workload/workload.hpp CollectiveWork) to one chip's ICI messages and VPU
// additions; messages move HBM to HBM (docs/interconnect.md has the algorithms). The algorithm
// `ici.algorithm` names is one registered in sim/compile/collectives/ (ring, bidir_ring,
// torus); all_reduce = reduce_scatter, then all_gather; all_to_all sends each member its share
// directly (dimension-order routed), whatever the algorithm.
#include <cstdint>
#include <functional>
#include <string>

#include "sim/compile/detail.hpp"

namespace systolic::compile_detail {

struct CollectiveTarget {
  Program& program;
  const ChipConfig& config;
  int chip = 0;  // which chip of the system this program is for
  // Declares a semaphore (the lowering's own bookkeeping of signal counts stays in sync).
  std::function<int(const std::string&)> new_semaphore;
  // Where the collective's buffers start in HBM (the same address on every chip: its input,
  // then a receive area as large).
  uint64_t hbm_base = 0;
};

// HBM the collective's buffers take on each chip (input and receive area).
uint64_t collective_hbm_bytes(const CollectiveWork& c);

// Appends the collective's layer entry and instructions; its first messages wait for `input`.
// Returns what the entry after it waits for: every message this chip is to receive.
// Throws InputError when the config has no interconnect.
Producer emit_collective(CollectiveTarget& target, const CollectiveWork& c, const Producer& input);

}  // namespace systolic::compile_detail
