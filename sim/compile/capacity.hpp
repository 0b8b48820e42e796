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

// What `workload` needs of HBM in the layout the compiler gives it (require_hbm_fits checks
// the sum): the serving replay takes its KV budget from these parts (docs/serving.md, "KV budget").
struct HbmNeed {
  uint64_t weights = 0;      // the parameters
  uint64_t kv_cache = 0;     // keys and values of every attention layer at this shape
  uint64_t activations = 0;  // transient regions and collective buffers
};
HbmNeed hbm_need(const ChipConfig& config, const Workload& workload);

// The HBM a compiled program touches: one past the highest byte any DMA descriptor or ICI
// copy through HBM addresses (0 when none does).
uint64_t program_hbm_footprint(const Program& program);

// Throws InputError when a compiled program (the trace `path`) touches HBM at or past
// config.hbm.capacity_bytes.
void require_program_fits(const ChipConfig& config, const Program& program, const std::string& path);

}  // namespace systolic
