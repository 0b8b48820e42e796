#include "sim/serving/shape_simulator.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/compile/mxu_bound.hpp"
#include "sim/run/pipeline.hpp"

namespace systolic {

WorkloadOptions shape_options(packing::Phase phase, packing::Shape shape) {
  WorkloadOptions opts;
  opts.bucket = fmt::format("{}x{}", shape.batch, shape.length);
  opts.phase = packing::kPhaseNames.name(phase);
  return opts;
}

ShapeSimulator::ShapeSimulator(const ChipConfig& config, std::string model_path, int64_t tp)
    : config_(config), model_(std::move(model_path)), tp_(tp) {}

ShapeSimulator::~ShapeSimulator() = default;

namespace {

// Which shapes workers take first. A batch grows one prompt, so at most one lane, at a time:
// the narrowest on-demand bucket of a length is the one a growing batch meets first, and it is
// taken with the shapes a replay surely asks for; the wider ones only after all of those.
bool taken_late(const serving::StepShape& s, const std::vector<serving::StepShape>& all) {
  if (!s.on_demand) return false;
  return std::any_of(all.begin(), all.end(), [&](const serving::StepShape& o) {
    return o.on_demand && o.phase == s.phase && o.shape.length == s.shape.length &&
           o.shape.batch < s.shape.batch;
  });
}

// Within the early ones, largest first (prefill before decode, then by attention cells and
// tokens), so that the longest simulations start first and the last to finish is a short one;
// the late ones smallest first, the likeliest to be asked for (and the cheapest to have
// simulated for nothing) before the rest.
bool larger(const serving::StepShape& a, const serving::StepShape& b) {
  const serving::StepWork x = serving::fixed_work(a.phase, a.shape),
                          y = serving::fixed_work(b.phase, b.shape);
  const auto key = [](const serving::StepShape& s, const serving::StepWork& w) {
    return std::make_tuple(s.phase == packing::Phase::prefill, w.cells, w.tokens, s.shape.batch);
  };
  return key(a, x) > key(b, y);
}

}  // namespace

void ShapeSimulator::ahead(std::vector<serving::StepShape> shapes, int jobs) {
  if (jobs <= 1 || workers_) return;
  std::vector<serving::StepShape> unique;
  for (const serving::StepShape& s : shapes) {
    const auto it = std::find(unique.begin(), unique.end(), s);
    if (it == unique.end())
      unique.push_back(s);
    else
      it->on_demand = it->on_demand && s.on_demand;  // another scheduler or baseline surely runs it
  }
  std::vector<serving::StepShape> early, late;
  for (const serving::StepShape& s : unique) (taken_late(s, unique) ? late : early).push_back(s);
  std::stable_sort(early.begin(), early.end(), larger);
  std::stable_sort(late.rbegin(), late.rend(), larger);  // smallest first
  unique = std::move(early);
  unique.insert(unique.end(), late.begin(), late.end());
  workers_ = std::make_unique<ShapeWorkers>(std::move(unique), jobs - 1,
                                            [this](const serving::StepShape& s) { return simulate(s); });
}

ShapeCost ShapeSimulator::simulate(const serving::StepShape& step) const {
  WorkloadOptions options = shape_options(step.phase, step.shape);
  options.tp = tp_;
  RunRequest request;
  request.config = config_;
  request.source = {model_, "", options};
  request.command = "pack";
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
  return c;
}

const ShapeCost& ShapeSimulator::cost(packing::Phase phase, packing::Shape shape) {
  const auto key = std::make_tuple(static_cast<int>(phase), shape.batch, shape.length);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  const serving::StepShape step{phase, shape};
  std::optional<ShapeCost> ahead = workers_ ? workers_->cost(step) : std::nullopt;
  return cache_.emplace(key, ahead ? *ahead : simulate(step)).first->second;
}

}  // namespace systolic

namespace systolic {

double ShapeSimulator::seconds_at_least(packing::Phase phase, packing::Shape shape) {
  const auto key = std::make_tuple(static_cast<int>(phase), shape.batch, shape.length);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second.seconds;
  if (auto it = bounds_.find(key); it != bounds_.end()) return it->second;
  WorkloadOptions options = shape_options(phase, shape);
  options.tp = tp_;
  // The workloads run() compiles (sim/run/pipeline.cpp): one chip's, or each chip's of the
  // replica, whose run lasts as long as its slowest chip's at least.
  uint64_t cycles = 0;
  if (config_.ici.topology == IciTopologyKind::none) {
    cycles = mxu_cycles_lower_bound(config_, load_workload(model_, options));
  } else {
    const std::vector<Workload> chips = load_system_workloads(model_, options, config_.ici.build_topology());
    for (size_t i = 0; i < chips.size(); ++i)
      cycles = std::max(cycles, mxu_cycles_lower_bound(config_, chips[i], static_cast<int>(i)));
  }
  // As the report turns cycles into seconds (sim/report/report.cpp), so that the bound is no
  // larger than the simulated seconds in floating point too.
  const double seconds = static_cast<double>(cycles) / (config_.clock_mhz * 1e6);
  return bounds_.emplace(key, seconds).first->second;
}

}  // namespace systolic
