#pragma once
// HBM capacity (docs/memory.md, "HBM layout and footprint"). A run whose tensors do not fit
// the chip's HBM is refused before anything is simulated or written, whatever memory.ideal
// says: nothing reports the timing of a model that could not be resident.
#include <cstdint>
#include <string>

#include "models/chip/chip_config.hpp"
#include "models/isa/program.hpp"
#include "sim/workload/workload.hpp"

namespace systolic {

// Throws InputError when `workload` (on a multi-chip system, chip `chip`'s share) needs more
// HBM than config.hbm.capacity_bytes. The message starts with `where` (default: the workload's
// file and name), gives the bytes needed (weights, KV cache, activations, in GB) against the
// key and its value, and what would make it fit: --tp, int8 weights, a smaller bucket, or a
// larger capacity as a what-if.
void require_hbm_fits(const ChipConfig& config, const Workload& workload, int chip = 0,
                      const std::string& where = {});

// The HBM a compiled program touches: one past the highest byte any DMA descriptor or ICI
// copy through HBM addresses (0 when none does).
uint64_t program_hbm_footprint(const Program& program);

// Throws InputError when a compiled program (the trace `path`) touches HBM at or past
// config.hbm.capacity_bytes.
void require_program_fits(const ChipConfig& config, const Program& program, const std::string& path);

}  // namespace systolic
