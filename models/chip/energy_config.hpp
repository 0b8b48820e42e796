#pragma once
// Per-event energies and static power of a chip: part of the chip description (ChipConfig).
// The energy model that multiplies them by a run's event counts is sim/report/energy.hpp;
// docs/energy.md has every default and its source.
#include <array>

#include "models/common/dtype.hpp"

namespace systolic {

struct EnergyConfig {
  // Dynamic energy per event at 45 nm (Horowitz, ISSCC 2014). On-chip events scale by the
  // node's dynamic-energy factor (area.node, models/area/technology.hpp); all by tech_scale.
  double tech_scale = 1.0;
  // One multiply-accumulate per operand type: the multiplier plus the accumulator's adder
  // (int32 for int8, fp32 for floats). Multiplier energy of narrow floats scales with
  // (mantissa bits + 1)^2 from fp16 (Dean 2019): e4m3 16/121, e5m2 9/121, bf16 64/121.
  std::array<double, kMxuDTypes> mac_pj = {0.3, 1.05, 1.0, 1.48, 2.0, 4.6};  // indexed by DType
  double pe_idle_pj = 0.02;  // a clock-gated PE for one cycle (assumption: ~2 % of a bf16 MAC)
  // SRAM per byte, by the size of the bank read (models/area/sram_model.hpp): a 64-bit access
  // costs sram_pj_per_64b_at_8kib x (bank bytes / 8 KiB)^sram_size_exponent. Horowitz: 8 KiB
  // 10 pJ, 32 KiB 20 pJ, 1 MiB ~100 pJ per 64 bits; exponent 0.5 fits them. Writes as reads.
  double sram_pj_per_64b_at_8kib = 10.0;
  double sram_size_exponent = 0.5;
  double hbm_read_pj_per_byte = 31.2;  // HBM2 ~3.9 pJ/bit (O'Connor et al., MICRO 2017)
  double hbm_write_pj_per_byte = 31.2;
  double dma_pj_per_byte = 1.0;        // descriptor walking and on-chip wires (assumption)
  double vpu_op_pj = 0.9;              // one fp32 add-class operation
  double ici_pj_per_byte = 10.0;       // chip-to-chip SerDes ~1.25 pJ/bit x 8 (assumption)
  // Static power, W (assumptions for a TPU-class chip; 0 disables). Leakage grows with what
  // leaks: the MXUs' PEs and the SRAM's bits; neither scales with the node (docs/energy.md).
  double mxu_static_w = 2.0;                // per 128 x 128 PEs of MXU
  double sram_static_w_per_mib = 1.0 / 24;  // the default 24 MiB of scratchpads: 1 W
  double hbm_static_w = 3.0;
};

}  // namespace systolic
