#pragma once
// Arrival processes for capacity questions (docs/serving.md, "Replicas and arrivals"): the
// log's own arrivals sped up, or synthetic Poisson arrivals with the log's lengths.
#include <cstdint>

#include "sim/packing/request_log.hpp"

namespace systolic::serving {

// Every arrival time divided by `factor` (> 0, else InputError naming --rate-scale): the same
// requests offered `factor` times as fast.
packing::RequestLog scale_rate(packing::RequestLog log, double factor);

// `count` requests (0: as many as `log` has), arriving as a Poisson process of `qps` requests/s
// from 0 (exponential gaps), each with a (prompt, output) pair drawn uniformly with
// replacement from the log's requests: its length distribution. Deterministic for a `seed`.
// InputError naming --poisson for qps <= 0, --poisson-requests for count < 0 or > 10^8.
packing::RequestLog poisson_log(const packing::RequestLog& log, double qps, uint64_t seed, int64_t count = 0);

}  // namespace systolic::serving
