#include "sim/serving/shape_simulator.hpp"

#include <fmt/format.h>

#include "sim/run/pipeline.hpp"

namespace systolic {

WorkloadOptions shape_options(packing::Phase phase, packing::Shape shape) {
  WorkloadOptions opts;
  opts.bucket = fmt::format("{}x{}", shape.batch, shape.length);
  opts.phase = packing::kPhaseNames.name(phase);
  return opts;
}

const ShapeCost& ShapeSimulator::cost(packing::Phase phase, packing::Shape shape) {
  const auto key = std::make_tuple(static_cast<int>(phase), shape.batch, shape.length);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  WorkloadOptions options = shape_options(phase, shape);
  options.tp = tp_;
  RunRequest request{config_, {model_, "", options}, {}, "pack"};
  const auto report = run(request).report;
  ShapeCost c;
  c.seconds = report["totals"]["seconds"].get<double>();
  c.energy_pj = report["energy_pj"]["total"].get<double>();
  c.utilization = report["totals"]["utilization"].get<double>();
  const auto& chip = report["chips"][0];
  const auto& kinds = chip["op_kinds"];
  const double attention = kinds.contains("attention") ? kinds["attention"]["macs"].get<double>() : 0.0;
  const double issued = chip["totals"]["macs_issued"].get<double>();
  c.attention_share = issued > 0 ? attention / issued : 0.0;
  return cache_.emplace(key, c).first->second;
}

}  // namespace systolic
