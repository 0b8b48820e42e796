#pragma once
// The MXU work of a compiled program, counted from the compiler's plan without emitting it:
// a lower bound on the program's simulated time that costs microseconds where compiling and
// simulating a large shape costs seconds. The serving replay asks it before simulating a shape
// it may only compare against (docs/serving.md, "Simulating the shapes").
//
// Why it bounds the run: an MXU runs its matmul instructions one at a time, each for its
// closed-form cycles at least (models/mxu/mxu_engine.cpp waits them out; the exact model takes
// exactly as many), so a chip's run lasts at least its busiest MXU's sum, which is at least the
// mean of the MXUs' sums.
#include <cstdint>

#include "models/chip/chip_config.hpp"
#include "sim/workload/workload.hpp"

namespace systolic {

// The closed-form cycles (Dataflow::cycles) of every matmul instruction compile(config,
// workload, chip) emits, summed over the MXUs: the tiles of each GEMM and of each fused
// attention chain, split over the MXUs as the lowering splits them (tiled.cpp,
// tiled_attention.cpp). Saturates at UINT64_MAX.
uint64_t mxu_instruction_cycles(const ChipConfig& config, const Workload& workload, int chip = 0);

// mxu_instruction_cycles / mxu.count, rounded down: cycles the chip's run lasts at least.
uint64_t mxu_cycles_lower_bound(const ChipConfig& config, const Workload& workload, int chip = 0);

}  // namespace systolic
