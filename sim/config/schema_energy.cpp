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
  pj(CONFIG_KEY(energy.tech_scale), "",
     "Multiplies every dynamic energy below, on top of area.node's factor for on-chip events.");
  for (size_t t = 0; t < kMxuDTypes; ++t) {  // int4 never reaches the MXU: no MAC energy
    const std::string name(kDTypeNames.name(static_cast<DType>(t)));
    pj("energy.mac_" + name + "_pj", [t](auto& c) -> auto& { return c.energy.mac_pj[t]; }, "pJ",
       "One " + name + " multiply-accumulate (multiplier + accumulator adder).");
  }
  pj(CONFIG_KEY(energy.pe_idle_pj), "pJ", "A PE for one cycle without a MAC (clock-gated).");
  pj(CONFIG_KEY(energy.sram_pj_per_64b_at_8kib), "pJ",
     "A 64-bit SRAM access from an 8 KiB bank; larger banks cost more (sram_size_exponent).");
  k.push_back(
      number_key(CONFIG_KEY(energy.sram_size_exponent), 0.0, 2.0, "",
                 "SRAM access energy grows as (bank bytes / 8 KiB)^this; bank = scratchpad bytes / banks."));
  pj(CONFIG_KEY(energy.hbm_read_pj_per_byte), "pJ/B", "Reading one byte of HBM/DRAM.");
  pj(CONFIG_KEY(energy.hbm_write_pj_per_byte), "pJ/B", "Writing one byte of HBM/DRAM.");
  pj(CONFIG_KEY(energy.dma_pj_per_byte), "pJ/B", "A DMA engine moving one byte.");
  pj(CONFIG_KEY(energy.vpu_op_pj), "pJ", "One vector-unit operation.");
  pj(CONFIG_KEY(energy.ici_pj_per_byte), "pJ/B", "One byte over a chip-to-chip link.");
  pj(CONFIG_KEY(energy.mxu_static_w), "W",
     "Static power per 128 x 128 PEs of MXU (scales with rows x cols x count).");
  pj(CONFIG_KEY(energy.sram_static_w_per_mib), "W/MiB",
     "Static power per MiB of scratchpad (vmem, weights and accumulators).");
  pj(CONFIG_KEY(energy.hbm_static_w), "W", "Static power of the HBM (refresh, PHY, idle).");
  return k;
}

}  // namespace systolic
