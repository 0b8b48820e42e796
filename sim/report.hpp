#pragma once
// report.json (schema in docs/report.md; bump kReportSchemaVersion on any incompatible change)
// and the terminal summary printed from it.
#include <string>

#include <nlohmann/json.hpp>

#include "sim/config.hpp"
#include "sim/program.hpp"
#include "sim/simulate.hpp"
#include "sim/workload.hpp"

namespace systolic {

constexpr int kReportSchemaVersion = 1;

nlohmann::ordered_json make_report(const ChipConfig& config, const Workload& workload,
                                   const Program& program, const SimResult& result);

// Per-layer table and totals, for the terminal.
std::string format_summary(const nlohmann::ordered_json& report);

// Writes via a temporary file and rename, so a reader never sees a partial file.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace systolic
