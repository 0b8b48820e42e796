#pragma once
// Replaying a request log on a static-shape chip (docs/replay.md): pack the requests into the
// bucket set's shapes, simulate each distinct shape once (static hardware: its cost depends on
// the shape, not on the content), multiply by how often it ran, and measure the waste against
// the varlen ideal that computes no pad tokens and no cross-request attention cells.
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/config/config.hpp"
#include "sim/packing/buckets.hpp"
#include "sim/packing/packer.hpp"
#include "sim/packing/request_log.hpp"

namespace systolic {

// One simulated forward step of the model at a shape.
struct ShapeCost {
  double seconds = 0;
  double energy_pj = 0;
  double utilization = 0;
  double attention_share = 0;  // attention MACs / all MACs issued
};

class ShapeSimulator {
 public:
  ShapeSimulator(const ChipConfig& config, std::string model_path)
      : config_(config), model_(std::move(model_path)) {}
  // Compiles and simulates the model at `shape` once; later calls hit the cache.
  const ShapeCost& cost(packing::Phase phase, packing::Shape shape);
  size_t simulated() const { return cache_.size(); }

 private:
  const ChipConfig& config_;
  std::string model_;
  std::map<std::tuple<int, int64_t, int64_t>, ShapeCost> cache_;
};

// The replay of `log` through one bucket set: report["buckets"], ["totals"], ["varlen"], ...
// With `timeline`, appends Chrome trace events (process `pid`) for the prefill instances as the
// chip serves them, in microseconds of replayed time.
nlohmann::ordered_json replay(ShapeSimulator& simulator, const packing::RequestLog& log,
                              const packing::BucketSet& buckets, packing::PackOptions options,
                              nlohmann::ordered_json* timeline = nullptr, int pid = 0);

// Everything `systolic pack` does short of printing: reads the log and the bucket sets, checks
// them against the chip, replays the log through each set and returns report.json (the first
// set's results at the top level, every set in "replays"). Throws InputError before any
// simulation for bad input; `warnings` receives what the log reader noticed.
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
};
// With `timeline`, also fills it with the Chrome trace-event JSON of the replays.
nlohmann::ordered_json pack_report(const ChipConfig& config, const PackRequest& request,
                                   std::vector<std::string>* warnings = nullptr,
                                   nlohmann::ordered_json* timeline = nullptr);

// The per-bucket table and totals of one replay, for the terminal.
std::string format_replay(const nlohmann::ordered_json& replay);

}  // namespace systolic
