#pragma once
// SRAM as a function of its size: macro area from the node's bit cell and the array
// efficiency, and access energy from the bank it is read from (a bigger bank has longer word
// and bit lines). docs/area.md, "SRAM", and docs/energy.md, "SRAM energy by size".
#include <cstdint>

#include "models/area/technology.hpp"

namespace systolic {

// mm^2 of `bytes` of SRAM at `node` whose bit cells fill `efficiency` of the macro.
double sram_mm2(uint64_t bytes, const NodeFactors& node, double efficiency);

// pJ per byte read or written at 45 nm from a bank of `bank_bytes`: a 64-bit access costs
// pj_64b_at_8kib x (bank_bytes / 8 KiB)^exponent. Horowitz (ISSCC 2014) gives 10 pJ for 8 KiB,
// 20 pJ for 32 KiB and ~100 pJ for 1 MiB: exponent 0.5 fits all three within 13 %.
double sram_pj_per_byte(uint64_t bank_bytes, double pj_64b_at_8kib, double exponent);

}  // namespace systolic
