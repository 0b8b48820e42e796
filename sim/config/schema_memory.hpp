#pragma once
#include <vector>

#include "sim/config/schema.hpp"

namespace systolic {
// The keys of the memory system, section by section: HBM, scratchpads, DMA, vector unit.
std::vector<ConfigKey> hbm_keys();
std::vector<ConfigKey> sram_keys();
std::vector<ConfigKey> dma_keys();
std::vector<ConfigKey> vpu_keys();
}  // namespace systolic
