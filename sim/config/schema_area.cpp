// Config keys of the area, technology and cost model (docs/area.md has every default and its
// source; models/area/area_config.hpp the struct).
#include "sim/config/schema_area.hpp"

#include "sim/config/values.hpp"

namespace systolic {

std::vector<ConfigKey> area_keys() {
  using namespace config_values;
  return {
      enum_key(CONFIG_KEY(area.node), kTechNodeNames,
               "Process node: scales logic area, SRAM bit cells, on-chip dynamic energy and wafer cost."),
      number_key(CONFIG_KEY(area.pe_overhead), 1.0, 100.0, "",
                 "Placed PE area over its bare multiplier, adder and registers (calibrated on TPU v1)."),
      number_key(CONFIG_KEY(area.sram_array_efficiency), 0.01, 1.0, "",
                 "Bit-cell share of an SRAM macro (calibrated on TPU v1's Unified Buffer)."),
      number_key(CONFIG_KEY(area.memory_phy_mm2_per_kbit), 0.0, 10000.0, "mm^2",
                 "DRAM PHY and controller per 1024 bits of memory bus (an HBM stack), 7 nm."),
      number_key(CONFIG_KEY(area.ici_mm2_per_gbps), 0.0, 1000.0, "mm^2 per GB/s",
                 "ICI SerDes and link layer per GB/s of a port (x ici.link_gbps x ici.ports)."),
      number_key(CONFIG_KEY(area.uncore_fraction), 0.0, 0.9, "",
                 "Share of the die that is control, host interface, I/O and wiring."),
      number_key(CONFIG_KEY(area.defect_density_per_cm2), 0.0, 10.0, "/cm^2",
                 "Defect density D0 of the Poisson yield exp(-area x D0)."),
      number_key(CONFIG_KEY(area.lifetime_years), 0.01, 100.0, "years",
                 "Years a die is amortised over, busy all the time, for the cost per token."),
      number_key(CONFIG_KEY(area.usd_per_kwh), 0.0, 100.0, "USD/kWh",
                 "Electricity price, for the cost per token."),
  };
}

}  // namespace systolic
