#pragma once
// What a serving replay measured (docs/serving.md, "Metrics"): latency distributions, throughput,
// SLO attainment and goodput, and the overload line; plus the conservation check every replay
// passes before serve() returns it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/common/percentile.hpp"
#include "sim/serving/engine.hpp"

namespace systolic::serving {

// Percentiles: nearest rank, the one rule of the tree (sim/common/percentile.hpp).
using systolic::percentile;

struct Distribution {
  int64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;  // NaN when count == 0
};
Distribution distribution(std::vector<double> values);

// Latency objectives: a request meets them when it is not rejected, its TTFT <= ttft_s and its
// mean time between tokens <= tbt_s (a single-token request has no gap and meets the second).
struct Slo {
  double ttft_s = 0;
  double tbt_s = 0;
};
void validate(const Slo& slo);  // InputError "SLO 'ttft_s': expected ... > 0"

struct Summary {
  int64_t requests = 0, served = 0, truncated = 0, rejected = 0;
  // Over served and truncated requests (TBT: those with at least two tokens).
  Distribution queue_s, ttft_s, tbt_mean_s, tbt_max_s, e2e_s;
  double makespan_s = 0;      // first arrival to the end of the last step
  double busy_s = 0;          // time the chip ran steps
  double tokens_per_s = 0;    // generated tokens / makespan
  double requests_per_s = 0;  // served + truncated / makespan
  double pad_fraction = 0;    // pad positions / positions computed
  std::optional<Slo> slo;
  double slo_attainment = 0;  // requests meeting the SLO / all requests
  double goodput_rps = 0;     // requests meeting the SLO / makespan
  // Overload line. offered: arrivals per second over the arrival span (NaN without a span);
  // capacity: given to summarize (backlogged_capacity, scheduler.hpp; NaN when not given).
  double offered_rps = 0;
  double capacity_rps = 0;
  double load = 0;       // offered / capacity
  int64_t replicas = 0;  // ceil(load): replicas of this chip that would keep up (0: unknown)
};

Summary summarize(const ServeResult& result, std::optional<Slo> slo = std::nullopt,
                  std::optional<double> capacity_rps = std::nullopt);

// Text for the terminal: counts, the latency table, throughput, SLO and the overload line.
std::string format_summary(const Summary& summary);
// The same from summary_json's form (report.json), "-" where a value does not exist.
std::string format_summary(const nlohmann::ordered_json& summary);

// The same for report.json: {"requests": {...}, "latency_s": {"queue": {"count", "mean", "p50",
// "p90", "p99", "max"}, "ttft", "tbt_mean", "tbt_max", "e2e"}, "throughput": {...}, "slo": {...}
// or null, "load": {...}}; a value that does not exist (NaN) is null.
nlohmann::ordered_json summary_json(const Summary& summary);

// Throws std::logic_error (an engine or scheduler bug, not bad input) unless every request got
// exactly one outcome consistent with its tokens, the token positions computed equal useful +
// pad both per step and summed over the records, the records' energy sums to the total, and
// the work table's rows sum to the busy time, the energy and the tokens of the steps.
void check_conservation(const ServeResult& result);

// A value of report.json: the number, or null where it does not exist (NaN, infinite).
nlohmann::ordered_json json_number(double v);

}  // namespace systolic::serving
