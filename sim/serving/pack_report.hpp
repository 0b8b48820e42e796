#pragma once
// `systolic pack` short of printing (docs/replay.md, docs/serving.md): reads the log and the
// bucket sets, checks them against the chip, and for each set packs the log (the work table,
// replay.hpp) and serves it through a scheduler on the chip (the serving engine with
// SimulatedStepCost): per-request records, latency percentiles, SLO attainment, the overload line.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/chip/chip_config.hpp"
#include "sim/serving/engine.hpp"
#include "sim/serving/setup.hpp"

namespace systolic {

// The version of the pack-specific keys of report.json (docs/report.md, "pack reports"); 2:
// `latency` replaced by `serving`; 3: multi-chip replicas (`tp`, `chips`); 4: the work table is
// the serving replay's steps (`packing` removed; rows `varlen`, `cells`).
constexpr int kPackSchemaVersion = 4;

struct PackOutput {
  nlohmann::ordered_json report;    // report.json: the first set at the top level, every set in "replays"
  nlohmann::ordered_json timeline;  // Chrome trace events of the serving replays (when asked for)
  nlohmann::ordered_json lanes;     // the first set's lane view (packing/lane_view.hpp; when asked for)
  std::vector<std::string> warnings;            // what the log reader noticed
  std::vector<serving::ServeResult> serving;    // one per bucket set, for requests.csv
};

// Throws InputError before any simulation for bad input.
PackOutput pack_report(const ChipConfig& config, const PackRequest& request, bool with_timeline = false,
                       bool with_lanes = false);

}  // namespace systolic
