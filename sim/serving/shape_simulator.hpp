#pragma once
// One forward step of the model at a static shape, simulated on the chip once and cached:
// static hardware costs the same whatever the content (docs/replay.md, "What happens").
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "models/chip/chip_config.hpp"
#include "sim/packing/packer.hpp"
#include "sim/serving/shape_workers.hpp"
#include "sim/serving/step_cost.hpp"
#include "sim/workload/workload.hpp"

namespace systolic {

// The model's options at one static shape: --bucket BxS --phase prefill|decode.
WorkloadOptions shape_options(packing::Phase phase, packing::Shape shape);

class ShapeSimulator {
 public:
  // `config` is one replica: a single chip, or a multi-chip system over which the model is
  // sharded with tensor parallelism `tp` (its chip count), as `systolic run --tp` does.
  ShapeSimulator(const ChipConfig& config, std::string model_path, int64_t tp = 1);
  ~ShapeSimulator();
  // Starts simulating `shapes` ahead of the replay, largest first, the on-demand ones
  // (StepShape::on_demand) wider than another of their length last, in `jobs` - 1 worker
  // processes, this one joining in while it waits for them (shape_workers.hpp). Nothing when
  // jobs <= 1 or when shapes are already being simulated ahead. Call it before anything else
  // runs threads in this process (it forks).
  void ahead(std::vector<serving::StepShape> shapes, int jobs);
  // The model at `shape`: compiled and simulated once (or taken from a worker); later calls hit
  // the cache. Seconds and energy are the replica's (every chip of it); the attention share is
  // chip 0's, each chip holding an equal share of the heads.
  const ShapeCost& cost(packing::Phase phase, packing::Shape shape);
  // A lower bound on cost(phase, shape).seconds: that cost when it is known, else the
  // compiler's count of the busiest MXU's cycles at least (sim/compile/mxu_bound.hpp), which
  // takes microseconds and neither compiles nor simulates the shape.
  double seconds_at_least(packing::Phase phase, packing::Shape shape);
  // The shapes cost() was asked for (those simulated ahead that nothing asked for not counted).
  size_t simulated() const { return cache_.size(); }

 private:
  ShapeCost simulate(const serving::StepShape& step) const;

  const ChipConfig& config_;
  std::string model_;
  int64_t tp_;
  std::map<std::tuple<int, int64_t, int64_t>, ShapeCost> cache_;
  std::map<std::tuple<int, int64_t, int64_t>, double> bounds_;  // seconds_at_least of shapes not simulated
  std::unique_ptr<ShapeWorkers> workers_;
};

}  // namespace systolic
