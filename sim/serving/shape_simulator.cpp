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
  RunRequest request{config_, {model_, "", shape_options(phase, shape)}, {}, "pack"};
  const auto report = run(request).report;
  ShapeCost c;
  c.seconds = report["totals"]["seconds"].get<double>();
  c.energy_pj = report["energy_pj"]["total"].get<double>();
  c.utilization = report["totals"]["utilization"].get<double>();
  const auto& kinds = report["chips"][0]["op_kinds"];  // pack runs on one chip (require_single_chip)
  const double attention = kinds.contains("attention") ? kinds["attention"]["macs"].get<double>() : 0.0;
  const double issued = report["totals"]["macs_issued"].get<double>();
  c.attention_share = issued > 0 ? attention / issued : 0.0;
  return cache_.emplace(key, c).first->second;
}

}  // namespace systolic
