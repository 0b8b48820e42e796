#include "sim/serving/step_cost.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "models/common/error.hpp"

namespace systolic::serving {
namespace {

double causal_cells(double length) { return length * (length + 1) / 2; }

void check(const LinearCoefficients& c, const std::string& what) {
  for (const auto& [value, name] : {std::pair{c.step, "step"}, {c.token, "token"}, {c.cell, "cell"}})
    if (!std::isfinite(value) || value < 0)
      throw InputError(
          fmt::format("closed-form cost '{}.{}': expected a finite number >= 0, got {}", what, name, value));
}

}  // namespace

StepWork fixed_work(Phase phase, Shape shape) {
  const auto b = static_cast<double>(shape.batch);
  const auto l = static_cast<double>(shape.length);
  if (phase == Phase::prefill) return {b * l, b * causal_cells(l)};
  return {b, b * l};
}

StepWork varlen_work(Phase phase, const std::vector<int64_t>& lengths) {
  StepWork w;
  for (const int64_t n : lengths) {
    const auto l = static_cast<double>(n);
    w.tokens += phase == Phase::prefill ? l : 1.0;
    w.cells += phase == Phase::prefill ? causal_cells(l) : l;
  }
  return w;
}

ClosedFormCost::ClosedFormCost(LinearCoefficients seconds, LinearCoefficients energy_pj)
    : ClosedFormCost({seconds, energy_pj}, {seconds, energy_pj}, "", "") {}

ClosedFormCost ClosedFormCost::per_phase(LinearCost prefill, LinearCost decode) {
  return ClosedFormCost(prefill, decode, "prefill.", "decode.");
}

ClosedFormCost::ClosedFormCost(LinearCost prefill, LinearCost decode, const std::string& prefill_name,
                               const std::string& decode_name)
    : prefill_(prefill), decode_(decode) {
  for (const auto& [c, name] : {std::pair{prefill_, prefill_name}, {decode_, decode_name}}) {
    check(c.seconds, name + "seconds");
    check(c.energy_pj, name + "energy_pj");
    // A step that costs nothing would let a replay serve any load in zero time.
    if (c.seconds.step + c.seconds.token <= 0)
      throw InputError("closed-form cost '" + name +
                       "seconds': expected step > 0 or token > 0 (a step must take time)");
  }
}

StepCharge ClosedFormCost::charge(Phase phase, const StepWork& work) const {
  const LinearCost& c = phase == Phase::prefill ? prefill_ : decode_;
  return {c.seconds.of(work), c.energy_pj.of(work)};
}

StepCharge ClosedFormCost::fixed(Phase phase, Shape shape) const {
  return charge(phase, fixed_work(phase, shape));
}

StepCharge ClosedFormCost::varlen(Phase phase, const std::vector<int64_t>& lengths) const {
  return charge(phase, varlen_work(phase, lengths));
}

}  // namespace systolic::serving
