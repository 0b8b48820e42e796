#pragma once
// The area of a chip, block by block, from its description (docs/area.md): the MXUs' PEs, each
// scratchpad, the VPU's ALUs, the DRAM PHYs, the ICI ports, and the uncore (control, host
// interface, I/O, wiring) as a share of the whole. The blocks add up to the total exactly.
#include <array>

#include "models/chip/chip_config.hpp"
#include "models/common/names.hpp"

namespace systolic {

enum class AreaBlock { mxu, vmem, weights, accumulators, vpu, memory_phy, ici, uncore };
inline constexpr auto kAreaBlockNames = name_table<AreaBlock>({{AreaBlock::mxu, "mxu"},
                                                               {AreaBlock::vmem, "vmem"},
                                                               {AreaBlock::weights, "weights"},
                                                               {AreaBlock::accumulators, "accumulators"},
                                                               {AreaBlock::vpu, "vpu"},
                                                               {AreaBlock::memory_phy, "memory_phy"},
                                                               {AreaBlock::ici, "ici"},
                                                               {AreaBlock::uncore, "uncore"}});
inline constexpr size_t kAreaBlocks = 8;

struct ChipArea {
  std::array<double, kAreaBlocks> mm2{};  // indexed by AreaBlock
  double total() const;
  double of(AreaBlock b) const { return mm2[static_cast<size_t>(b)]; }
};

ChipArea chip_area(const ChipConfig& config);

}  // namespace systolic
