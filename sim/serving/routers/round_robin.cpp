// round-robin: request i goes to replica i mod N, whatever its size.
#include "sim/serving/router.hpp"

namespace systolic::serving {
namespace {

class RoundRobin : public Router {
 public:
  std::vector<int64_t> route(const std::vector<packing::Request>& requests, int64_t replicas) const override {
    std::vector<int64_t> out(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) out[i] = static_cast<int64_t>(i) % replicas;
    return out;
  }
};

const Registration<Router> registration{
    {"round-robin", 10, "request i to replica i mod N", std::make_shared<RoundRobin>()}};

}  // namespace
}  // namespace systolic::serving
