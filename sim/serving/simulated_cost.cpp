#include "sim/serving/simulated_cost.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/common/error.hpp"

namespace systolic::serving {

SimulatedStepCost::SimulatedStepCost(ShapeSimulator& simulator, int64_t granule)
    : simulator_(simulator), granule_(granule) {
  if (granule < 1)
    throw InputError(fmt::format("varlen granule: expected tokens >= 1 (the array tile), got {}", granule));
}

StepCharge SimulatedStepCost::fixed(Phase phase, Shape shape) const {
  const ShapeCost& c = simulator_.cost(phase, shape);
  return {c.seconds, c.energy_pj};
}

StepCharge SimulatedStepCost::varlen(Phase phase, const std::vector<int64_t>& lengths) const {
  const auto n = static_cast<int64_t>(lengths.size());
  const StepWork useful = varlen_work(phase, lengths);
  Shape shape;
  if (phase == Phase::prefill) {
    int64_t tokens = 0;
    for (const int64_t p : lengths) tokens += p;
    shape = {1, round_up(tokens)};
  } else {
    shape = {n, round_up(*std::max_element(lengths.begin(), lengths.end()))};
  }
  const ShapeCost& c = simulator_.cost(phase, shape);
  const StepWork computed = fixed_work(phase, shape);
  const double a = c.attention_share;
  const double scale = (1 - a) * useful.tokens / computed.tokens + a * useful.cells / computed.cells;
  return {c.seconds * scale, c.energy_pj * scale};
}

}  // namespace systolic::serving
