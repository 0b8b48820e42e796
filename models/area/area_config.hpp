#pragma once
// What the area and cost model needs beyond the blocks' own sizes: the process node and the
// per-unit figures (docs/area.md has every default and its source). Part of the chip
// description (ChipConfig::area); the model itself is models/chip/chip_area.hpp.
#include "models/area/technology.hpp"

namespace systolic {

struct AreaConfig {
  TechNode node = TechNode::n45;  // the reference node of the energy table (Horowitz 2014)
  // A placed-and-routed PE (pipeline registers, clock tree, wiring, utilisation) over its bare
  // multiplier, adder and register cells. Calibrated once on TPU v1: its 256x256 int8 MXU is
  // 24 % of a 331 mm^2 28 nm die (Jouppi et al., ISCA 2017, Figure 2 and Table 2): 1212 um^2 per
  // PE against 672 um^2 x 0.387 bare, so 4.66 (docs/area.md, "Calibration").
  double pe_overhead = 4.66;
  // Bit cells over SRAM macro area (periphery, sense amplifiers, decoders, banking, ports).
  // Calibrated once on TPU v1: its 24 MiB Unified Buffer is 29 % of the die, 4.0 mm^2/MiB
  // against 1.065 mm^2/MiB of 0.127 um^2 cells: 0.27.
  double sram_array_efficiency = 0.27;
  // DRAM PHY and controller per 1024 data bits of the memory bus (one HBM2 stack): assumption,
  // ~12 mm^2, not from a retrieved datasheet.
  double memory_phy_mm2_per_kbit = 12.0;
  double ici_mm2_per_port = 6.0;  // SerDes and link layer per ICI port: assumption
  // Control, host interface, I/O and wiring as a share of the die: TPU v1's datapath is
  // "nearly two-thirds" of its die (Jouppi et al. 2017, Section 2), so one third.
  double uncore_fraction = 0.33;
  // Cost proxy: Poisson yield exp(-A * D0), a die amortised over its lifetime, energy bought.
  double defect_density_per_cm2 = 0.1;  // mature-node D0 (TSMC N7/N5 ~0.1 /cm^2 as reported, 2020)
  double lifetime_years = 4.0;          // amortisation period: assumption
  double usd_per_kwh = 0.10;            // electricity: assumption
};

}  // namespace systolic
