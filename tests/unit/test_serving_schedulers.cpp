// Serving schedulers (docs/serving.md): a 5-request example worked by hand for each scheduler
// (every TTFT and TBT written out below), conservation on random logs for every registered
// scheduler, admission (truncation, rejection, the KV budget) and the registry against the
// folder of scheduler files.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "serving_helpers.hpp"
#include "sim/serving/metrics.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/serving/step_cost.hpp"

namespace test_serving_schedulers {

using namespace systolic;
using namespace systolic::serving;
using namespace systolic::testing;

namespace {

const double kNone = std::nan("");

struct Expected {
  double queue, ttft, tbt_mean, tbt_max, e2e;  // tbt NaN for a single token
};

// A scheduler's latencies of R0 .. R4 in hand_example(), worked out step by step above each.
struct HandWorked {
  const char* scheduler;
  std::vector<Expected> requests;
};

const HandWorked kHandWorked[] = {
    // static: t=0 batch {R0, R1} in prefill [2, 4] (0 -> 2: both first tokens at 2), decode
    // [2, 16] 2 -> 3.25 (R0 token 2, R1 token 2: R1 done), 3.25 -> 4.5 (R0 token 3, lane 1 a
    // pad). t=4.5: R2 needs [1, 8], R3 cannot join it (no [2, >=6] bucket): batch {R2}, 4.5 ->
    // 6.5, its only token (TTFT 6.5 - 1 = 5.5). t=6.5: {R3} prefill [1, 4] 6.5 -> 8 (TTFT 7),
    // decode 8 -> 9.25 -> 10.5 -> 11.75 (E2E 10.75). R4 (arrived 10) waits for 11.75: prefill
    // 11.75 -> 13.25 (TTFT 3.25), decode -> 14.5 (E2E 4.5).
    {"static",
     {{0, 2, 1.25, 1.25, 4.5},
      {0, 2, 1.25, 1.25, 3.25},
      {3.5, 5.5, kNone, kNone, 5.5},
      {5.5, 7, 1.25, 1.25, 10.75},
      {1.75, 3.25, 1.25, 1.25, 4.5}}},
    // continuous (decode [2, 16], 2 slots; a request whose only token comes from prefill takes
    // no slot): t=0 prefill [2, 4] {R0, R1} 0 -> 2 (TTFT 2, 2). R2, R3 arrived at 1: R2 needs
    // no slot, R3 cannot join it (no [2, >=6] bucket): prefill {R2} in [1, 8] 2 -> 4 (its only
    // token: TTFT 3). No slot for R3: decode 4 -> 5.25 (R0 token 2; R1 token 2, gap 3.25, done,
    // slot 1 free). Prefill {R3} in [1, 4] 5.25 -> 6.75 (TTFT 5.75). Decode 6.75 -> 8: R0 token
    // 3 (gaps 3.25 and 2.75: mean 3, max 3.25, E2E 8), R3 token 2. Decode 8 -> 9.25 -> 10.5: R3
    // done (E2E 9.5). R4 (arrived 10) prefill 10.5 -> 12 (TTFT 2), decode 12 -> 13.25 (E2E 3.25).
    {"continuous",
     {{0, 2, 3, 3.25, 8},
      {0, 2, 3.25, 3.25, 5.25},
      {1, 3, kNone, kNone, 3},
      {4.25, 5.75, 1.25, 1.25, 9.5},
      {0.5, 2, 1.25, 1.25, 3.25}}},
    // chunked (C = 4; prefill [1, 4] = 1.5 s, with decode [2, 16] beside it 2.75 s): t=0 R0, R1
    // take both slots; chunk = R0's 4 tokens, 0 -> 1.5 (TTFT 1.5). At 1.5 R2 (one token: no
    // slot) starts its prefill, R3 waits for a slot: chunk R1's 3 + R2's first 1, decode R0:
    // 1.5 -> 4.25 (R1 TTFT 4.25; R0 token 2, gap 2.75). Chunk R2's next 4, decode R0 and R1:
    // 4.25 -> 7 (R0 token 3: gaps 2.75, 2.75, E2E 7; R1 token 2: E2E 7). Both slots free: R3
    // starts at 7; chunk R2's last 1 + R3's 2, 7 -> 8.5: R2's only token (TTFT 7.5), R3 TTFT
    // 7.5. Decode R3: 8.5 -> 9.75 -> 11; R4 (arrived 10) joins at 11: chunk R4 + decode R3 11 ->
    // 13.75 (R3 token 4: gaps 1.25, 1.25, 2.75, E2E 12.75; R4 TTFT 3.75); decode 13.75 -> 15
    // (E2E 5).
    {"chunked",
     {{0, 1.5, 2.75, 2.75, 7},
      {1.5, 4.25, 2.75, 2.75, 7},
      {0.5, 7.5, kNone, kNone, 7.5},
      {6, 7.5, 1.75, 2.75, 12.75},
      {1, 3.75, 1.25, 1.25, 5}}},
    // disaggregated (one prefill chip P, one decode chip D with [2, 16]; the KV cache crosses a
    // 4 B/s link: prompt / 4 s; decode chips act first on a tie). P 0 -> 2: prefill [2, 4] {R0
    // slot 0, R1 slot 1} (TTFT 2, 2); R1's cache lands at 2.75, R0's at 3. P 2 -> 4: R2 in
    // [1, 8] (one token: no slot, no cache to move; TTFT 3; R3 cannot join it: no [2, >=6]).
    // D 2.75 -> 4: R1 token 2 (gap 2, E2E 4). At 4 D frees slot 1 and runs R0 4 -> 5.25 (gap
    // 3.25); P prefills R3 into slot 1, [1, 4] 4 -> 5.5 (TTFT 4.5), its cache at 6. D 5.25 ->
    // 6.5: R0 token 3 (gaps 3.25, 1.25, E2E 6.5). D 6.5 -> 7.75 -> 9 -> 10.25: R3 (gaps 2.25,
    // 1.25, 1.25, E2E 9.25). R4: P 10 -> 11.5 (TTFT 1.5), cache at 12.5, D 12.5 -> 13.75 (gap
    // 2.25, E2E 3.75).
    {"disaggregated",
     {{0, 2, 2.25, 3.25, 6.5},
      {0, 2, 2, 2, 4},
      {1, 3, kNone, kNone, 3},
      {3, 4.5, 4.75 / 3, 2.25, 9.25},
      {0, 1.5, 2.25, 2.25, 3.75}}},
    // dynamic (varlen, 2 slots, at most 2 prompts a step): prefill {R0, R1} = 1 + 0.125 * 7 =
    // 1.875 s (TTFT 1.875). R2 needs no slot, R3 waits for one: prefill {R2} = 1.75 s -> 3.625
    // (TTFT 2.625, done). Decode of 2 (1.25 s) -> 4.875: R1 done (gap 3). Prefill {R3} = 1.25 s
    // -> 6.125 (TTFT 5.125). Decode of 2 -> 7.375: R0 done (gaps 3, 2.5; E2E 7.375). Decode of 1
    // (1.125 s) -> 8.5 -> 9.625: R3 done (gaps 1.25, 1.125, 1.125; E2E 8.625). R4 at 10: prefill
    // 1.5 s -> 11.5 (TTFT 1.5), decode -> 12.625 (E2E 2.625).
    {"dynamic",
     {{0, 1.875, 2.75, 3, 7.375},
      {0, 1.875, 3, 3, 4.875},
      {0.875, 2.625, kNone, kNone, 2.625},
      {3.875, 5.125, 3.5 / 3, 1.25, 8.625},
      {0, 1.5, 1.125, 1.125, 2.625}}},
};

void check_hand(const HandWorked& hand) {
  const ServeResult r = hand_example().serve(hand.scheduler);
  REQUIRE(r.records.size() == hand.requests.size());
  for (size_t i = 0; i < hand.requests.size(); ++i) {
    INFO(hand.scheduler << " R" << i);
    const Expected& want = hand.requests[i];
    const RequestRecord& got = r.records[i];
    CHECK(got.outcome == Outcome::served);
    CHECK(got.queue_s() == Approx(want.queue).margin(1e-12));
    CHECK(got.ttft_s() == Approx(want.ttft).margin(1e-12));
    CHECK(got.e2e_s() == Approx(want.e2e).margin(1e-12));
    if (std::isnan(want.tbt_mean)) {
      CHECK(std::isnan(got.tbt_mean_s()));
    } else {
      CHECK(got.tbt_mean_s() == Approx(want.tbt_mean).margin(1e-12));
      CHECK(got.tbt_max_s == Approx(want.tbt_max).margin(1e-12));
    }
  }
}

}  // namespace

// A scheduler is registered with its example worked by hand: one without an entry fails here.
TEST_CASE("serving: every registered scheduler's 5-request example worked by hand", "[serving]") {
  const auto& entries = schedulers().entries();
  CHECK(std::size(kHandWorked) == entries.size());
  for (const auto& entry : entries) {
    INFO(entry.name);
    const auto* hand = std::find_if(std::begin(kHandWorked), std::end(kHandWorked),
                                    [&](const HandWorked& h) { return entry.name == h.scheduler; });
    REQUIRE(hand != std::end(kHandWorked));
    check_hand(*hand);
  }
}

// static: pads, shapes and steps of its hand-worked replay (kHandWorked above).
TEST_CASE("serving static: pads and steps of the hand-worked example", "[serving]") {
  const ServeResult r = hand_example().serve("static");
  // Pads: [2, 4] holds 7 of 8 (the 1 pad to R0, the first work); R0's last decode step has an
  // empty lane; R2 fills 6 of [1, 8]; R3 2 of [1, 4] and 3 steps of [2, 16] alone; R4 1 step alone.
  CHECK(r.records[0].pad_tokens == 2);
  CHECK(r.records[1].pad_tokens == 0);
  CHECK(r.records[2].pad_tokens == 2);
  CHECK(r.records[3].pad_tokens == 5);
  CHECK(r.records[4].pad_tokens == 1);
  CHECK(r.records[2].prefill_shape == packing::Shape{1, 8});
  CHECK(r.totals.steps == 10);  // 1 + 2 decode, 1, 1 + 3, 1 + 1
}

TEST_CASE("serving disaggregated: KV transfers and busy time of the hand-worked example", "[serving]") {
  const ServeResult r = hand_example().serve("disaggregated");
  CHECK(r.records[0].kv_transfer_s == 1);
  CHECK(r.records[2].kv_transfer_s == 0);                          // one token: nothing to move
  CHECK(r.totals.busy_s == Approx(2 + 2 + 1.5 + 1.5 + 7 * 1.25));  // 4 prefill steps, 7 decode steps
}

TEST_CASE("serving dynamic: the hand-worked example computes no pads", "[serving]") {
  const ServeResult r = hand_example().serve("dynamic");
  CHECK(r.totals.pad == 0);
  CHECK(r.records[0].varlen);
}

TEST_CASE("serving: every registered scheduler conserves requests, tokens and energy on random logs",
          "[serving]") {
  const ClosedFormCost cost({2e-3, 1e-6, 1e-9}, {1e9, 5e5, 10.0});
  for (const auto& entry : schedulers().entries()) {
    for (const Overflow overflow : {Overflow::reject, Overflow::truncate}) {
      for (const uint64_t seed : {1u, 2u, 3u}) {
        INFO(entry.name << " overflow " << kOverflowNames.name(overflow) << " seed " << seed);
        const auto log = systolic::testing::poisson_log(400, 20.0, seed, {1, 5000}, {1, 600});
        ServeOptions o = serve_options({{4, 512}, {2, 1024}, {1, 4096}}, {{8, 2048}, {4, 4096}}, 20000);
        o.overflow = overflow;
        o.chunk_tokens = 256;
        o.prefill_chips = 2;  // disaggregated: 2 prefill chips, 3 decode chips, a 1 GB/s link
        o.decode_chips = 3;
        o.kv_link_bytes_per_s = 1e9;
        const ServeResult r = serve(log, entry.name, cost, o);
        int64_t outcomes[3] = {0, 0, 0}, useful = 0, pad = 0;
        double energy = 0;
        for (const RequestRecord& rec : r.records) {
          ++outcomes[static_cast<int>(rec.outcome)];
          useful += rec.useful_tokens();
          pad += rec.pad_tokens;
          energy += rec.energy_pj;
          if (!rec.served()) continue;
          CHECK(rec.first_token_s >= rec.arrival_s);  // the first token comes from prefill
          CHECK(rec.prefilled_tokens == rec.prompt_tokens);
          CHECK(rec.e2e_s() >= rec.ttft_s());
        }
        CHECK(outcomes[0] + outcomes[1] + outcomes[2] == 400);
        CHECK(useful + pad == r.totals.positions);
        CHECK(energy == Approx(r.totals.energy_pj).epsilon(1e-9));
        if (entry.name == "dynamic") CHECK(pad == 0);
        if (overflow == Overflow::reject) CHECK(outcomes[static_cast<int>(Outcome::truncated)] == 0);
      }
    }
  }
}

TEST_CASE("serving: prompts beyond S, contexts beyond L and the KV budget are rejected or truncated",
          "[serving]") {
  // prefill up to S = 8, decode L = 16, KV budget 16 tokens (one full slot).
  const auto log = request_log({{0, 9, 2}, {0, 8, 20}, {0, 4, 9}, {0, 3, 3}});
  ServeOptions o = serve_options({{1, 8}}, {{1, 16}}, 16);
  SECTION("reject") {
    const ServeResult r = serve(log, "continuous", hand_example().cost, o);
    CHECK(r.records[0].outcome == Outcome::rejected);
    CHECK(r.records[0].reason == Reason::prompt_exceeds_prefill);
    CHECK(r.records[1].reason == Reason::context_exceeds_decode);  // 8 + 20 > 16
    CHECK(r.records[2].outcome == Outcome::served);
    CHECK(r.records[3].outcome == Outcome::served);
  }
  SECTION("truncate") {
    o.overflow = Overflow::truncate;
    const ServeResult r = serve(log, "continuous", hand_example().cost, o);
    CHECK(r.records[0].outcome == Outcome::rejected);  // no prefill bucket holds 9 tokens
    CHECK(r.records[1].outcome == Outcome::truncated);
    CHECK(r.records[1].generated_tokens == 8);  // 16 - 8
    CHECK(r.records[2].outcome == Outcome::served);
  }
  SECTION("dynamic: no S or L, only the KV budget") {
    const ServeResult r = serve(log, "dynamic", hand_example().cost, o);
    CHECK(r.records[0].outcome == Outcome::served);             // 9 + 2 <= 16
    CHECK(r.records[1].reason == Reason::kv_exceeds_capacity);  // 8 + 20 > 16
    CHECK(r.records[2].outcome == Outcome::served);
  }
}

TEST_CASE("serving: the KV budget limits how many requests decode at once", "[serving]") {
  // Two slots, but 16 tokens of KV: two contexts of 4 + 6 = 10 cannot be held together.
  const auto log = request_log({{0, 4, 6}, {0, 4, 6}});
  for (const char* name : {"continuous", "chunked", "dynamic", "static", "disaggregated"}) {
    INFO(name);
    const ServeResult r = serve(log, name, hand_example().cost, serve_options({{2, 4}}, {{2, 16}}, 16));
    CHECK(r.records[1].start_s >= r.records[0].last_token_s);
  }
  // With room for both they run together.
  const ServeResult r = serve(log, "continuous", hand_example().cost, serve_options({{2, 4}}, {{2, 16}}, 20));
  CHECK(r.records[1].start_s == r.records[0].start_s);
}

}  // namespace test_serving_schedulers

namespace test_serving_schedulers {

// llama3-8k's prefill ladder: one prompt of up to 8192 tokens is laid in a [1, S] bucket, so
// continuous batching reaches [2, 8192] and [4, 8192] only by growing a batch (worth_growing),
// and ShapeSimulator::ahead leaves them for last; the static scheduler fills them and runs them.
TEST_CASE("serving: the prefill buckets only a grown batch reaches are simulated on demand", "[serving]") {
  const packing::BucketSet set = packing::make_bucket_set(
      {{1, 512}, {1, 1024}, {1, 2048}, {1, 4096}, {1, 8192}, {2, 8192}, {4, 8192}}, {{16, 2048}, {4, 8192}});
  ServeOptions options;
  options.buckets = set;
  const auto on_demand = [&](const char* scheduler) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const StepShape& s : schedulers().get(scheduler, "--scheduler").shapes(options))
      if (s.on_demand) out.emplace_back(s.shape.batch, s.shape.length);
    return out;
  };
  const std::vector<std::pair<int64_t, int64_t>> grown = {{2, 8192}, {4, 8192}};
  CHECK(on_demand("continuous") == grown);
  CHECK(on_demand("disaggregated") == grown);
  CHECK(on_demand("static").empty());
  // A set whose narrowest bucket of a length is wider than one lane: one prompt takes it.
  options.buckets = packing::make_bucket_set({{2, 512}, {4, 512}, {2, 1024}}, {{4, 1024}});
  CHECK(on_demand("continuous") == std::vector<std::pair<int64_t, int64_t>>{{4, 512}});
}

}  // namespace test_serving_schedulers
