#pragma once
// The step-cost oracle of the serving engine (docs/serving.md): what one forward step of the
// model costs, in seconds and energy. The engine and its schedulers see nothing else of the
// hardware, so the same replay runs on closed-form costs (tests: deterministic service for the
// queueing checks) or on the chip simulator (SimulatedStepCost, simulated_cost.hpp).
//
// Two kinds of step:
//   static: a compiled shape, pads included: prefill [B, S] (B lanes of S tokens), decode
//           [B slots, L] (B new tokens, each attending to a KV cache of L positions);
//   varlen: exactly the sequences present (the `dynamic` scheduler, what varlen kernels on a
//           GPU do): prefill of prompts p_i (attention within each prompt only), decode of
//           sequences with KV lengths l_i.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/packing/buckets.hpp"
#include "sim/packing/packer.hpp"  // Phase

namespace systolic::serving {

using packing::Phase;
using packing::Shape;

// A static step's phase and shape: what the chip simulator compiles and runs once.
struct StepShape {
  Phase phase = Phase::prefill;
  Shape shape;
  // For the shapes a scheduler lists ahead (Scheduler::shapes): a step runs in it only when a
  // lower bound of its cost says that growing a batch into it may pay (continuous batching's
  // larger prefill buckets, worth_growing in batching.cpp), so a replay may never ask for it.
  // Simulated ahead after every other shape (ShapeSimulator::ahead). Not part of ==.
  bool on_demand = false;
  bool operator==(const StepShape& o) const { return phase == o.phase && shape == o.shape; }
};

struct StepCharge {
  double seconds = 0;
  double energy_pj = 0;
};

class StepCost {
 public:
  virtual ~StepCost() = default;
  virtual StepCharge fixed(Phase phase, Shape shape) const = 0;
  // A lower bound on fixed(phase, shape).seconds, for a question that a bound may settle
  // without the cost itself (which the chip simulator pays for in seconds): fixed's by default.
  virtual double fixed_seconds_at_least(Phase phase, Shape shape) const {
    return fixed(phase, shape).seconds;
  }
  // `lengths`: prefill: the prompt (chunk) length of each sequence; decode: the KV length each
  // new token attends to. Never empty.
  virtual StepCharge varlen(Phase phase, const std::vector<int64_t>& lengths) const = 0;
};

// What a step computes, counted the way a linear cost model charges it.
struct StepWork {
  double tokens = 0;  // token positions through the weights (prefill B*S; decode B)
  double cells = 0;   // attention cells (prefill causal S(S+1)/2 per lane; decode L per slot)
};
StepWork fixed_work(Phase phase, Shape shape);
StepWork varlen_work(Phase phase, const std::vector<int64_t>& lengths);

// A closed-form cost: per step, value = step + token * tokens + cell * cells, separately for
// seconds and picojoules. `step` stands for what a step pays whatever its size (reading the
// weights once), `token` for the weight matmuls, `cell` for attention. With token = cell = 0
// every step costs the same: the deterministic service of the M/D/1 checks.
struct LinearCoefficients {
  double step = 0;
  double token = 0;
  double cell = 0;
  double of(const StepWork& w) const { return step + token * w.tokens + cell * w.cells; }
};

struct LinearCost {
  LinearCoefficients seconds;
  LinearCoefficients energy_pj;
};

class ClosedFormCost : public StepCost {
 public:
  // The same coefficients for both phases. Throws InputError for a negative or non-finite
  // coefficient, or a step that would cost no time (step + token <= 0 for seconds).
  ClosedFormCost(LinearCoefficients seconds, LinearCoefficients energy_pj);
  // Coefficients per phase: prefill attention is compute, decode attention reads the KV cache,
  // so their `cell` differ by orders of magnitude.
  static ClosedFormCost per_phase(LinearCost prefill, LinearCost decode);

  StepCharge fixed(Phase phase, Shape shape) const override;
  StepCharge varlen(Phase phase, const std::vector<int64_t>& lengths) const override;

 private:
  ClosedFormCost(LinearCost prefill, LinearCost decode, const std::string& prefill_name,
                 const std::string& decode_name);
  StepCharge charge(Phase phase, const StepWork& work) const;

  LinearCost prefill_;
  LinearCost decode_;
};

}  // namespace systolic::serving
