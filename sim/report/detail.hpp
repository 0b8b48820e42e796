#pragma once
// Shared by the two halves of report.json: each chip's section (sim/report/report.cpp) and the
// run's top level (sim/report/report_system.cpp), whose totals are summed from the chips'.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/chip/chip_config.hpp"
#include "models/isa/program.hpp"
#include "sim/simulate/simulate.hpp"
#include "sim/workload/workload.hpp"

namespace systolic::report_detail {

// PE-cycles that `macs` MACs of each type (indexed by DType) occupy at the chip's MAC rate for
// that type (mxu.rate.<type>): macs x cycles / products. Utilization is these over the PE-cycles
// available, so every type is measured against its own peak.
double pe_cycles(const ChipConfig& config, const std::array<uint64_t, kMxuDTypes>& macs);

// What a chip (or every chip of the run) counted, for its `totals`.
struct RunSums {
  uint64_t macs = 0;             // useful
  uint64_t macs_issued = 0;
  std::array<uint64_t, kMxuDTypes> macs_by_type{}, issued_by_type{};  // the same, per compute type
  uint64_t mxu_busy = 0;         // MXU cycles executing matmuls, summed over MXUs
  uint64_t hbm_read = 0, hbm_written = 0;  // by the DMA engines' descriptors
  uint64_t busiest_compute = 0;  // busy cycles of the busiest engine that is not a DMA engine
  uint64_t busiest_dma = 0;      // ... and of the busiest DMA engine
  void add(const RunSums& o);    // sums the counts, keeps the busiest
};

// The HBM traffic of a layer or a run, over its cycles.
struct MemoryCounts {
  uint64_t read = 0, written = 0, cycles = 0;
  uint64_t busiest_compute = 0, busiest_dma = 0;
};
// hbm_bytes_read/written, hbm_gbps, hbm_peak_share (of `chips` HBMs), dma_busy_cycles, bound.
void add_memory_fields(nlohmann::ordered_json& j, const ChipConfig& config, size_t chips, const MemoryCounts& c);

// cycles, seconds, macs, macs_issued, utilization and mapping_efficiency over `chips` chips'
// PEs, then the memory fields.
nlohmann::ordered_json totals_json(const ChipConfig& config, size_t chips, uint64_t cycles, const RunSums& sums);

// One chip's section of the report (chips[i] without `chip` and `ici_bytes_sent`): totals,
// layers, op_kinds, engines, memory, energy_pj; and the counts behind its totals.
struct ChipReport {
  nlohmann::ordered_json json;
  RunSums sums;
};
ChipReport make_chip_report(const ChipConfig& config, const Workload& workload, const Program& program,
                            const SimResult& result);

// The terminal summary of a one-chip run: its per-layer table and totals.
std::string format_chip_summary(const nlohmann::ordered_json& report);

// report.json's `mesh` (chip 0's groups: torus axes, rings) and `pipeline` (each stage's bubble
// and the GPipe closed form) sections, null without a mesh (or a pipeline); their summary lines
// (sim/report/report_mesh.cpp).
nlohmann::ordered_json mesh_json(const ChipConfig& config, const SharedWorkloads& workloads);
nlohmann::ordered_json pipeline_json(const SharedWorkloads& workloads, const std::vector<SharedProgram>& programs,
                                     const SystemResult& result);
std::string format_mesh_summary(const nlohmann::ordered_json& report);

}  // namespace systolic::report_detail
