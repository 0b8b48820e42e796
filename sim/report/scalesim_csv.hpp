#pragma once
// SCALE-Sim-style per-layer reports (docs/workloads.md, "SCALE-Sim-style reports"), for scripts
// written against SCALE-Sim v2's output folder: COMPUTE_REPORT.csv, BANDWIDTH_REPORT.csv and
// DETAILED_ACCESS_REPORT.csv with SCALE-Sim's headers and separators (scalesim/simulator.py,
// generate_reports: ", " between fields, a comma ending each line), one row per matmul layer of
// a one-chip report. SCALE-Sim's ifmap, filter and ofmap are the MXU's A, B and C
// (`layers[i].operands` of report.json, sim/report/operands.hpp); counts are bytes (SCALE-Sim's
// words are one byte).
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/chip/chip_config.hpp"

namespace systolic {

// The three files' names and texts, in that order. Throws InputError for a multi-chip report.
std::vector<std::pair<std::string, std::string>> scalesim_reports(const ChipConfig& config,
                                                                  const nlohmann::ordered_json& report);

}  // namespace systolic
