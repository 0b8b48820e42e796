#pragma once
// Request logs, bucket sets and costs the serving tests build by hand.
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "input_error.hpp"
#include "models/common/error.hpp"
#include "sim/packing/buckets.hpp"
#include "sim/packing/request_log.hpp"
#include "sim/serving/engine.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/serving/step_cost.hpp"

namespace systolic::testing {

// (arrival_s, prompt_tokens, output_tokens) rows, already in arrival order.
inline packing::RequestLog request_log(const std::vector<std::tuple<double, int64_t, int64_t>>& rows) {
  packing::RequestLog log;
  log.path = "test-log.csv";
  log.format = packing::LogFormat::seconds;
  for (const auto& [arrival, prompt, output] : rows) {
    packing::Request r;
    r.id = static_cast<int64_t>(log.requests.size());
    r.arrival_s = arrival;
    r.prompt_tokens = prompt;
    r.output_tokens = output;
    r.line = static_cast<int>(r.id) + 2;
    log.requests.push_back(r);
  }
  return log;
}

// Poisson arrivals at `rate` per second (seeded), prompt and output lengths uniform in the ranges.
inline packing::RequestLog poisson_log(int64_t n, double rate, uint64_t seed,
                                       std::pair<int64_t, int64_t> prompt,
                                       std::pair<int64_t, int64_t> output) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate);
  std::uniform_int_distribution<int64_t> p(prompt.first, prompt.second), o(output.first, output.second);
  std::vector<std::tuple<double, int64_t, int64_t>> rows;
  double t = 0;
  for (int64_t i = 0; i < n; ++i) {
    t += gap(rng);
    rows.emplace_back(t, p(rng), o(rng));
  }
  return request_log(rows);
}

// Options with a KV budget of `capacity_tokens` tokens at one byte per token (disaggregated:
// one chip per pool, the KV cache moved at 1 TB/s).
inline serving::ServeOptions serve_options(std::vector<packing::Shape> prefill,
                                           std::vector<packing::Shape> decode,
                                           double capacity_tokens = 1e12) {
  serving::ServeOptions o;
  o.buckets = packing::make_bucket_set(std::move(prefill), std::move(decode), "test");
  o.kv_bytes_per_token = 1;
  o.kv_capacity_bytes = capacity_tokens;
  o.kv_link_bytes_per_s = 1e12;
  return o;
}

// A request log with the options and the cost it is served with.
struct Example {
  packing::RequestLog log;
  serving::ServeOptions options;
  serving::ClosedFormCost cost;
  serving::ServeResult serve(const std::string& scheduler) const {
    return serving::serve(log, scheduler, cost, options);
  }
};

// The example every scheduler is worked by hand on (test_serving_schedulers.cpp works out each
// step; test_serving_metrics.cpp summarizes the static replay). Cost per step: 1 s + 0.125 s
// per token position (no attention term):
//   prefill [1, 4] = 1.5 s, [2, 4] = 2 s, [1, 8] = 2 s; decode [2, 16] = 1 + 0.125 * 2 = 1.25 s;
//   varlen prefill of prompts p_i = 1 + 0.125 * sum p_i; varlen decode of n tokens = 1 + 0.125 n.
// Energy: 1 pJ per token position. Buckets: prefill [1, 4], [2, 4], [1, 8]; decode [2, 16] (2
// slots). Chunk C = 4 (chunked); the KV cache crosses a 4 B/s link, prompt / 4 s
// (disaggregated, one chip per pool). Requests (arrival s, prompt, output): R0 (0, 4, 3),
// R1 (0, 3, 2), R2 (1, 6, 1), R3 (1, 2, 4), R4 (10, 4, 2).
inline const Example& hand_example() {
  static const Example example = [] {
    Example e{request_log({{0, 4, 3}, {0, 3, 2}, {1, 6, 1}, {1, 2, 4}, {10, 4, 2}}),
              serve_options({{1, 4}, {2, 4}, {1, 8}}, {{2, 16}}),
              serving::ClosedFormCost({1.0, 0.125, 0.0}, {0.0, 1.0, 0.0})};
    e.options.chunk_tokens = 4;
    e.options.kv_link_bytes_per_s = 4;
    return e;
  }();
  return example;
}

}  // namespace systolic::testing
