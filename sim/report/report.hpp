#pragma once
// report.json (schema in docs/report.md; bump kReportSchemaVersion on any incompatible change)
// and the terminal summary printed from it.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/chip/chip_config.hpp"
#include "models/isa/program.hpp"
#include "sim/simulate/simulate.hpp"
#include "sim/workload/workload.hpp"

namespace systolic {

// 2: every run is a system; a single chip's layers, engines, memory moved into chips[0], and
// totals and energy_pj are the same fields for one chip and for many (docs/report.md, "Migrating
// from version 1").
constexpr int kReportSchemaVersion = 2;

// report.json of a run of programs[i] on chip i (one chip: a one-chip system): the system, its
// totals and energy, every collective (time and exposed time on the slowest chip) and ICI link,
// and each chip's own section (layers, op kinds, engines, memory, energy), with the area, power
// and efficiency of the chips (sim/report/cost.hpp; per token when `tokens` > 0: a model's
// bucket shape).
// Chips that share a workload, a program and a simulated chip's results share their section.
nlohmann::ordered_json make_report(const ChipConfig& config,
                                   const std::vector<std::shared_ptr<const Workload>>& workloads,
                                   const std::vector<SharedProgram>& programs, const SystemResult& result,
                                   int64_t tokens = 0);

// For the terminal: one chip's per-layer table and totals, or a system's per-chip and
// per-collective tables.
std::string format_summary(const nlohmann::ordered_json& report);

// How memory was timed, for report.json's `memory_timing`: "real", or "ideal" (the what-if
// memory.ideal: transfers take no time, so every time is a lower bound).
const char* memory_timing(const ChipConfig& config);
// The summaries' line saying so (from a report's `config`).
std::string memory_timing_line(const nlohmann::ordered_json& config);

// Writes via a temporary file and rename, so a reader never sees a partial file.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace systolic
