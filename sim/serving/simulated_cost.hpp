#pragma once
// The step-cost oracle driven by the chip simulator: a static step costs what ShapeSimulator
// simulated for that phase and shape (compiled and run once per shape, then cached).
//
// Varlen steps (the `dynamic` scheduler) have no compiled shape, so they are derived from the
// nearest static one, rounding lengths up to `granule` tokens (use the array tile, so every
// simulated length is one the array runs without a partial fold):
//   prefill of prompts p_i: the packed lane [1, Tg], T = sum p_i, Tg = T rounded up; its cost is
//     scaled to the useful work: (1 - a) * T / Tg + a * (sum p_i (p_i + 1) / 2) / (Tg (Tg + 1) / 2),
//     a = the attention share of its MACs (the matmuls scale with tokens, attention with cells);
//   decode of n tokens with KV lengths l_i: [n, Lg], Lg = max l_i rounded up; the attention
//     share scaled by sum l_i / (n * Lg), the rest (weights, one token per slot) as simulated.
// The scaling charges a step's fixed part (reading the weights) in proportion to its useful
// tokens too, so a varlen prefill is priced at most one granule's worth of tokens below cost.
// Prompts whose packed lane would exceed `max_lane` tokens (the model's context; 0: no limit)
// are packed into several lanes, in order, each priced as above, and the lanes' costs summed:
// one lane per step would read the weights once per lane, which prefill (compute-bound) barely
// notices. A single prompt longer than max_lane is the model reader's InputError.
#include <cstdint>
#include <vector>

#include "sim/serving/shape_simulator.hpp"
#include "sim/serving/step_cost.hpp"

namespace systolic::serving {

class SimulatedStepCost : public StepCost {
 public:
  // Lengths a varlen step rounds up to before the granule (ascending, each a multiple of it):
  // e.g. a bucket set's, whose shapes are simulated anyway, so the varlen steps add few new
  // ones. Beyond the last, lengths round up to the granule.
  struct Ladders {
    std::vector<int64_t> prefill;
    std::vector<int64_t> decode;
  };
  // Throws InputError for granule < 1 or max_lane < 0.
  SimulatedStepCost(ShapeSimulator& simulator, int64_t granule, int64_t max_lane = 0, Ladders ladders = {});
  StepCharge fixed(Phase phase, Shape shape) const override;
  double fixed_seconds_at_least(Phase phase, Shape shape) const override;
  StepCharge varlen(Phase phase, const std::vector<int64_t>& lengths) const override;
  // The static shapes varlen steps are priced from when no step is longer than the ladders'
  // last lengths and a decode step holds at most `slots` tokens: [1, S] for each prefill length
  // and [n, L] for n = 1..slots and each decode length (for ShapeSimulator::ahead).
  std::vector<StepShape> ladder_shapes(int64_t slots) const;

 private:
  int64_t round_up(int64_t length, const std::vector<int64_t>& ladder) const;
  StepCharge packed_lane(const std::vector<int64_t>& prompts) const;

  ShapeSimulator& simulator_;
  int64_t granule_;
  int64_t max_lane_;
  Ladders ladders_;
};

}  // namespace systolic::serving
