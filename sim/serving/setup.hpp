#pragma once
// What `systolic pack` and `systolic capacity` share before anything is simulated: the request
// (their common flags), the log as offered, the serving options of each bucket set with the KV
// budget the chip leaves, the SLO, and the step-cost oracle on the chip simulator. Every check
// of bad input happens here, so neither command simulates anything before its input is valid.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/chip/chip_config.hpp"
#include "sim/packing/packer.hpp"
#include "sim/packing/request_log.hpp"
#include "sim/serving/engine.hpp"
#include "sim/serving/metrics.hpp"
#include "sim/serving/router.hpp"
#include "sim/serving/shape_simulator.hpp"
#include "sim/serving/simulated_cost.hpp"

namespace systolic {

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
  std::optional<double> slo_ttft_s;                             // both or neither
  std::optional<double> slo_tbt_s;
  // Capacity questions: replicas of the chip behind a router; the log's arrivals sped up, or
  // replaced by Poisson arrivals with its lengths (seeded).
  std::optional<int64_t> replicas;  // default: the config's chips / tp (1 on a single chip)
  std::string router = "round-robin";
  std::optional<double> rate_scale;
  std::optional<double> poisson_qps;
  std::optional<int64_t> poisson_requests;  // with --poisson: how many (default: the log's count)
  uint64_t seed = 1;
  // Chips per replica on a multi-chip config: 1 (every chip a replica) or the config's chip
  // count (the model sharded over all of them, as `systolic run --tp`).
  int64_t tp = 1;
  // disaggregated: the chips of each pool (each a replica's tp chips); not with other schedulers.
  std::optional<int64_t> prefill_chips;
  std::optional<int64_t> decode_chips;
  // Processes simulating bucket shapes (ShapeSimulator::ahead): 1 simulates each shape when the
  // replay first needs it, in this process; more fork workers (the CLI's -j).
  int jobs = 1;
};

struct ServingSetup {
  packing::RequestLog log;                   // as offered: --rate-scale or --poisson applied
  std::vector<std::string> warnings;         // what the log reader noticed
  packing::PackOptions pack;                 // the packer's options, as given (copied into `serve`)
  std::vector<serving::ServeOptions> serve;  // one per bucket set, its KV budget from the chip
  std::optional<serving::Slo> slo;
  const serving::Router* router = nullptr;
  ChipConfig replica;    // what one replica is: one chip, or the whole system with tp > 1
  int64_t tp = 1;        // chips the model is sharded over (one step's chips)
  int64_t chips_per_replica = 1;  // tp, times the two pools' chips under disaggregated
  int64_t replicas = 1;           // --replicas, or the config's chips / chips_per_replica
};

// Reads the log and the bucket sets and checks every flag against the chip; InputError naming
// the flag, file or bucket for bad input. The KV budget is a replica's: tp chips' worth.
ServingSetup prepare_serving(const ChipConfig& config, const PackRequest& request);

// The chip simulator as the step-cost oracle: the array tile as the varlen granule, the model's
// context as the longest lane, varlen lengths rounded up to `first`'s bucket lengths (shapes
// simulated for it anyway).
serving::SimulatedStepCost simulated_step_cost(ShapeSimulator& simulator, const ChipConfig& config,
                                               const serving::ServeOptions& first);

// The shapes `scheduler` may run on each bucket set of `setup` (Scheduler::shapes), and with
// `baseline` those the varlen steps of the dynamic baseline are priced from (`cost`'s ladders,
// the first set's decode slots): what ShapeSimulator::ahead simulates before the replay asks.
std::vector<serving::StepShape> shapes_ahead(const ServingSetup& setup, const std::string& scheduler,
                                             const serving::SimulatedStepCost* baseline);

}  // namespace systolic
