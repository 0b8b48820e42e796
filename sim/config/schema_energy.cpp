// Config keys of the energy model (docs/energy.md lists every default with its source).
#include "sim/config/schema_energy.hpp"

#include "sim/config/values.hpp"

namespace systolic {

std::vector<ConfigKey> energy_keys() {
  using namespace config_values;
  std::vector<ConfigKey> k;
  const auto pj = [&](const std::string& key, auto ref, const char* unit, const std::string& doc) {
    k.push_back(number_key(key, ref, 0.0, 1e9, unit, doc));
  };
  pj("energy.tech_scale", [](auto& c) -> auto& { return c.energy.tech_scale; }, "",
     "Multiplies every dynamic energy below (45 nm values; e.g. ~0.3 for 7 nm).");
  for (size_t t = 0; t < kMxuDTypes; ++t) {  // int4 never reaches the MXU: no MAC energy
    const std::string name(kDTypeNames.name(static_cast<DType>(t)));
    pj("energy.mac_" + name + "_pj", [t](auto& c) -> auto& { return c.energy.mac_pj[t]; }, "pJ",
       "One " + name + " multiply-accumulate (multiplier + accumulator adder).");
  }
  pj("energy.pe_idle_pj", [](auto& c) -> auto& { return c.energy.pe_idle_pj; }, "pJ",
     "A PE for one cycle without a MAC (clock-gated).");
  const char* pads[] = {"vmem", "weights", "accumulators"};
  for (size_t p = 0; p < 3; ++p) {
    const std::string name = pads[p];
    pj("energy." + name + "_read_pj_per_byte", [p](auto& c) -> auto& { return c.energy.sram_read_pj_per_byte[p]; },
       "pJ/B", "Reading one byte of " + name + ".");
    pj("energy." + name + "_write_pj_per_byte", [p](auto& c) -> auto& { return c.energy.sram_write_pj_per_byte[p]; },
       "pJ/B", "Writing one byte of " + name + ".");
  }
  pj("energy.hbm_read_pj_per_byte", [](auto& c) -> auto& { return c.energy.hbm_read_pj_per_byte; }, "pJ/B",
     "Reading one byte of HBM/DRAM.");
  pj("energy.hbm_write_pj_per_byte", [](auto& c) -> auto& { return c.energy.hbm_write_pj_per_byte; }, "pJ/B",
     "Writing one byte of HBM/DRAM.");
  pj("energy.dma_pj_per_byte", [](auto& c) -> auto& { return c.energy.dma_pj_per_byte; }, "pJ/B",
     "A DMA engine moving one byte.");
  pj("energy.vpu_op_pj", [](auto& c) -> auto& { return c.energy.vpu_op_pj; }, "pJ", "One vector-unit operation.");
  pj("energy.ici_pj_per_byte", [](auto& c) -> auto& { return c.energy.ici_pj_per_byte; }, "pJ/B",
     "One byte over a chip-to-chip link.");
  pj("energy.mxu_static_w", [](auto& c) -> auto& { return c.energy.mxu_static_w; }, "W", "Static power per MXU.");
  pj("energy.sram_static_w", [](auto& c) -> auto& { return c.energy.sram_static_w; }, "W",
     "Static power of all scratchpads.");
  pj("energy.hbm_static_w", [](auto& c) -> auto& { return c.energy.hbm_static_w; }, "W",
     "Static power of the HBM (refresh, PHY, idle).");
  return k;
}

}  // namespace systolic
