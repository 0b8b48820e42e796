// Serving metrics (docs/serving.md, "Metrics"): the nearest-rank percentile against the worked
// example of its definition, SLO attainment, goodput and the overload line on the hand-worked
// static replay, requests.csv, and bad input.
#include <catch2/catch.hpp>

#include <sstream>

#include "serving_helpers.hpp"
#include "sim/serving/metrics.hpp"
#include "sim/serving/requests_csv.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/serving/step_cost.hpp"

namespace test_serving_metrics {

using namespace systolic;
using namespace systolic::serving;
using namespace systolic::testing;

TEST_CASE("serving percentile: nearest rank, as in its textbook definition", "[serving]") {
  // The worked example of the nearest-rank method (Wikipedia, "Percentile"): 15, 20, 35, 40, 50.
  const std::vector<double> v{40, 15, 50, 35, 20};
  CHECK(percentile(v, 0.05) == 15);
  CHECK(percentile(v, 0.30) == 20);
  CHECK(percentile(v, 0.40) == 20);
  CHECK(percentile(v, 0.50) == 35);
  CHECK(percentile(v, 1.00) == 50);
  std::vector<double> ten;
  for (int i = 1; i <= 10; ++i) ten.push_back(i);
  CHECK(percentile(ten, 0.9) == 9);  // 0.9 * 10 = 9 exactly: the 9th, not the 10th
  CHECK(percentile(ten, 0.99) == 10);
  CHECK(std::isnan(percentile({}, 0.5)));
}

TEST_CASE("serving summary: latency, SLO attainment and goodput of the hand-worked static replay",
          "[serving]") {
  const ServeResult r = hand_example().serve("static");
  const Summary s = summarize(r, Slo{3.0, 1.3});
  // TTFTs 2, 2, 5.5, 7, 3.25 (test_serving_schedulers.cpp): R0 and R1 meet TTFT <= 3 s and TBT
  // 1.25 <= 1.3 s; the others miss TTFT.
  CHECK(s.served == 5);
  CHECK(s.slo_attainment == Approx(0.4));
  // The chip is busy from 0 to 14.5 s without a gap.
  CHECK(s.makespan_s == Approx(14.5));
  CHECK(s.busy_s == Approx(14.5));
  CHECK(s.goodput_rps == Approx(2 / 14.5));
  CHECK(s.ttft_s.p50 == Approx(3.25));  // nearest rank: the 3rd of 2, 2, 3.25, 5.5, 7
  CHECK(s.ttft_s.p99 == Approx(7));
  CHECK(s.tbt_mean_s.count == 4);  // R2 has one token
  CHECK(s.tokens_per_s == Approx(12 / 14.5));
  CHECK(std::isnan(s.load));  // no capacity given
  CHECK(format_summary(s).find("load: unknown") != std::string::npos);
}

// The capacity replay of the same 5 requests, all waiting at t = 0, through static: {R0, R1} in
// [2, 4] 0 -> 2, decode -> 3.25 -> 4.5; {R2} in [1, 8] 4.5 -> 6.5; {R3, R4} in [2, 4] 6.5 ->
// 8.5, decode [2, 16] -> 9.75 (R4 done) -> 11 -> 12.25 (R3 done). 5 requests in 12.25 s.
TEST_CASE("serving overload line: offered load against the backlogged capacity", "[serving]") {
  const double capacity =
      backlogged_capacity(hand_example().log, "static", hand_example().cost, hand_example().options);
  CHECK(capacity == Approx(5 / 12.25));
  // 4 arrival gaps over 10 s = 0.4 requests/s offered: load 0.98, one replica keeps up.
  const Summary s = summarize(hand_example().serve("static"), std::nullopt, capacity);
  CHECK(s.offered_rps == Approx(0.4));
  CHECK(s.load == Approx(0.98));
  CHECK(s.replicas == 1);
  // The same requests arriving twice as fast (over 5 s): load 1.96, two replicas.
  const auto fast = request_log({{0, 4, 3}, {0, 3, 2}, {0.5, 6, 1}, {0.5, 2, 4}, {5, 4, 2}});
  const Summary f =
      summarize(serve(fast, "static", hand_example().cost, hand_example().options), std::nullopt, capacity);
  CHECK(f.load == Approx(1.96));
  CHECK(f.replicas == 2);
  CHECK(format_summary(f).find("2 replicas would keep up") != std::string::npos);
  const auto j = summary_json(f);
  CHECK(j["load"]["replicas"] == 2);
  CHECK(j["load"]["load"].get<double>() == Approx(1.96));
  CHECK(j["requests"]["served"] == 5);
  CHECK(j["latency_s"]["ttft"]["count"] == 5);
  CHECK(j["latency_s"]["tbt_mean"]["count"] == 4);
  CHECK(j["slo"].is_null());
  CHECK(summary_json(summarize(hand_example().serve("static")))["load"]["replicas"].is_null());
}

TEST_CASE("serving requests.csv: one row per request with the documented columns", "[serving]") {
  const auto log = request_log({{0, 4, 3}, {0.5, 40, 2}});
  const ServeResult r = serve(log, "static", hand_example().cost, hand_example().options);
  std::ostringstream out;
  write_requests_csv(out, r);
  std::istringstream lines(out.str());
  std::string header, first, second, extra;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  CHECK(header ==
        "id,arrival_s,prompt_tokens,output_tokens,generated_tokens,outcome,reason,queue_s,ttft_s,tbt_mean_s,"
        "tbt_max_s,e2e_s,prefill_shape,decode_shape,slot,pad_tokens,energy_pj,kv_transfer_s");
  // R0 alone: prefill [1, 4] 0 -> 1.5, decode [2, 16] 1.5 -> 2.75 -> 4 (1 pad slot each step).
  CHECK(first == "0,0,4,3,3,served,,0,1.5,1.25,1.25,4,\"[1, 4]\",\"[2, 16]\",0,2,8,0");
  CHECK(second == "1,0.5,40,2,0,rejected,prompt-exceeds-prefill,,,,,,,,-1,0,0,0");
  CHECK(!std::getline(lines, extra));
}

TEST_CASE("serving bad input: clear errors naming what was expected", "[serving]") {
  const auto error_of_serve = [](const std::string& scheduler, const ServeOptions& o) {
    return input_error_of([&] { serve(hand_example().log, scheduler, hand_example().cost, o); });
  };
  CHECK(input_error_of([] { validate(Slo{0, 1}); }) == "SLO 'ttft_s': expected a time in seconds > 0, got 0");
  const ServeResult r = hand_example().serve("static");
  CHECK(input_error_of([&] {
          summarize(r, Slo{1, -2});
        }) == "SLO 'tbt_s': expected a time in seconds > 0, got -2");
  const auto empty = request_log({});
  CHECK(input_error_of([&] { serve(empty, "static", hand_example().cost, hand_example().options); }) ==
        "test-log.csv: expected at least one request, got none");
  CHECK(
      error_of_serve("contiguous", hand_example().options) ==
      "scheduler 'contiguous': expected one of static, continuous, chunked, disaggregated, dynamic (did you "
      "mean 'continuous'?)");
  // A decode shape that cannot hold a request: L = 1, or one slot's KV beyond the budget.
  CHECK(error_of_serve("continuous", serve_options({{1, 4}}, {{2, 1}})) ==
        "bucket set 'test': decode shape [2, 1]: expected L >= 2 (a prompt token and a generated token); "
        "it cannot hold a request");
  CHECK(error_of_serve("static", serve_options({{1, 4}}, {{2, 16}}, 15)) ==
        "bucket set 'test': decode shape [2, 16]: one slot's full context (16 tokens x 1 B = 16 B) exceeds "
        "kv_capacity_bytes (15 B); expected a shape whose slot fits the KV budget");
  ServeOptions o = hand_example().options;
  o.chunk_tokens = 0;
  CHECK(error_of_serve("chunked", o) ==
        "serving option 'chunk_tokens': expected prompt tokens per step in [1, 16777216], got 0");
  o = hand_example().options;
  o.kv_bytes_per_token = 0;
  CHECK(error_of_serve("dynamic", o) ==
        "serving option 'kv_bytes_per_token': expected KV-cache bytes per token of context (a number > 0), "
        "got 0");
  o = hand_example().options;
  o.kv_link_bytes_per_s = 0;
  CHECK(error_of_serve("disaggregated", o) ==
        "serving option 'kv_link_bytes_per_s': expected the bytes/s of the link the KV cache crosses "
        "(a number > 0), got 0");
  o = hand_example().options;
  o.window_s = -1;
  CHECK(error_of_serve("continuous", o) ==
        "serving option 'window_s': expected a batching window in seconds >= 0, got -1");
  o = hand_example().options;
  o.packer = "fist-fit";
  CHECK(
      error_of_serve("static", o) ==
      "serving option 'packer' 'fist-fit': expected one of none, first-fit (ff), first-fit-decreasing (ffd), "
      "best-fit (bf) (did you mean 'first-fit'?)");
  o = hand_example().options;
  o.decode_chips = 0;
  CHECK(error_of_serve("disaggregated", o) ==
        "serving option 'decode_chips': expected chips in [1, 4096], got 0");
  CHECK(input_error_of([] {
          ClosedFormCost({-1, 0, 0}, {});
        }) == "closed-form cost 'seconds.step': expected a finite number >= 0, got -1");
  CHECK(input_error_of([] {
          ClosedFormCost({0, 0, 1}, {});
        }) == "closed-form cost 'seconds': expected step > 0 or token > 0 (a step must take time)");
  CHECK(input_error_of([] {
          ClosedFormCost::per_phase({{1, 0, 0}, {}}, {{0, 0, -1}, {}});
        }) == "closed-form cost 'decode.seconds.cell': expected a finite number >= 0, got -1");
}

}  // namespace test_serving_metrics
