#pragma once
// The compiler: lowers a workload to a program for one chip configuration.
// A layer's input is the previous layer's output, so layers run in order; the MXUs split each
// layer's column folds. The compiler tiles each GEMM to the scratchpads and emits DMA transfers
// from and to HBM, ping/pong buffers and the semaphores between them (docs/memory.md). The same
// program serves both memory modes: memory.ideal only changes how its transfers are timed.
#include <memory>
#include <vector>

#include "models/chip/chip_config.hpp"
#include "models/isa/program.hpp"
#include "sim/compile/budget.hpp"
#include "sim/workload/workload.hpp"

namespace systolic {

// Throws InputError naming the workload entry when a layer cannot run on this chip
// (e.g. its cycle count overflows 64 bits), and when the workload does not fit the chip's HBM
// (sim/compile/capacity.hpp), with either memory mode.
// `chip` is the chip of a multi-chip system the program is for (its collectives depend on it).
// Refuses, before tiling, a workload estimated past budget.max_instructions (budget.hpp).
Program compile(const ChipConfig& config, const Workload& workload, int chip = 0, const Budget& budget = {});

// One program per chip of the system: workloads[i] for chip i. Memory grows with the distinct
// instructions, not chips x instructions: chips whose programs are equal share one object,
// and a stream equal to another chip's shares its list (InstructionList). Only collectives
// depend on the chip, so the chips whose workloads are equal but for which chips
// (Workload::equal_but_chips) compile once and lower only their collectives each, and a
// workload without any compiles once for every chip that has it. The instruction budget counts
// each distinct (equal) workload once.
std::vector<SharedProgram> compile_system(const ChipConfig& config, const std::vector<Workload>& workloads,
                                          const Budget& budget = {});

}  // namespace systolic
