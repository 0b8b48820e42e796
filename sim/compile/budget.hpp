#pragma once
// What one run may cost, estimated before the work and refused past a limit (docs/reliability.md,
// "Limits"): a 4096^3 GEMM on a 4x4 array would tile into ~10^7 instructions (gigabytes), and
// the exact model on a large GEMM steps every PE every cycle (hours). Each limit's message gives
// the estimate and the option that raises it.
#include <cstdint>
#include <string>
#include <vector>

#include "models/chip/chip_config.hpp"
#include "models/isa/program.hpp"
#include "sim/workload/workload.hpp"

namespace systolic {

struct Budget {
  // Instructions of a run (--max-instructions), each distinct workload counted once (chips that
  // run the same workload hold one program: compile_system), as estimated: a lower bound the
  // compile then exceeds by 1.4x to 3.6x (a 65,536-layer tiny-lm at 1x8: 1,638,405 estimated,
  // 2.36 M compiled, 1.18 GB and 12 s). An instruction costs ~0.5 KB (compiling 1024^3 on
  // tiny-4x4: 134,144 instructions, 97 MB peak), so a run at the limit holds ~0.7 to ~1.8 GB of
  // them. Llama 2 70B TP8 prefill at 1x2048 on tpu-v5e-8, the largest shipped run, has 174,758
  // per chip, one workload for the 8 chips.
  uint64_t max_instructions = 1'000'000;
  // PE-cycles of the exact MXU model: the sum over matmuls of cycles x rows x cols
  // (--max-pe-cycles). It steps ~5 x 10^8 a second (1024^3 on tiny-4x4: 1.08 x 10^9 in
  // 2.2 s), so this is about 40 s.
  uint64_t max_pe_cycles = 20'000'000'000;
  // Chunks the ICI network moves, one event each (--max-ici-chunks): a message crosses in
  // chunks of ici.chunk_bytes, so ici.chunk_bytes=1 turns a 64 KiB message into 65,536. Llama 2
  // 70B TP8 prefill at 1x2048, the largest shipped run (5.5 s), moves 1,146,944.
  uint64_t max_ici_chunks = 20'000'000;
};

// A lower bound of the instructions compile() emits for `workload`: per tile of every GEMM
// instance a multiply, a weight load (one per panel tile when the weights are outer), and an
// activation load and a store per activation and output tile; one per block pair of a fused
// attention, one per vector op and collective.
// Saturates at UINT64_MAX.
uint64_t estimate_instructions(const ChipConfig& config, const Workload& workload);

// Throws InputError "<what>: about N instructions (...), more than --max-instructions M ..."
void check_instructions(uint64_t estimate, const Budget& budget, const std::string& what);

// The exact model's PE-cycles for `program` (0 under mxu.model = fast), and the check of the
// sum over a run's chips.
uint64_t estimate_pe_cycles(const ChipConfig& config, const Program& program);
void check_pe_cycles(const ChipConfig& config, uint64_t estimate, const Budget& budget, const std::string& what);

// A compiled trace's matmuls are not bounded by a compile: refuses a program whose matmuls'
// closed-form cycles, all in a row, pass the simulated-time range (models/common/clock.hpp;
// a trace matmul with m = 2^58 ended in SystemC's time-overflow error, exit 1), as compile()
// does for a workload.
void check_matmul_cycle_range(const ChipConfig& config, const Program& program, const std::string& what);

// The ICI chunks of `program`'s messages (each message: ceil(bytes / ici.chunk_bytes)), and
// the check of the sum over a system's chips.
uint64_t estimate_ici_chunks(const ChipConfig& config, const Program& program);
void check_ici_chunks(const ChipConfig& config, uint64_t estimate, const Budget& budget, const std::string& what);

}  // namespace systolic
