#pragma once
// report.json (schema in docs/report.md; bump kReportSchemaVersion on any incompatible change)
// and the terminal summary printed from it.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/isa/program.hpp"
#include "sim/config/config.hpp"
#include "sim/run/simulate.hpp"
#include "sim/workload/workload.hpp"

namespace systolic {

constexpr int kReportSchemaVersion = 1;

nlohmann::ordered_json make_report(const ChipConfig& config, const Workload& workload,
                                   const Program& program, const SimResult& result);

// A multi-chip run: the system, each chip's report (without the shared config), every ICI
// link, every collective (time and exposed time on the slowest chip), totals and energy.
nlohmann::ordered_json make_system_report(const ChipConfig& config, const std::vector<Workload>& workloads,
                                          const std::vector<Program>& programs, const SystemResult& result);
std::string format_system_summary(const nlohmann::ordered_json& report);

// Per-layer table and totals, for the terminal.
std::string format_summary(const nlohmann::ordered_json& report);

// How memory was timed, for report.json's `memory_timing`: "real", or "ideal" (the what-if
// memory.ideal: transfers take no time, so every time is a lower bound).
const char* memory_timing(const ChipConfig& config);
// The summaries' line saying so (from a report's `config`).
std::string memory_timing_line(const nlohmann::ordered_json& config);

// Writes via a temporary file and rename, so a reader never sees a partial file.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace systolic
