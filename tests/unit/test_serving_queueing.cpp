// The serving engine against queueing theory: Poisson arrivals (seeded), deterministic service,
// one slot, the `static` scheduler is an M/D/1 queue, whose mean wait in queue is the
// Pollaczek-Khinchine value for constant service: Wq = rho / (2 mu (1 - rho)).
#include <catch2/catch.hpp>

#include "serving_helpers.hpp"
#include "sim/serving/metrics.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/serving/step_cost.hpp"

namespace test_serving_queueing {

using namespace systolic;
using namespace systolic::serving;

namespace {

// Every request is one prompt token and one output token (the token prefill produces), so it
// is served by exactly one prefill step of [1, 16] costing 1 s: deterministic service, mu = 1/s.
double mean_wait(double rho, uint64_t seed) {
  const ClosedFormCost cost({1.0, 0.0, 0.0}, {0.0, 0.0, 0.0});
  const auto log = systolic::testing::poisson_log(100000, rho, seed, {1, 1}, {1, 1});
  const ServeResult r = serve(log, "static", cost, systolic::testing::serve_options({{1, 16}}, {{1, 16}}));
  return summarize(r).queue_s.mean;
}

}  // namespace

TEST_CASE("serving M/D/1: mean wait rho / (2 mu (1 - rho)) within 3 % on 100k requests", "[serving]") {
  for (const double rho : {0.5, 0.8}) {
    const double expected = rho / (2 * 1.0 * (1 - rho));  // 0.5 s at rho 0.5, 2 s at rho 0.8
    INFO("rho " << rho);
    CHECK(mean_wait(rho, 16) == Approx(expected).epsilon(0.03));
  }
}

}  // namespace test_serving_queueing
