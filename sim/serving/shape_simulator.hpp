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

}  // namespace systolic
