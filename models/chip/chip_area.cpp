#include "models/chip/chip_area.hpp"

#include <algorithm>
#include <numeric>

#include "models/area/pe_area.hpp"
#include "models/area/sram_model.hpp"

namespace systolic {

static_assert(kAreaBlockNames.dense() && kAreaBlockNames.size() == kAreaBlocks);

double ChipArea::total() const { return std::accumulate(mm2.begin(), mm2.end(), 0.0); }

ChipArea chip_area(const ChipConfig& config) {
  const AreaConfig& a = config.area;
  const NodeFactors& node = node_factors(a.node);
  const double logic = a.pe_overhead * node.logic_area * 1e-6;  // um^2 at 45 nm -> mm^2 placed
  ChipArea out;
  auto set = [&](AreaBlock b, double v) { out.mm2[static_cast<size_t>(b)] = v; };
  // A PE that packs several products a cycle (mxu.rate) has that many multipliers and adders.
  const double products = std::max(1.0, config.mxu.rate_of(config.mxu.dtype).per_cycle());
  const double pes = static_cast<double>(config.mxu.rows * config.mxu.cols * config.mxu.count);
  set(AreaBlock::mxu, pes * products * pe_um2_at_45nm(config.mxu.dtype) * logic);
  set(AreaBlock::vmem, sram_mm2(config.sram.vmem.capacity_bytes, node, a.sram_array_efficiency));
  set(AreaBlock::weights, sram_mm2(config.sram.weights.capacity_bytes, node, a.sram_array_efficiency));
  set(AreaBlock::accumulators,
      sram_mm2(config.sram.accumulators.capacity_bytes, node, a.sram_array_efficiency));
  const double alus = static_cast<double>(config.vpu.lanes * config.vpu.sublanes);
  set(AreaBlock::vpu, alus * vector_alu_um2_at_45nm() * logic);
  const double bus_bits = static_cast<double>(config.hbm.pseudo_channel_count() * config.hbm.bus_bits);
  set(AreaBlock::memory_phy, bus_bits / 1024.0 * a.memory_phy_mm2_per_kbit);
  const bool linked = config.ici.topology != IciTopologyKind::none;
  // SerDes area grows with the lanes, so with the bandwidth a port carries.
  set(AreaBlock::ici,
      linked ? static_cast<double>(config.ici.ports) * config.ici.link_gbps * a.ici_mm2_per_gbps : 0.0);
  // The uncore is a share of the die: blocks / (1 - share) - blocks.
  const double blocks = out.total();
  set(AreaBlock::uncore, blocks * a.uncore_fraction / (1.0 - a.uncore_fraction));
  return out;
}

}  // namespace systolic
