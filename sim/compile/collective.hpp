#pragma once
// Lowering collectives (sim/workload/workload.hpp CollectiveWork) to one chip's ICI messages and VPU
// additions; messages move HBM to HBM (docs/interconnect.md has the algorithms). The algorithm
// `ici.algorithm` names is one registered in sim/compile/collectives/ (ring, bidir_ring,
// torus); all_reduce = reduce_scatter, then all_gather; all_to_all sends each member its share
// directly (dimension-order routed), whatever the algorithm.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

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
  // Permutes between programs whose layer tables differ (CollectiveWork::channel): each
  // channel's receive semaphore, declared once per program, and the messages counted so far.
  std::map<std::string, std::pair<int, uint64_t>>* channels = nullptr;
};

// HBM the collective's buffers take on each chip (input and receive area).
uint64_t collective_hbm_bytes(const CollectiveWork& c);

// Appends the collective's layer entry and instructions; its first messages wait for `input`.
// Returns what the entry after it waits for: every message this chip is to receive.
// Throws InputError when the config has no interconnect.
// `decomposed` (sim/compile/overlap.hpp): the collective runs as the single ring phase of its
// algorithm, step by step beside its matmul: a reduce-scatter adds each of its own row blocks
// when `input.chunks` says it is ready; an all-gather returns its blocks as they arrive (the
// result's `chunks`: this chip's own block first, then one per step).
Producer emit_collective(CollectiveTarget& target, const CollectiveWork& c, const Producer& input,
                         bool decomposed = false);

}  // namespace systolic::compile_detail
