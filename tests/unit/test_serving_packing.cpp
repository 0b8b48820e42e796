// How the static-shape schedulers fill their prefill steps (docs/serving.md, "Packing prefill
// steps"): the packer's lanes, the batching window and runtime shapes, each worked by hand, and
// the work table the engine keeps of every step (the same replay as the latencies).
#include <catch2/catch.hpp>

#include <cmath>

#include "serving_helpers.hpp"
#include "sim/packing/bin_packer.hpp"
#include "sim/packing/lane_view.hpp"
#include "sim/serving/metrics.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/serving/step_cost.hpp"

namespace test_serving_packing {

using namespace systolic;
using namespace systolic::serving;
using namespace systolic::testing;

namespace {

// 1 s per step + 0.01 s per token position; 1 pJ per token position.
const ClosedFormCost kCost({1.0, 0.01, 0.0}, {0.0, 1.0, 0.0});

// docs/packing.md's packer example: items 40, 70, 30, 50, 60 in lanes of 100, here five prompts
// arriving together, each with one output token (no decode), packed by `packer`.
Example five_prompts(const std::string& packer) {
  Example e{request_log({{0, 40, 1}, {0, 70, 1}, {0, 30, 1}, {0, 50, 1}, {0, 60, 1}}),
            serve_options({{1, 100}, {2, 100}, {3, 100}, {4, 100}, {5, 100}}, {{1, 128}}), kCost};
  e.options.packer = packer;
  return e;
}

const ShapeWork& prefill_row(const ServeResult& r) {
  REQUIRE(r.shapes.size() == 1);
  REQUIRE(r.shapes[0].phase == Phase::prefill);
  return r.shapes[0];
}

// The counts of a work-table row, in the order ShapeWork declares them.
std::vector<int64_t> counts(const ShapeWork& w) {
  return {w.runs,           w.requests,     w.segments,    w.useful_tokens, w.pad_tokens,
          w.cells.computed, w.cells.useful, w.cells.cross, w.cells.pad};
}

// A work-table row against one worked by hand: its phase and shape, its counts and its charge.
void check_row(const ShapeWork& got, const ShapeWork& want) {
  CHECK(got.phase == want.phase);
  CHECK(got.varlen == want.varlen);
  CHECK(got.shape == want.shape);
  CHECK(got.runtime_shape == want.runtime_shape);
  CHECK(counts(got) == counts(want));
  CHECK(got.seconds == Approx(want.seconds));
  CHECK(got.energy_pj == Approx(want.energy_pj));
}

}  // namespace

// none: 5 lanes -> [5, 100] = 1 + 0.01 * 500 = 6 s; first-fit {40 30}{70}{50}{60}: [4, 100] = 5 s;
// first-fit-decreasing {70 30}{60 40}{50} and best-fit {40 50}{70 30}{60}: [3, 100] = 4 s. The
// dynamic baseline prefills the 250 tokens varlen: 1 + 2.5 = 3.5 s, whatever the packer. So the
// time tax is 6/3.5 - 1, 5/3.5 - 1 and 4/3.5 - 1, and the energy tax 500/250 - 1, 400/250 - 1,
// 300/250 - 1: a packer that needs fewer lanes pays less.
TEST_CASE("serving: a tighter packer pays less static-shape tax, against the same baseline", "[serving]") {
  const std::vector<std::pair<std::string, double>> packers{
      {"none", 6}, {"first-fit", 5}, {"first-fit-decreasing", 4}, {"best-fit", 4}};
  for (const char* scheduler : {"static", "continuous", "disaggregated"}) {
    for (const auto& [packer, busy] : packers) {
      INFO(scheduler << " " << packer);
      const Example five = five_prompts(packer);
      const ServeResult r = five.serve(scheduler);
      const ServeResult baseline = five.serve("dynamic");
      CHECK(baseline.totals.busy_s == Approx(3.5));
      CHECK(baseline.totals.energy_pj == Approx(250));
      CHECK(r.totals.busy_s == Approx(busy));
      CHECK(r.totals.busy_s / baseline.totals.busy_s - 1 == Approx(busy / 3.5 - 1));
      CHECK(r.totals.energy_pj / baseline.totals.energy_pj - 1 == Approx(100 * (busy - 1) / 250 - 1));
      const ShapeWork& row = prefill_row(r);
      CHECK(row.shape == packing::Shape{static_cast<int64_t>(busy) - 1, 100});
      CHECK(row.pad_tokens == 100 * static_cast<int64_t>(busy - 1) - 250);
    }
  }
}

// first-fit-decreasing's [3, 100]: lanes {70 30}, {60 40}, {50}, one step (1 + 0.01 * 300 = 4 s,
// 300 pJ) of the 5 requests in 5 segments, 250 useful tokens and 50 pads. Each lane is a 100 x
// 100 rectangle of cells: useful 70^2 + 30^2 + 60^2 + 40^2 + 50^2 = 13,500; cross (100^2 -
// 5,800) + (100^2 - 5,200) = 9,000; pad 100^2 - 50^2 = 7,500.
TEST_CASE("serving: the work table counts the packed lanes' attention cells", "[serving]") {
  const ServeResult r = five_prompts("ffd").serve("static");
  check_row(prefill_row(r),
            {Phase::prefill, false, {3, 100}, false, 1, 5, 5, 250, 50, {30000, 13500, 9000, 7500}, 4, 300});
}

// Decode rows: R0 (prompt 4, 3 tokens) and R1 (prompt 2, 2 tokens) at 0 through `continuous`,
// decode [2, 16] = 1 + 0.02 = 1.02 s and 2 pJ a step: steps {R0, R1} (KV 4 + 1, 2 + 1), {R0}
// (4 + 2): 3 tokens, 3 of 4 slot-steps useful, cells 2 x 2 x 16 = 64 computed, 5 + 3 + 6 = 14
// useful, none across requests.
TEST_CASE("serving: decode rows count slot-steps and the KV positions attended", "[serving]") {
  const ServeResult r =
      serve(request_log({{0, 4, 3}, {0, 2, 2}}), "continuous", kCost, serve_options({{2, 4}}, {{2, 16}}));
  REQUIRE(r.shapes.size() == 2);
  check_row(r.shapes[1], {Phase::decode, false, {2, 16}, false, 2, 2, 3, 3, 1, {64, 14, 0, 50}, 2 * 1.02, 4});
}

TEST_CASE(
    "serving: the work table sums to the busy time, the energy and the tokens, per scheduler and packer",
    "[serving]") {
  const ClosedFormCost cost({2e-3, 1e-6, 1e-9}, {1e9, 5e5, 10.0});
  const auto log = systolic::testing::poisson_log(300, 20.0, 7, {1, 5000}, {1, 600});
  for (const auto& entry : schedulers().entries()) {
    for (const auto& packer_entry : packing::PackerRegistry::instance().entries()) {
      const std::string& packer = packer_entry.name;
      INFO(entry.name << " " << packer);
      ServeOptions o = serve_options({{4, 512}, {2, 1024}, {1, 4096}}, {{8, 2048}, {4, 4096}}, 20000);
      o.packer = packer;
      o.chunk_tokens = 256;
      const ServeResult r = serve(log, entry.name, cost, o);
      double seconds = 0, energy = 0, record_energy = 0;
      int64_t useful = 0, pad = 0;
      for (const ShapeWork& w : r.shapes) {
        seconds += w.seconds, energy += w.energy_pj;
        useful += w.useful_tokens, pad += w.pad_tokens;
        CHECK(w.varlen == (entry.name == "dynamic"));
      }
      for (const RequestRecord& rec : r.records) record_energy += rec.energy_pj;
      CHECK(seconds == Approx(r.totals.busy_s).epsilon(1e-12));
      CHECK(energy == Approx(r.totals.energy_pj).epsilon(1e-12));
      CHECK(record_energy == Approx(energy).epsilon(1e-9));
      CHECK(useful == r.totals.useful);
      CHECK(pad == r.totals.pad);
    }
  }
}

// Window 1 s, static, first-fit, [1, 100] = 2 s: R0 (0, 40) waits for its window to close at
// 1, when R1 (0.5, 30) has joined: one lane of 70, 1 -> 3 (TTFT 3 and 2.5). R2 (2.5, 50) waits
// until its window closes at 3.5: 3.5 -> 5.5 (TTFT 3). Without the window each runs as soon as
// the chip is free: R0 0 -> 2, R1 2 -> 4, R2 4 -> 6 (TTFT 2, 3.5, 3.5): three steps, not two.
TEST_CASE("serving: the batching window holds a prefill until the oldest request has waited it",
          "[serving]") {
  const auto log = request_log({{0, 40, 1}, {0.5, 30, 1}, {2.5, 50, 1}});
  ServeOptions o = serve_options({{1, 100}, {2, 100}}, {{1, 128}});
  o.packer = "first-fit";
  struct Case {
    double window_s;
    std::vector<double> ttft;  // R0, R1, R2
    int64_t steps;
  };
  for (const Case& c : {Case{1, {3, 2.5, 3}, 2}, Case{0, {2, 3.5, 3.5}, 3}}) {
    INFO("window " << c.window_s << " s");
    o.window_s = c.window_s;
    const ServeResult r = serve(log, "static", kCost, o);
    for (size_t i = 0; i < c.ttft.size(); ++i) CHECK(r.records[i].ttft_s() == Approx(c.ttft[i]));
    CHECK(r.totals.steps == c.steps);
  }
  // The window holds continuous, chunked, dynamic and disaggregated the same way.
  o.window_s = 1;
  o.chunk_tokens = 100;
  for (const char* scheduler : {"continuous", "chunked", "dynamic", "disaggregated"}) {
    INFO(scheduler);
    const ServeResult w = serve(log, scheduler, kCost, o);
    CHECK(w.records[0].start_s == Approx(1));
    CHECK(w.records[1].start_s == Approx(1));
    CHECK(w.records[2].start_s >= 3.5);
  }
}

// compile_new_shapes, granule 16, stall 5 s, threshold 0.5: a prompt of 10 would be 90 % pad in
// [1, 100], so it runs in [1, 16] (1.16 s) after 5 s of compiling: TTFT 6.16. The next prompt
// of 12 reuses [1, 16] with no stall: 10 -> 11.16. A prompt of 150 (longer than every S) runs
// alone in [1, 160] (2.6 s) after its own stall: 20 -> 27.6.
TEST_CASE("serving: runtime prefill shapes stall once per shape", "[serving]") {
  const auto log = request_log({{0, 10, 1}, {10, 12, 1}, {20, 150, 1}});
  ServeOptions o = serve_options({{1, 100}}, {{1, 256}});
  o.compile_new_shapes = true;
  o.compile_granule = 16;
  o.compile_stall_s = 5;
  o.model_context = 200;
  for (const char* scheduler : {"static", "continuous"}) {
    INFO(scheduler);
    const ServeResult r = serve(log, scheduler, kCost, o);
    CHECK(r.records[0].ttft_s() == Approx(6.16));
    CHECK(r.records[1].ttft_s() == Approx(1.16));
    CHECK(r.records[2].ttft_s() == Approx(7.6));
    CHECK(r.records[2].prefill_shape == packing::Shape{1, 160});
    CHECK(r.totals.compiled_shapes == 2);
    CHECK(r.totals.compile_stall_s == 10);
    CHECK(r.totals.busy_s == Approx(1.16 + 1.16 + 2.6));
    REQUIRE(r.shapes.size() == 2);
    CHECK(r.shapes[0].shape == packing::Shape{1, 16});
    CHECK(r.shapes[0].runtime_shape);
    CHECK(r.shapes[0].runs == 2);
  }
  o.compile_new_shapes = false;
  const ServeResult off = serve(log, "static", kCost, o);
  CHECK(off.records[2].reason == Reason::prompt_exceeds_prefill);
}

// The seed article's examples through the engine (docs/packing.md, "Lane view"): 3,000 + 4,000
// + 1,000 tokens first-fit into one 8,192 lane (192 pads, 61.3 % of the cells masked), and the
// [4 x 8192] sheet A..I (668 pads), each one prefill step.
TEST_CASE("serving: the lane view of the engine's prefill steps shows the seed examples", "[serving]") {
  ServeOptions o = serve_options({{1, 8192}}, {{1, 8192}});
  o.packer = "first-fit";
  o.record_lanes = true;
  const ServeResult one =
      serve(request_log({{0, 3000, 1}, {0, 4000, 1}, {0, 1000, 1}}), "continuous", kCost, o);
  REQUIRE(one.lanes.size() == 1);
  const auto j = packing::lanes_json({"seed", "first-fit", 0}, one.lanes);
  const auto& lane = j["instances"][0]["lanes"][0];
  CHECK(lane["pad_tokens"] == 192);
  CHECK(lane["cu_seqlens"].dump() == "[0,3000,7000,8000]");
  CHECK(lane["cells"].dump() == R"({"computed":67108864,"useful":26000000,"cross":38000000,"pad":3108864})");

  o = serve_options({{4, 8192}}, {{4, 8192}});
  o.packer = "first-fit";
  o.record_lanes = true;
  const auto sheet_log = request_log({{0, 2000, 1},
                                      {0, 5000, 1},
                                      {0, 1000, 1},
                                      {0, 8000, 1},
                                      {0, 3000, 1},
                                      {0, 3000, 1},
                                      {0, 2100, 1},
                                      {0, 4000, 1},
                                      {0, 4000, 1}});
  const ServeResult sheet = serve(sheet_log, "static", kCost, o);
  REQUIRE(sheet.lanes.size() == 1);
  const auto s = packing::lanes_json({"seed", "first-fit", 0}, sheet.lanes)["instances"][0];
  CHECK(s["pad_tokens"] == 668);
  const std::vector<std::vector<int64_t>> requests{{0, 1, 2}, {3}, {4, 5, 6}, {7, 8}};
  for (size_t b = 0; b < 4; ++b) {
    REQUIRE(s["lanes"][b]["segments"].size() == requests[b].size());
    for (size_t k = 0; k < requests[b].size(); ++k)
      CHECK(s["lanes"][b]["segments"][k]["request"] == requests[b][k]);
  }
}

}  // namespace test_serving_packing
