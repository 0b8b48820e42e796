#pragma once
// `systolic capacity` short of printing (docs/serving.md, "Capacity"): the capacity searches
// (capacity.hpp) on the chip simulator, with the setup `pack` uses (setup.hpp): one bucket set,
// one scheduler, the log as offered (--rate-scale, --poisson), SLOs required.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/chip/chip_config.hpp"
#include "models/common/names.hpp"
#include "sim/serving/setup.hpp"

namespace systolic {

// The version of capacity.json (docs/report.md, "capacity reports").
constexpr int kCapacitySchemaVersion = 1;

// Which question: the highest rate one replica sustains, the fewest replicas for the log, or both.
enum class CapacitySearch { rate, replicas, both };
inline constexpr auto kCapacitySearchNames = name_table<CapacitySearch>(
    {{CapacitySearch::rate, "rate"}, {CapacitySearch::replicas, "replicas"}, {CapacitySearch::both, "both"}});
static_assert(kCapacitySearchNames.dense());

struct CapacityRequest {
  PackRequest serving;  // its replicas are not used: the replica search chooses them
  std::string search = "both";
  double target = 0.99;
  double tolerance = 0.01;
  int64_t max_replicas = 4096;
};

struct CapacityOutput {
  nlohmann::ordered_json report;  // capacity.json
  std::string csv;                // capacity.csv: one row per replay of the searches
  std::string text;               // for the terminal
  std::vector<std::string> warnings;
};

// Throws InputError before any simulation for bad input.
CapacityOutput capacity_report(const ChipConfig& config, const CapacityRequest& request);

}  // namespace systolic
