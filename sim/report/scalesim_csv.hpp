#pragma once
// SCALE-Sim-style per-layer reports (docs/workloads.md, "SCALE-Sim .cfg files"), for scripts
// written against SCALE-Sim v2's output folder.
#include <string>

#include <nlohmann/json.hpp>

namespace systolic {

// COMPUTE_REPORT.csv with SCALE-Sim v2's header and separators (scalesim/simulator.py,
// generate_reports), one row per matmul layer of a one-chip report: LayerID, Total Cycles (this
// simulator's count: under mxu.convention=scalesim, SCALE-Sim's Total Cycles + 1), Stall Cycles
// (the MXUs' cycles waiting on their semaphores), Overall Util %, Mapping Efficiency %. SCALE-Sim's
// last column, Compute Util %, and its BANDWIDTH_REPORT.csv and DETAILED_ACCESS_REPORT.csv need
// per-operand SRAM and DRAM counts that the report does not keep per layer, so they are not
// written. Throws InputError for a multi-chip report.
std::string scalesim_compute_report(const nlohmann::ordered_json& report);

}  // namespace systolic
