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

namespace systolic {

// The version of the pack-specific keys of report.json (docs/report.md, "pack reports"); 2:
// `latency` replaced by `serving`.
constexpr int kPackSchemaVersion = 2;

struct PackRequest {
  std::string model;
  std::string requests;
  std::vector<std::string> bucket_files;
  std::string packer = "first-fit-decreasing";  // also ff, ffd, bf
  double window_ms = 0;
  std::string overflow = "reject";
  bool compile_new_shapes = false;
  double compile_stall_s = 30;
  bool skip_bad_lines = false;
  // The serving replay. `continuous` is the closest to what pack did before it had the engine:
  // prompts in the prefill buckets as they arrive, decode continuously batched into a
  // [B slots, L] shape, all on the one chip the config describes.
  std::string scheduler = "continuous";
  int64_t chunk_tokens = serving::ServeOptions{}.chunk_tokens;  // chunked: prompt tokens per step
  std::optional<double> slo_ttft_s;  // both or neither
  std::optional<double> slo_tbt_s;
  // Capacity questions: replicas of the chip behind a router; the log's arrivals sped up, or
  // replaced by Poisson arrivals with its lengths (seeded).
  int64_t replicas = 1;
  std::string router = "round-robin";
  std::optional<double> rate_scale;
  std::optional<double> poisson_qps;
  uint64_t seed = 1;
};

struct PackOutput {
  nlohmann::ordered_json report;    // report.json: the first set at the top level, every set in "replays"
  nlohmann::ordered_json timeline;  // Chrome trace events of the serving replays (when asked for)
  std::vector<std::string> warnings;            // what the log reader noticed
  std::vector<serving::ServeResult> serving;    // one per bucket set, for requests.csv
};

// Throws InputError before any simulation for bad input.
PackOutput pack_report(const ChipConfig& config, const PackRequest& request, bool with_timeline = false);

}  // namespace systolic
