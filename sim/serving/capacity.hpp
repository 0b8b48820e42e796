#pragma once
// Capacity questions (docs/serving.md, "Capacity"): the highest request rate one replica
// sustains within the SLOs, and the fewest replicas that serve a log within them.
//
// "Sustains" is one rule: a replay sustains its load when its SLO attainment (metrics.hpp: the
// share of all requests, rejected ones counted as misses, with TTFT <= slo.ttft_s and mean TBT
// <= slo.tbt_s) is at least `target`. Both searches assume attainment does not rise with the
// rate nor fall with more replicas; every replay they run is kept as the curve, and `monotone`
// says whether the curve bears that out.
//
// The searches are plain C++ over a callable that replays the log at a rate factor (arrival
// times divided by it) on a number of replicas, so they run the same on the chip simulator and
// on a closed-form cost.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/serving/metrics.hpp"

namespace systolic::serving {

struct CapacityOptions {
  Slo slo;
  double target = 0.99;     // sustains: attainment >= target, in (0, 1]
  double tolerance = 0.01;  // the rate search stops when lowest failed <= highest sustained x (1 + tolerance)
  int64_t max_replicas = 4096;
};
// InputError naming --target, --tolerance, --max-replicas or the SLO.
void validate(const CapacityOptions& options);

// One replay of the searches.
struct CapacityPoint {
  double rate_factor = 1;  // arrival times divided by this
  int64_t replicas = 1;
  double offered_rps = 0;  // the replayed log's arrivals per second (NaN for a single request)
  double attainment = 0;
  double ttft_p99_s = 0;  // NaN when no request was served
  double tbt_p99_s = 0;   // p99 of the per-request mean TBT, the SLO's measure
  double goodput_rps = 0;
  bool sustained = false;
};

// Replays the log at `rate_factor` on `replicas`, summarized against the SLO.
using CapacityReplay = std::function<Summary(double rate_factor, int64_t replicas)>;

struct RateSearch {
  std::vector<CapacityPoint> curve;            // every replay, by rate
  std::optional<CapacityPoint> highest;        // the highest rate sustained (none: not even alone)
  std::optional<CapacityPoint> lowest_failed;  // the lowest rate not sustained (none: every rate tried was)
  bool monotone = true;                        // attainment never rises with the rate along the curve
};

// One replica: doubles or halves the rate factor from 1 until the SLOs are sustained at one
// factor and not at twice it (factors 2^-30 .. 2^30), then bisects (geometric midpoints) until
// lowest_failed <= highest x (1 + tolerance): the capacity lies between the two.
RateSearch highest_rate(const CapacityReplay& replay, const CapacityOptions& options);

struct ReplicaSearch {
  std::vector<CapacityPoint> curve;     // every replay, by replicas
  std::optional<CapacityPoint> fewest;  // the fewest replicas sustaining (none: not even max_replicas)
  bool monotone = true;                 // attainment never falls with more replicas along the curve
};

// The log at `rate_factor`: doubles the replicas from 1 until the SLOs are sustained (at most
// max_replicas), then bisects between the last count that failed and the first that sustained.
ReplicaSearch fewest_replicas(const CapacityReplay& replay, const CapacityOptions& options,
                              double rate_factor = 1);

// capacity.json's `rate` and `replicas` sections, capacity.csv's rows and the terminal's text
// (docs/report.md, "capacity reports"); `chips_per_replica` turns replicas into chips.
nlohmann::ordered_json rate_json(const RateSearch& search, int64_t chips_per_replica);
nlohmann::ordered_json replicas_json(const ReplicaSearch& search, int64_t chips_per_replica);
std::string capacity_csv(const RateSearch* rate, const ReplicaSearch* replicas, int64_t chips_per_replica);
std::string format_rate(const RateSearch& search, const CapacityOptions& options, int64_t chips_per_replica);
std::string format_replicas(const ReplicaSearch& search, const CapacityOptions& options,
                            int64_t chips_per_replica);

}  // namespace systolic::serving
