#pragma once
// Per-event energies and static power of a chip: part of the chip description (ChipConfig).
// The energy model that multiplies them by a run's event counts is sim/report/energy.hpp;
// docs/energy.md has every default and its source.
#include <array>

#include "models/common/dtype.hpp"

namespace systolic {

struct EnergyConfig {
  // Dynamic energy per event at 45 nm (Horowitz, ISSCC 2014), scaled by tech_scale.
  double tech_scale = 1.0;
  // One multiply-accumulate per operand type: the multiplier plus the accumulator's adder
  // (int32 for int8, fp32 for floats). Multiplier energy of narrow floats scales with
  // (mantissa bits + 1)^2 from fp16 (Dean 2019): e4m3 16/121, e5m2 9/121, bf16 64/121.
  std::array<double, kMxuDTypes> mac_pj = {0.3, 1.05, 1.0, 1.48, 2.0, 4.6};  // indexed by DType
  double pe_idle_pj = 0.02;  // a clock-gated PE for one cycle (assumption: ~2 % of a bf16 MAC)
  // SRAM per byte: an 8 KiB array reads 64 bits for ~10 pJ; MiB-scale arrays cost more
  // (Horowitz: 1 MiB ~100 pJ per 64 bits); writes as reads.
  std::array<double, 3> sram_read_pj_per_byte = {12.5, 12.5, 2.5};   // vmem, weights, accumulators
  std::array<double, 3> sram_write_pj_per_byte = {12.5, 12.5, 2.5};
  double hbm_read_pj_per_byte = 31.2;  // HBM2 ~3.9 pJ/bit (O'Connor et al., MICRO 2017)
  double hbm_write_pj_per_byte = 31.2;
  double dma_pj_per_byte = 1.0;        // descriptor walking and on-chip wires (assumption)
  double vpu_op_pj = 0.9;              // one fp32 add-class operation
  double ici_pj_per_byte = 10.0;       // chip-to-chip SerDes ~1.25 pJ/bit x 8 (assumption)
  // Static power, W (assumptions for a TPU-class chip; 0 disables).
  double mxu_static_w = 2.0;    // per MXU
  double sram_static_w = 1.0;   // all scratchpads together
  double hbm_static_w = 3.0;
};

}  // namespace systolic
