#include "sim/serving/arrivals.hpp"

#include <cmath>
#include <random>

#include <fmt/format.h>

#include "models/common/error.hpp"

namespace systolic::serving {

packing::RequestLog scale_rate(packing::RequestLog log, double factor) {
  if (!(std::isfinite(factor) && factor > 0))
    throw InputError(fmt::format("--rate-scale {}: expected a factor > 0 (arrival times are divided by it)", factor));
  for (packing::Request& r : log.requests) r.arrival_s /= factor;
  return log;
}

packing::RequestLog poisson_log(const packing::RequestLog& log, double qps, uint64_t seed, int64_t count) {
  if (!(std::isfinite(qps) && qps > 0))
    throw InputError(fmt::format("--poisson {}: expected an arrival rate in requests/s > 0", qps));
  constexpr int64_t kMaxRequests = 100'000'000;  // 10^8 requests: about 10 GB of records
  if (count < 0 || count > kMaxRequests)
    throw InputError(fmt::format("--poisson-requests {}: expected a number of requests in [1, {}]", count, kMaxRequests));
  packing::RequestLog out = log;
  if (count > 0) out.requests.resize(static_cast<size_t>(count));
  out.path = fmt::format("{} (Poisson {} requests/s, seed {})", log.path, qps, seed);
  if (log.requests.empty()) return out;
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(qps);
  std::uniform_int_distribution<size_t> pick(0, log.requests.size() - 1);
  double t = 0;
  for (size_t i = 0; i < out.requests.size(); ++i) {
    const packing::Request& src = log.requests[pick(rng)];
    packing::Request& r = out.requests[i];
    r = src;
    r.id = static_cast<int64_t>(i);
    r.arrival_s = t;
    t += gap(rng);
  }
  return out;
}

}  // namespace systolic::serving
