#include "sim/serving/scheduler.hpp"

#include <cmath>
#include <tuple>

#include <fmt/format.h>

#include "models/common/error.hpp"
#include "sim/packing/bin_packer.hpp"
#include "sim/serving/metrics.hpp"

namespace systolic::serving {

const Registry<Scheduler>& schedulers() { return Registry<Scheduler>::instance(); }

void validate_common(const ServeOptions& options) {
  for (const auto& [value, key, what] :
       {std::tuple{options.kv_bytes_per_token, "kv_bytes_per_token", "KV-cache bytes per token of context"},
        {options.kv_capacity_bytes, "kv_capacity_bytes", "HBM bytes left for the KV cache"}})
    if (!(std::isfinite(value) && value > 0))
      throw InputError(
          fmt::format("serving option '{}': expected {} (a number > 0), got {}", key, what, value));
  for (const auto& [value, key, what] :
       {std::tuple{options.window_s, "window_s", "a batching window in seconds >= 0"},
        {options.compile_stall_s, "compile_stall_s", "the seconds one compilation takes, >= 0"}})
    if (!(std::isfinite(value) && value >= 0))
      throw InputError(fmt::format("serving option '{}': expected {}, got {}", key, what, value));
  if (options.compile_granule < 1)
    throw InputError(
        fmt::format("serving option 'compile_granule': expected tokens >= 1 (the array tile), got {}",
                    options.compile_granule));
  packing::packer_name(options.packer, "serving option 'packer'");
  const auto& b = options.buckets;
  if (b.prefill.empty() || b.decode.empty())
    throw InputError(
        fmt::format("bucket set '{}': expected at least one prefill and one decode shape", b.name));
}

void validate_decode_shape(const Shape& decode, const ServeOptions& options) {
  const std::string where =
      fmt::format("bucket set '{}': decode shape {}", options.buckets.name, packing::to_string(decode));
  if (decode.length < 2)
    throw InputError(where +
                     ": expected L >= 2 (a prompt token and a generated token); it cannot hold a request");
  const double slot_bytes = static_cast<double>(decode.length) * options.kv_bytes_per_token;
  if (slot_bytes > options.kv_capacity_bytes)
    throw InputError(
        fmt::format("{}: one slot's full context ({} tokens x {} B = {} B) exceeds kv_capacity_bytes "
                    "({} B); expected a shape whose slot fits the KV budget",
                    where, decode.length, options.kv_bytes_per_token, slot_bytes, options.kv_capacity_bytes));
}

namespace {

void validate_log(const packing::RequestLog& log) {
  const std::string name = log.path.empty() ? "request log" : log.path;
  if (log.requests.empty()) throw InputError(name + ": expected at least one request, got none");
  for (size_t i = 0; i < log.requests.size(); ++i) {
    const packing::Request& r = log.requests[i];
    if (r.id != static_cast<int64_t>(i) || (i > 0 && r.arrival_s < log.requests[i - 1].arrival_s))
      throw InputError(
          fmt::format("{}: request {}: expected requests in arrival order with id = index", name, i));
    if (!std::isfinite(r.arrival_s) || r.prompt_tokens < 1 || r.output_tokens < 1)
      throw InputError(
          fmt::format("{}: request {}: expected a finite arrival and at least one prompt and one "
                      "output token",
                      name, i));
  }
}

}  // namespace

ServeResult serve(const packing::RequestLog& log, std::string_view scheduler, const StepCost& cost,
                  const ServeOptions& options) {
  validate_log(log);
  const Scheduler& s = schedulers().get(scheduler, "scheduler");
  validate_common(options);
  s.validate(options);
  Engine engine(log.requests, cost, options, s.kv_pools(options));
  s.run(engine, options);
  ServeResult result = engine.take_result(std::string(scheduler));
  check_conservation(result);
  return result;
}

double backlogged_capacity(const packing::RequestLog& log, std::string_view scheduler, const StepCost& cost,
                           const ServeOptions& options) {
  packing::RequestLog backlog = log;
  for (packing::Request& r : backlog.requests)
    r.arrival_s = log.requests.empty() ? 0 : log.requests.front().arrival_s;
  const ServeResult result = serve(backlog, scheduler, cost, options);
  int64_t served = 0;
  for (const RequestRecord& r : result.records) served += r.served();
  const double makespan = result.totals.end_s - result.totals.first_arrival_s;
  return makespan > 0 ? static_cast<double>(served) / makespan : 0.0;
}

}  // namespace systolic::serving
