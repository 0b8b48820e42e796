// least-loaded: each request goes to the replica with the fewest tokens (prompt + output) still
// owed at its arrival, a replica being owed a request's tokens until its estimated finish; ties
// to the lowest index. The router sees no replica's clock, so a replica works off its tokens
// at the rate the whole log offers per replica (the log's tokens / its span / N), the estimate
// a front end without feedback has.
#include <algorithm>

#include "sim/serving/router.hpp"

namespace systolic::serving {
namespace {

class LeastLoaded : public Router {
 public:
  std::vector<int64_t> route(const std::vector<packing::Request>& requests, int64_t replicas) const override {
    std::vector<double> owed(static_cast<size_t>(replicas), 0.0), last(static_cast<size_t>(replicas), 0.0);
    const double rate = drain_rate(requests, replicas);
    return place_in_arrival_order(requests, [&](size_t, const packing::Request& r) {
      for (size_t k = 0; k < owed.size(); ++k) {  // work off what each owes since its last look
        owed[k] = std::max(0.0, owed[k] - rate * (r.arrival_s - last[k]));
        last[k] = r.arrival_s;
      }
      const auto k = static_cast<size_t>(std::min_element(owed.begin(), owed.end()) - owed.begin());
      owed[k] += static_cast<double>(r.prompt_tokens + r.output_tokens);
      return static_cast<int64_t>(k);
    });
  }

 private:
  // Tokens per second each replica works off: the log's tokens over its span, split N ways;
  // 0 for a log without a span, and the router balances by tokens alone.
  static double drain_rate(const std::vector<packing::Request>& requests, int64_t replicas) {
    if (requests.size() < 2) return 0;
    const double span = requests.back().arrival_s - requests.front().arrival_s;
    if (!(span > 0)) return 0;
    double tokens = 0;
    for (const auto& r : requests) tokens += static_cast<double>(r.prompt_tokens + r.output_tokens);
    return tokens / span / static_cast<double>(replicas);
  }
};

const Registration<Router> registration{
    {"least-loaded", 20, "to the replica owing the fewest tokens", std::make_shared<LeastLoaded>()}};

}  // namespace
}  // namespace systolic::serving
