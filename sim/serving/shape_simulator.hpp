#pragma once
// One forward step of the model at a static shape, simulated on the chip once and cached:
// static hardware costs the same whatever the content (docs/replay.md, "What happens").
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "models/chip/chip_config.hpp"
#include "sim/packing/packer.hpp"
#include "sim/workload/workload.hpp"

namespace systolic {

struct ShapeCost {
  double seconds = 0;
  double energy_pj = 0;
  double utilization = 0;
  double attention_share = 0;  // attention MACs / all MACs issued
};

// The model's options at one static shape: --bucket BxS --phase prefill|decode.
WorkloadOptions shape_options(packing::Phase phase, packing::Shape shape);

class ShapeSimulator {
 public:
  // `config` is one replica: a single chip, or a multi-chip system over which the model is
  // sharded with tensor parallelism `tp` (its chip count), as `systolic run --tp` does.
  ShapeSimulator(const ChipConfig& config, std::string model_path, int64_t tp = 1)
      : config_(config), model_(std::move(model_path)), tp_(tp) {}
  // Compiles and simulates the model at `shape` once; later calls hit the cache. Seconds and
  // energy are the replica's (every chip of it); the attention share is chip 0's, each chip
  // holding an equal share of the heads.
  const ShapeCost& cost(packing::Phase phase, packing::Shape shape);
  size_t simulated() const { return cache_.size(); }

 private:
  const ChipConfig& config_;
  std::string model_;
  int64_t tp_;
  std::map<std::tuple<int, int64_t, int64_t>, ShapeCost> cache_;
};

}  // namespace systolic
