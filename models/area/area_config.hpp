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
  // DRAM PHY and controller per 1024 data bits of the memory bus (one HBM stack), at 7 nm:
  // LLMCompass's area model (Zhang et al., ISCA 2024, Table II; cost_model.py), measured on
  // annotated A100 and MI210 die photos: an HBM2e PHY is 10.45 mm^2 (analog: it does not shrink
  // with the node) and its controller 552.7 M transistors, 5.74 mm^2 at 7 nm's 96.3 MTr/mm^2.
  // A 7 nm figure, as every HBM preset is; tpu-v1.yaml sets its DDR3's own.
  double memory_phy_mm2_per_kbit = 10.45 + 552.743 / 96.3;
  // ICI SerDes and link layer per GB/s of a port's bandwidth in one direction, at 7 nm: the same
  // source's NVLink3 link (25 GB/s a direction on A100) is a 1.888 mm^2 PHY and a 74.6 M-transistor
  // controller (0.775 mm^2): 2.663 mm^2 / 25 GB/s. A port of ici.link_gbps is that many.
  double ici_mm2_per_gbps = (1.888 + 74.632 / 96.3) / 25.0;
  // Control, host interface, I/O and wiring as a share of the die: TPU v1's datapath is
  // "nearly two-thirds" of its die (Jouppi et al. 2017, Section 2), so one third.
  double uncore_fraction = 0.33;
  // Cost proxy: Poisson yield exp(-A * D0), a die amortised over its lifetime, energy bought.
  double defect_density_per_cm2 = 0.1;  // mature-node D0 (TSMC N7/N5 ~0.1 /cm^2 as reported, 2020)
  double lifetime_years = 4.0;          // amortisation period: assumption
  double usd_per_kwh = 0.10;            // electricity: assumption
};

}  // namespace systolic
