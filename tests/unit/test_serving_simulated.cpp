// The step-cost oracle driven by the chip simulator (sim/serving/simulated_cost.hpp): GPT-2 on
// one TPU v5e (traces/models/gpt2.yaml, configs/tpu-v5e.yaml), a few milliseconds per shape.
#include <catch2/catch.hpp>

#include "serving_helpers.hpp"
#include "sim/config/config.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/serving/simulated_cost.hpp"

using namespace systolic;
using namespace systolic::serving;

namespace {
const std::string kRepo = SYSTOLIC_SOURCE_DIR;
// v5e's array is 128 x 128, so lengths are multiples of 128 (packing::array_tile).
constexpr int64_t kTile = 128;
}  // namespace

TEST_CASE("serving SimulatedStepCost: static steps are the simulated shapes, varlen steps scale them",
          "[serving]") {
  const ChipConfig chip = load_config(kRepo + "/configs/tpu-v5e.yaml");
  ShapeSimulator sim(chip, kRepo + "/traces/models/gpt2.yaml");
  const SimulatedStepCost cost(sim, kTile);
  const ShapeCost& prefill = sim.cost(Phase::prefill, {1, 256});
  REQUIRE(prefill.seconds > 0);
  REQUIRE(prefill.attention_share > 0);
  CHECK(cost.fixed(Phase::prefill, {1, 256}).seconds == prefill.seconds);
  CHECK(cost.fixed(Phase::prefill, {1, 256}).energy_pj == prefill.energy_pj);
  // A varlen step that is exactly a static shape costs what that shape costs.
  CHECK(cost.varlen(Phase::prefill, {256}).seconds == Approx(prefill.seconds).epsilon(1e-12));
  CHECK(cost.varlen(Phase::decode, {256, 256}).seconds ==
        Approx(sim.cost(Phase::decode, {2, 256}).seconds).epsilon(1e-12));
  // Two prompts of 128 packed in [1, 256]: every token useful, but only 2 x 128 x 129 / 2 of
  // the 256 x 257 / 2 causal cells (no cross-request cells).
  const double a = prefill.attention_share;
  CHECK(cost.varlen(Phase::prefill, {128, 128}).seconds ==
        Approx(prefill.seconds * ((1 - a) + a * (2 * 128.0 * 129 / 2) / (256.0 * 257 / 2))).epsilon(1e-12));
  // 200 tokens round up to the [1, 256] lane and pay for 200 of its tokens.
  CHECK(cost.varlen(Phase::prefill, {200}).seconds ==
        Approx(prefill.seconds * ((1 - a) * 200 / 256 + a * (200.0 * 201) / (256.0 * 257))).epsilon(1e-12));
  CHECK(systolic::testing::input_error_of([&] { SimulatedStepCost(sim, 0); }) ==
        "varlen granule: expected tokens >= 1 (the array tile), got 0");
}

// One request through static on the simulator: its time is one prefill step and
// (output - 1) decode steps of the shapes it ran in, as simulated.
TEST_CASE("serving on the simulator: a lone request costs its simulated steps", "[serving]") {
  const ChipConfig chip = load_config(kRepo + "/configs/tpu-v5e.yaml");
  ShapeSimulator sim(chip, kRepo + "/traces/models/gpt2.yaml");
  const SimulatedStepCost cost(sim, kTile);
  ServeOptions o = systolic::testing::serve_options({{1, 128}, {1, 256}}, {{4, 512}});
  // GPT-2's KV cache: 2 (K, V) x 12 layers x 768 x 2 B (bf16) = 36,864 B per token; 1 GiB for
  // it leaves most of the v5e's 16 GiB to the 0.25 GB of weights.
  o.kv_bytes_per_token = 2 * 12 * 768 * 2;
  o.kv_capacity_bytes = 1024.0 * 1024 * 1024;
  const auto log = systolic::testing::request_log({{0, 200, 5}});
  const ServeResult r = serve(log, "static", cost, o);
  const double expected =
      sim.cost(Phase::prefill, {1, 256}).seconds + 4 * sim.cost(Phase::decode, {4, 512}).seconds;
  CHECK(r.records[0].e2e_s() == Approx(expected).epsilon(1e-12));
  CHECK(r.records[0].pad_tokens == 56 + 4 * 3);  // 56 pad tokens in the lane, 3 empty slots per decode step
  CHECK(sim.simulated() == 2);
}
