// round-robin: request i goes to replica i mod N, whatever its size.
#include "sim/serving/router.hpp"

namespace systolic::serving {
namespace {

class RoundRobin : public Router {
 public:
  std::vector<int64_t> route(const std::vector<packing::Request>& requests, int64_t replicas) const override {
    return place_in_arrival_order(requests, [replicas](size_t i, const packing::Request&) {
      return static_cast<int64_t>(i) % replicas;
    });
  }
};

const Registration<Router> registration{
    {"round-robin", 10, "request i to replica i mod N", std::make_shared<RoundRobin>()}};

}  // namespace
}  // namespace systolic::serving
