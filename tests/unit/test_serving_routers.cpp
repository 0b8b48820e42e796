// Routers and replicas (sim/serving/router.hpp, replicas.hpp; docs/serving.md, "Replicas and
// arrivals"): each router against a hand-worked assignment, the registry against its folder,
// and N replicas conserving every request, token and picojoule of the N separate replays.
#include <catch2/catch.hpp>


#include "serving_helpers.hpp"
#include "sim/serving/arrivals.hpp"
#include "sim/serving/replicas.hpp"
#include "sim/serving/scheduler.hpp"

namespace test_serving_routers {

using namespace systolic;
using namespace systolic::serving;

TEST_CASE("serving routers: round-robin deals requests in turn", "[serving]") {
  const auto log = testing::request_log({{0, 1, 1}, {0, 9, 1}, {0, 1, 1}, {1, 1, 1}, {2, 1, 1}});
  CHECK(routers().get("round-robin", "router").route(log.requests, 3) == std::vector<int64_t>{0, 1, 2, 0, 1});
}

TEST_CASE("serving routers: least-loaded sends a request where the fewest tokens are owed", "[serving]") {
  const Router& r = routers().get("least-loaded", "router");
  // All at t = 0 (no span: nothing is worked off). Tokens 10, 3, 4, 2 over 2 replicas:
  // 10 -> 0 (owed 10, 0); 3 -> 1 (10, 3); 4 -> 1 (10, 7); 2 -> 1 (10, 9).
  CHECK(r.route(testing::request_log({{0, 9, 1}, {0, 2, 1}, {0, 3, 1}, {0, 1, 1}}).requests, 2) ==
        std::vector<int64_t>{0, 1, 1, 1});
  // 10 tokens at t = 0, 1, 2: 30 tokens over a 2 s span and 2 replicas = 7.5 tokens/s each.
  // t=0: -> 0 (owed 10, 0). t=1: 0 owes 2.5, 1 owes 0 -> 1. t=2: 0 owes 0, 1 owes 2.5 -> 0.
  CHECK(r.route(testing::request_log({{0, 9, 1}, {1, 9, 1}, {2, 9, 1}}).requests, 2) ==
        std::vector<int64_t>{0, 1, 0});
}

TEST_CASE("serving replicas: N replicas are the N replays of their shares, merged", "[serving]") {
  const ClosedFormCost cost({1e-3, 1e-5, 1e-8}, {1e6, 1e4, 10.0});
  const ServeOptions o = testing::serve_options({{1, 64}, {2, 64}}, {{4, 128}});
  const auto log = testing::poisson_log(200, 50.0, 7, {1, 60}, {1, 40});
  for (const char* name : {"round-robin", "least-loaded"}) {
    const Router& router = routers().get(name, "router");
    const ServeResult merged = serve_replicas(log, "continuous", cost, o, 3, router);
    const Split split = split_by_replica(log, router.route(log.requests, 3), 3);
    double energy = 0, busy = 0;
    for (const auto& part : split.logs) {
      const ServeResult r = serve(part, "continuous", cost, o);
      energy += r.totals.energy_pj, busy += r.totals.busy_s;
    }
    INFO(name);
    REQUIRE(merged.records.size() == 200);
    for (size_t i = 0; i < merged.records.size(); ++i) CHECK(merged.records[i].id == static_cast<int64_t>(i));
    CHECK(merged.totals.energy_pj == Approx(energy).epsilon(1e-12));
    CHECK(merged.totals.busy_s == Approx(busy).epsilon(1e-12));
    // Three chips share the log: the requests wait no longer in total than on one chip.
    const ServeResult one = serve(log, "continuous", cost, o);
    double wait1 = 0, wait3 = 0;
    for (size_t i = 0; i < 200; ++i) wait1 += one.records[i].queue_s(), wait3 += merged.records[i].queue_s();
    CHECK(wait3 <= wait1);
  }
  CHECK(testing::input_error_of([&] { validate_replicas(0); }) ==
        "--replicas 0: expected a number of replicas in [1, 4096]");
}

TEST_CASE("serving arrivals: rate scale and Poisson arrivals with the log's lengths", "[serving]") {
  const auto log = testing::request_log({{0, 5, 2}, {2, 7, 3}, {4, 9, 1}});
  const auto fast = scale_rate(log, 2.0);
  CHECK(fast.requests[2].arrival_s == 2.0);
  CHECK(testing::input_error_of([&] { scale_rate(log, 0.0); }) ==
        "--rate-scale 0: expected a factor > 0 (arrival times are divided by it)");
  const auto poisson = poisson_log(testing::poisson_log(20000, 1.0, 3, {1, 100}, {1, 10}), 4.0, 11);
  REQUIRE(poisson.requests.size() == 20000);
  // Mean gap 1 / 4 s: the last arrival near 20000 / 4 = 5000 s (within 3 %, 20,000 gaps).
  CHECK(poisson.requests.back().arrival_s == Approx(5000).epsilon(0.03));
  double prompts = 0;
  for (const auto& r : poisson.requests) prompts += static_cast<double>(r.prompt_tokens);
  CHECK(prompts / 20000 == Approx(50.5).epsilon(0.03));  // uniform 1..100, drawn with replacement
  CHECK(poisson_log(log, 4.0, 11).requests[1].arrival_s == poisson_log(log, 4.0, 11).requests[1].arrival_s);
}

}  // namespace test_serving_routers
