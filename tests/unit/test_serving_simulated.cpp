// The step-cost oracle driven by the chip simulator (sim/serving/simulated_cost.hpp): GPT-2 on
// one TPU v5e (traces/models/gpt2.yaml, configs/tpu-v5e.yaml), a few milliseconds per shape.
#include <catch2/catch.hpp>

#include <cstring>

#include "fixtures.hpp"
#include "serving_helpers.hpp"
#include "sim/config/config.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/serving/simulated_cost.hpp"

namespace test_serving_simulated {

using namespace systolic;
using namespace systolic::serving;
using systolic::testing::kRepo;

namespace {
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

// The bound a replay may settle a question with before simulating a shape (worth_growing: is a
// wider prefill worth it): no simulation, and never above the cost once simulated.
TEST_CASE("serving SimulatedStepCost: a shape's lower bound needs no simulation and holds", "[serving]") {
  const ChipConfig chip = load_config(kRepo + "/configs/tpu-v5e.yaml");
  for (const StepShape s : {StepShape{Phase::prefill, {1, 256}}, StepShape{Phase::prefill, {4, 1024}},
                            StepShape{Phase::decode, {8, 1024}}}) {
    ShapeSimulator sim(chip, kRepo + "/traces/models/gpt2.yaml");
    const SimulatedStepCost cost(sim, kTile);
    const double bound = cost.fixed_seconds_at_least(s.phase, s.shape);
    CHECK(sim.simulated() == 0);
    const double seconds = cost.fixed(s.phase, s.shape).seconds;
    INFO(s.shape.batch << "x" << s.shape.length << ": bound " << bound << " s, simulated " << seconds
                       << " s");
    CHECK(bound > 0);
    CHECK(bound <= seconds);
    // Known, the shape's own cost.
    CHECK(cost.fixed_seconds_at_least(s.phase, s.shape) == seconds);
  }
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

// Varlen steps priced from a ladder of simulated lengths, and prompts beyond the model's
// context packed into several lanes whose costs add up.
TEST_CASE("serving SimulatedStepCost: ladders and lanes no longer than the context", "[serving]") {
  const ChipConfig chip = load_config(kRepo + "/configs/tpu-v5e.yaml");
  ShapeSimulator sim(chip, kRepo + "/traces/models/gpt2.yaml");
  const SimulatedStepCost plain(sim, kTile);
  // 100 tokens on the ladder {512} are priced from [1, 512], not [1, 128].
  const SimulatedStepCost laddered(sim, kTile, 0, {{512}, {512}});
  const ShapeCost& p512 = sim.cost(Phase::prefill, {1, 512});
  const double a = p512.attention_share;
  CHECK(laddered.varlen(Phase::prefill, {100}).seconds ==
        Approx(p512.seconds * ((1 - a) * 100 / 512 + a * (100.0 * 101) / (512.0 * 513))).epsilon(1e-12));
  CHECK(laddered.varlen(Phase::decode, {100, 300}).seconds <= sim.cost(Phase::decode, {2, 512}).seconds);
  // GPT-2's context is 1024: 700 + 600 tokens do not fit one lane, so two lanes, each priced alone.
  const SimulatedStepCost bounded(sim, kTile, 1024);
  const double two = bounded.varlen(Phase::prefill, {700, 600}).seconds;
  CHECK(two == Approx(plain.varlen(Phase::prefill, {700}).seconds + plain.varlen(Phase::prefill, {600}).seconds)
                   .epsilon(1e-12));
  // 300 + 600 fit one lane of 1024 (round_up(900) = 1024 <= 1024).
  CHECK(bounded.varlen(Phase::prefill, {300, 600}).seconds ==
        Approx(plain.varlen(Phase::prefill, {300, 600}).seconds).epsilon(1e-12));
}

namespace {
// Every field, bit for bit: worker processes hand back the bytes the simulator computed.
bool same_bits(const ShapeCost& a, const ShapeCost& b) { return std::memcmp(&a, &b, sizeof(ShapeCost)) == 0; }
}  // namespace

// Shapes simulated ahead in worker processes (sim/serving/shape_workers.hpp) cost exactly what
// this process simulates, whoever took them; asking for one that was not listed simulates it
// here; only the shapes asked for count.
TEST_CASE("serving ShapeSimulator ahead: workers' costs are this process's, bit for bit", "[serving]") {
  const ChipConfig chip = load_config(kRepo + "/configs/tpu-v5e.yaml");
  const std::string model = kRepo + "/traces/models/gpt2.yaml";
  ShapeSimulator alone(chip, model);
  const std::vector<StepShape> shapes = {{Phase::prefill, {1, 128}}, {Phase::prefill, {2, 256}},
                                         {Phase::decode, {4, 512}},  {Phase::decode, {1, 256}},
                                         {Phase::prefill, {1, 512}}, {Phase::decode, {2, 1024}}};
  for (const int jobs : {2, 3}) {
    ShapeSimulator ahead(chip, model);
    ahead.ahead(shapes, jobs);
    for (auto it = shapes.rbegin(); it != shapes.rend(); ++it)  // not the order they were listed in
      CHECK(same_bits(ahead.cost(it->phase, it->shape), alone.cost(it->phase, it->shape)));
    CHECK(
        same_bits(ahead.cost(Phase::prefill, {1, 384}), alone.cost(Phase::prefill, {1, 384})));  // not listed
    CHECK(ahead.simulated() == shapes.size() + 1);
  }
  ShapeSimulator some(chip, model);
  some.ahead(shapes, 2);
  CHECK(same_bits(some.cost(Phase::decode, {4, 512}), alone.cost(Phase::decode, {4, 512})));
  CHECK(some.simulated() == 1);  // the shapes nobody asked for are not counted
}

// A listed shape the simulator rejects (GPT-2's context is 1024 tokens) fails in the worker; the
// replay meets the error itself, word for word, when it asks for that shape, and not before.
TEST_CASE("serving ShapeSimulator ahead: a shape that fails fails when asked for, as without workers",
          "[serving]") {
  const ChipConfig chip = load_config(kRepo + "/configs/tpu-v5e.yaml");
  const std::string model = kRepo + "/traces/models/gpt2.yaml";
  ShapeSimulator alone(chip, model);
  const std::string error = systolic::testing::input_error_of([&] { alone.cost(Phase::prefill, {1, 2048}); });
  REQUIRE(error.find("max_seq") != std::string::npos);
  ShapeSimulator ahead(chip, model);
  ahead.ahead({{Phase::prefill, {1, 2048}}, {Phase::prefill, {1, 128}}}, 2);
  CHECK(same_bits(ahead.cost(Phase::prefill, {1, 128}), alone.cost(Phase::prefill, {1, 128})));
  CHECK(systolic::testing::input_error_of([&] { ahead.cost(Phase::prefill, {1, 2048}); }) == error);
}

// A whole replay (continuous with its shapes simulated ahead, then the dynamic baseline's varlen
// steps) gives every request the same record as the replay that simulates each shape itself.
TEST_CASE("serving on the simulator: a replay with shapes simulated ahead is the same replay", "[serving]") {
  const ChipConfig chip = load_config(kRepo + "/configs/tpu-v5e.yaml");
  const std::string model = kRepo + "/traces/models/gpt2.yaml";
  ServeOptions o = systolic::testing::serve_options({{1, 128}, {1, 256}, {2, 256}}, {{4, 512}});
  o.kv_bytes_per_token = 2 * 12 * 768 * 2;  // as above
  o.kv_capacity_bytes = 1024.0 * 1024 * 1024;
  const auto log = systolic::testing::request_log(
      {{0, 200, 5}, {0.001, 100, 3}, {0.002, 250, 8}, {0.003, 60, 2}, {0.05, 120, 4}, {0.06, 230, 6}});
  const auto replay = [&](int jobs) {
    ShapeSimulator sim(chip, model);
    const SimulatedStepCost cost(sim, kTile, 1024, {{128, 256}, {512}});
    std::vector<StepShape> shapes = schedulers().get("continuous", "").shapes(o);
    for (const StepShape& s : cost.ladder_shapes(4)) shapes.push_back(s);
    sim.ahead(shapes, jobs);
    return std::make_pair(serve(log, "continuous", cost, o), serve(log, "dynamic", cost, o));
  };
  const auto same = [](const ServeResult& a, const ServeResult& b) {
    REQUIRE(a.records.size() == b.records.size());
    for (size_t i = 0; i < a.records.size(); ++i) {
      CHECK(a.records[i].first_token_s == b.records[i].first_token_s);
      CHECK(a.records[i].last_token_s == b.records[i].last_token_s);
      CHECK(a.records[i].energy_pj == b.records[i].energy_pj);
    }
  };
  const auto one = replay(1), two = replay(2);
  same(one.first, two.first);
  same(one.second, two.second);
}

}  // namespace test_serving_simulated
