#pragma once
// Collectives decomposed and overlapped with the matmul beside them (Wang et al., "Overlap
// Communication with Dependent Computation via Decomposition in Large Deep Learning Models",
// ASPLOS 2023; docs/interconnect.md, "Overlap"). An all-gather whose result the next matmul
// reads as its rows becomes the N - 1 steps of its ring, the matmul computing one block of
// rows at a time on the blocks already in (its own first); a reduce-scatter of the rows the
// matmul before it writes adds each of its own blocks as the matmul finishes them, in the order
// the ring needs them. The messages are the collective's own (the same bytes on the same
// links), so only the waits change: each step's communication hides under the block being
// computed, time ~ first block + (N - 1) * max(block compute, step) (+ the last step).
//
// The sharder says which collectives may be decomposed (CollectiveWork::decompose; off with
// --overlap off); this file decides where the hardware allows it, with the same rule for the
// compiler and the report.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "models/chip/chip_config.hpp"
#include "sim/workload/workload.hpp"

namespace systolic::compile_detail {

struct OverlapPlan {
  bool asked = false;       // CollectiveWork::decompose is set
  bool decomposed = false;  // ... and the hardware allows it
  int64_t blocks = 0;       // row blocks of the matmul: the group's chips
  size_t gemm = 0;          // the matmul it overlaps (index into Workload::gemms)
  std::string why_not;      // asked but not decomposed: the reason, for the report
};

// One plan per entry of w.collectives. A collective is decomposed when it asks to be, its
// algorithm lowers it as a single ring phase over its group (ring, bidir_ring; torus on a
// group of one line), the matmul is the entry right next to it (no vector work between), has
// one instance, at least one row per chip of the group and moves exactly the collective's
// bytes, a tiling of one block of rows fits the scratchpads, and either the matmul's weights
// fit one weight-buffer copy (read once, every block streaming past them) or a block is
// compute-bound (its rows >= the chip's MACs per cycle / HBM bytes per cycle per weight
// byte: re-reading the weights for each block costs no time the MXUs would not take anyway).
std::vector<OverlapPlan> plan_overlap(const ChipConfig& config, const Workload& w, int chip);

}  // namespace systolic::compile_detail
