// Speed of the serving engine, measured not asserted (docs/performance.md: timings are never
// asserted in tests). Hidden: run it with
//   ./build/tests/unit_tests "[.bench]"
#include <catch2/catch.hpp>

#include <chrono>
#include <iostream>

#include "serving_helpers.hpp"
#include "sim/serving/metrics.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/serving/step_cost.hpp"

namespace test_serving_bench {

using namespace systolic;
using namespace systolic::serving;

TEST_CASE("serving bench: 1 M Poisson requests through continuous", "[.bench]") {
  // Llama-3-8B W8A16 on one TPU v5e (traces/buckets/llama3-8k.yaml, configs/tpu-v5e.yaml), the
  // time of a step as a sum of terms (a closed form, not the simulator):
  //   every step reads the 8.03 GB of int8 weights at 819 GB/s: 9.8 ms;
  //   a token position: 2 x 8.03e9 FLOP at 197 TFLOP/s bf16: 82 us;
  //   a prefill attention cell: QK and PV, 2 x 2 x 4096 FLOP x 32 layers at 197 TFLOP/s: 2.7 ns;
  //   a decode attention cell reads 131,072 B of KV (2 x 32 layers x 8 KV heads x 128 x 2 B)
  //   at 819 GB/s: 0.16 us.
  // The decode pool [8, 4096] holds 32768 x 131,072 B = 4.29 GB of KV: 12.32 GB of the 16 GiB
  // HBM with the weights.
  const double weights_s = 8.03e9 / 819e9, token_s = 2 * 8.03e9 / 197e12;
  const auto cost = ClosedFormCost::per_phase({{weights_s, token_s, 2 * 2 * 4096 * 32 / 197e12}, {}},
                                              {{weights_s, token_s, 131072 / 819e9}, {}});
  const auto start = std::chrono::steady_clock::now();
  const auto log = systolic::testing::poisson_log(1000000, 2.0, 7, {16, 2048}, {1, 256});
  const auto generated = std::chrono::steady_clock::now();
  ServeOptions o =
      systolic::testing::serve_options({{1, 512}, {1, 1024}, {1, 2048}, {2, 8192}, {4, 8192}}, {{8, 4096}});
  o.kv_bytes_per_token = 131072;
  o.kv_capacity_bytes = 32768.0 * 131072;
  const ServeResult r = serve(log, "continuous", cost, o);
  const auto end = std::chrono::steady_clock::now();
  const double capacity = backlogged_capacity(log, "continuous", cost, o);
  const auto capacity_end = std::chrono::steady_clock::now();
  const Summary s = summarize(r, Slo{10.0, 0.2}, capacity);
  const auto secs = [](auto d) { return std::chrono::duration<double>(d).count(); };
  std::cout << "generate log " << secs(generated - start) << " s, serve " << secs(end - generated) << " s ("
            << r.totals.steps << " steps), backlogged capacity replay " << secs(capacity_end - end) << " s\n"
            << format_summary(s);
  CHECK(s.served + s.truncated + s.rejected == 1000000);
}

}  // namespace test_serving_bench
