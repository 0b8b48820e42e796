#include "sim/serving/simulated_cost.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/common/divide.hpp"
#include "models/common/error.hpp"

namespace systolic::serving {

SimulatedStepCost::SimulatedStepCost(ShapeSimulator& simulator, int64_t granule, int64_t max_lane, Ladders ladders)
    : simulator_(simulator), granule_(granule), max_lane_(max_lane), ladders_(std::move(ladders)) {
  if (granule < 1)
    throw InputError(fmt::format("varlen granule: expected tokens >= 1 (the array tile), got {}", granule));
  if (max_lane < 0)
    throw InputError(fmt::format("varlen lane: expected the model's context in tokens (0: no limit), got {}", max_lane));
}

int64_t SimulatedStepCost::round_up(int64_t length, const std::vector<int64_t>& ladder) const {
  if (const auto it = std::lower_bound(ladder.begin(), ladder.end(), length); it != ladder.end()) return *it;
  return systolic::round_up(length, granule_);
}

std::vector<StepShape> SimulatedStepCost::ladder_shapes(int64_t slots) const {
  std::vector<StepShape> out;
  for (const int64_t s : ladders_.prefill) out.push_back({Phase::prefill, {1, s}});
  for (int64_t n = 1; n <= slots; ++n)
    for (const int64_t l : ladders_.decode) out.push_back({Phase::decode, {n, l}});
  return out;
}

StepCharge SimulatedStepCost::fixed(Phase phase, Shape shape) const {
  const ShapeCost& c = simulator_.cost(phase, shape);
  return {c.seconds, c.energy_pj};
}

double SimulatedStepCost::fixed_seconds_at_least(Phase phase, Shape shape) const {
  return simulator_.seconds_at_least(phase, shape);
}

namespace {

// The simulated shape `computed` scaled to the `useful` work (the header's rule).
StepCharge scaled(const ShapeCost& c, const StepWork& useful, const StepWork& computed) {
  const double a = c.attention_share;
  const double scale = (1 - a) * useful.tokens / computed.tokens + a * useful.cells / computed.cells;
  return {c.seconds * scale, c.energy_pj * scale};
}

}  // namespace

StepCharge SimulatedStepCost::packed_lane(const std::vector<int64_t>& prompts) const {
  int64_t tokens = 0;
  for (const int64_t p : prompts) tokens += p;
  const Shape shape{1, round_up(tokens, ladders_.prefill)};
  return scaled(simulator_.cost(Phase::prefill, shape), varlen_work(Phase::prefill, prompts),
                fixed_work(Phase::prefill, shape));
}

StepCharge SimulatedStepCost::varlen(Phase phase, const std::vector<int64_t>& lengths) const {
  if (phase == Phase::decode) {
    const Shape shape{static_cast<int64_t>(lengths.size()),
                      round_up(*std::max_element(lengths.begin(), lengths.end()), ladders_.decode)};
    return scaled(simulator_.cost(phase, shape), varlen_work(phase, lengths), fixed_work(phase, shape));
  }
  StepCharge total{0, 0};
  std::vector<int64_t> lane;
  int64_t used = 0;
  const auto flush = [&] {
    const StepCharge c = packed_lane(lane);
    total.seconds += c.seconds, total.energy_pj += c.energy_pj;
    lane.clear(), used = 0;
  };
  for (const int64_t p : lengths) {
    if (max_lane_ > 0 && !lane.empty() && round_up(used + p, ladders_.prefill) > max_lane_) flush();
    lane.push_back(p), used += p;
  }
  flush();
  return total;
}

}  // namespace systolic::serving
