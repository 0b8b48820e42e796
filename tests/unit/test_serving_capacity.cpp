// Capacity searches (sim/serving/capacity.hpp) against answers worked by hand: deterministic
// service through `static`, one request per step, so the chip keeps up exactly while the
// arrival gap is at least the step time.
#include <catch2/catch.hpp>

#include <cmath>

#include "serving_helpers.hpp"
#include "sim/serving/arrivals.hpp"
#include "sim/serving/capacity.hpp"
#include "sim/serving/replicas.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/serving/step_cost.hpp"

namespace test_serving_capacity {

using namespace systolic;
using namespace systolic::serving;
using namespace systolic::testing;

namespace {

// n one-token requests (one prompt token, the token prefill produces), `gap` seconds apart.
packing::RequestLog even_log(int n, double gap) {
  std::vector<std::tuple<double, int64_t, int64_t>> rows;
  for (int i = 0; i < n; ++i) rows.emplace_back(i * gap, 1, 1);
  return request_log(rows);
}

// Every step costs `step_s` whatever it holds; one slot: a prefill [1, 16] serves one request.
CapacityReplay replay_of(const packing::RequestLog& log, double step_s, const CapacityOptions& o) {
  return [log, step_s, slo = o.slo](double rate_factor, int64_t replicas) {
    const ClosedFormCost cost({step_s, 0, 0}, {0, 0, 0});
    const auto& router = routers().get("round-robin", "router");
    const ServeResult r = serve_replicas(scale_rate(log, rate_factor), "static", cost,
                                         serve_options({{1, 16}}, {{1, 16}}), replicas, router);
    return summarize(r, slo);
  };
}

CapacityOptions options(double ttft_s, double target) {
  CapacityOptions o;
  o.slo = {ttft_s, 1.0};
  o.target = target;
  return o;
}

}  // namespace

TEST_CASE("capacity: one replica sustains exactly 1 / step requests/s of deterministic service",
          "[serving]") {
  // Arrivals 1 s apart, 0.5 s per request. At rate x f the gap is 1/f: for f <= 2 every request
  // starts at its arrival (TTFT 0.5 s, within the SLO); for f > 2 request 1 waits and misses
  // it, so attainment 99/100 < target 1. The capacity is 2 requests/s.
  CapacityOptions o = options(0.5, 1.0);
  const RateSearch s = highest_rate(replay_of(even_log(100, 1.0), 0.5, o), o);
  REQUIRE(s.highest);
  REQUIRE(s.lowest_failed);
  CHECK(s.highest->rate_factor <= 2.0);
  CHECK(s.lowest_failed->rate_factor > 2.0);
  CHECK(s.lowest_failed->rate_factor <= s.highest->rate_factor * (1 + o.tolerance));
  CHECK(s.highest->offered_rps == Approx(s.highest->rate_factor));  // the log offers 1 request/s
  CHECK(s.highest->attainment == 1.0);
  CHECK(s.lowest_failed->attainment == Approx(0.01));
  CHECK(s.monotone);
}

TEST_CASE("capacity: with target 0.9 the rate where the 90th request just meets the SLO", "[serving]") {
  // Above 2 requests/s the chip is busy from t = 0: request k starts at 0.5 k and arrives at
  // k / f, so its TTFT is 0.5 + k (0.5 - 1/f). With the SLO 0.5 + 0.89 s, request k meets it
  // while k (0.5 - 1/f) <= 0.89; 90 of 100 (k = 0..89) do while f <= 1 / (0.5 - 0.89 / 89) =
  // 1 / 0.49 = 2.0408 requests/s.
  CapacityOptions o = options(0.5 + 0.89, 0.9);
  o.tolerance = 0.001;
  const RateSearch s = highest_rate(replay_of(even_log(100, 1.0), 0.5, o), o);
  REQUIRE(s.highest);
  REQUIRE(s.lowest_failed);
  const double capacity = 1 / 0.49;
  CHECK(s.highest->rate_factor <= capacity);
  CHECK(s.lowest_failed->rate_factor > capacity);
  CHECK(s.lowest_failed->rate_factor <= s.highest->rate_factor * 1.001);
  CHECK(s.highest->attainment >= 0.9);
  CHECK(s.lowest_failed->attainment == Approx(0.89));
}

TEST_CASE("capacity: the fewest replicas of deterministic service is ceil(step / gap)", "[serving]") {
  // 200 requests 0.125 s apart, 0.625 s each. Round-robin gives replica k every N-th request,
  // 0.125 N s apart: each keeps up exactly when 0.125 N >= 0.625, N >= 5.
  const CapacityOptions o = options(0.625, 1.0);
  const ReplicaSearch s = fewest_replicas(replay_of(even_log(200, 0.125), 0.625, o), o);
  REQUIRE(s.fewest);
  CHECK(s.fewest->replicas == 5);
  CHECK(s.curve.size() >= 4);
  for (const CapacityPoint& p : s.curve) {
    INFO("replicas " << p.replicas);
    CHECK(p.sustained == (p.replicas >= 5));
  }
  CHECK(s.monotone);
  // Capped below the answer: no count sustains.
  CapacityOptions capped = options(0.625, 1.0);
  capped.max_replicas = 4;
  CHECK_FALSE(fewest_replicas(replay_of(even_log(200, 0.125), 0.625, capped), capped).fewest);
}

TEST_CASE("capacity: attainment never rises with the rate of Poisson arrivals (Lindley)", "[serving]") {
  // A FIFO single server: each wait is max(0, previous wait + service - gap), so shrinking every
  // gap by the same factor never shortens a wait. The search's curve must bear that out, and
  // its answer bracket the crossing.
  const auto log = systolic::testing::poisson_log(2000, 1.0, 7, {1, 1}, {1, 1});
  const CapacityOptions o = options(2.0, 0.95);
  const RateSearch s = highest_rate(replay_of(log, 0.5, o), o);
  REQUIRE(s.highest);
  REQUIRE(s.lowest_failed);
  CHECK(s.monotone);
  CHECK(s.curve.size() >= 5);
  for (size_t i = 1; i < s.curve.size(); ++i) CHECK(s.curve[i].attainment <= s.curve[i - 1].attainment);
  // Below the service rate 2/s: the highest sustained rate is a load < 1.
  CHECK(s.highest->offered_rps < 2.0);
}

TEST_CASE("capacity: an SLO no request can meet has no sustained rate", "[serving]") {
  // A request alone takes 0.5 s: a TTFT SLO of 0.25 s is missed at every rate.
  const CapacityOptions o = options(0.25, 0.5);
  const RateSearch s = highest_rate(replay_of(even_log(10, 1.0), 0.5, o), o);
  CHECK_FALSE(s.highest);
  REQUIRE(s.lowest_failed);
  CHECK(s.curve.size() == 31);  // 1, 1/2, ..., 2^-30
}

TEST_CASE("capacity: bad search options are InputErrors naming the flag", "[serving]") {
  const auto error_of = [](CapacityOptions o) {
    return systolic::testing::input_error_of([&] { validate(o); });
  };
  CapacityOptions o = options(1, 0.99);
  o.target = 0;
  CHECK_THAT(error_of(o), Catch::Contains("--target 0") && Catch::Contains("(0, 1]"));
  o.target = 1.5;
  CHECK_THAT(error_of(o), Catch::Contains("--target 1.5"));
  o.target = std::nan("");
  CHECK_THAT(error_of(o), Catch::Contains("--target nan"));
  o = options(1, 0.99);
  o.tolerance = 0;
  CHECK_THAT(error_of(o), Catch::Contains("--tolerance 0"));
  o.tolerance = 1;
  CHECK_THAT(error_of(o), Catch::Contains("--tolerance 1"));
  o = options(1, 0.99);
  o.max_replicas = 0;
  CHECK_THAT(error_of(o), Catch::Contains("--max-replicas 0"));
  o = options(-1, 0.99);
  CHECK_THAT(error_of(o), Catch::Contains("ttft"));
}

}  // namespace test_serving_capacity
