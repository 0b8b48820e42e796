#pragma once
// The energy model: event counts, kept by the blocks themselves, times per-event energies
// from the config, plus static power times simulated time (docs/energy.md has every default
// and its source). Components and op kinds partition the same total, so each breakdown
// sums to it exactly.
#include <array>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "models/chip/chip_config.hpp"
#include "models/common/dtype.hpp"

namespace systolic {

// What the blocks counted during a run.
struct EnergyCounts {
  std::array<uint64_t, kMxuDTypes> macs{};       // issued MACs per operand type (pads included)
  uint64_t pe_idle_cycles = 0;           // PE-cycles of MXUs that were not a MAC
  std::array<uint64_t, 3> mxu_sram_read{}, mxu_sram_write{};  // operand traffic of the MXUs
  std::array<uint64_t, 3> dma_sram_read{}, dma_sram_write{};  // fills and drains by the DMA
  uint64_t hbm_read = 0, hbm_written = 0;
  uint64_t dma_bytes = 0;
  uint64_t vpu_ops = 0;                  // element operations
  std::array<uint64_t, 3> vpu_sram_read{}, vpu_sram_write{};  // vmem; weights (dequantise)
  uint64_t ici_bytes = 0;
  double seconds = 0;
};

// {"total": ..., "by_component": {...}, "by_op_kind": {...}}, all in pJ.
// SRAM energies follow each scratchpad's bank size and on-chip energies the node (area.node).
nlohmann::ordered_json energy_report(const ChipConfig& config, const EnergyCounts& counts);

// The chip's leakage, W: MXU PEs, scratchpad MiB, HBM (docs/energy.md).
double static_power_w(const ChipConfig& config);

}  // namespace systolic
