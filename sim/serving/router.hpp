#pragma once
// Routers (docs/serving.md, "Replicas and arrivals"): which of N replicas serves each request.
// One file each under sim/serving/routers/, self-registering (models/common/registry.hpp).
#include <cstdint>
#include <vector>

#include "models/common/registry.hpp"
#include "sim/packing/request_log.hpp"

namespace systolic::serving {

class Router {
 public:
  virtual ~Router() = default;
  // The replica (0 .. replicas - 1) of each request, in arrival order.
  virtual std::vector<int64_t> route(const std::vector<packing::Request>& requests, int64_t replicas) const = 0;
};

// route() of a router that places the requests one at a time in arrival order, as a front end
// does: request i goes to replica_of(i, request), which may remember what it placed before but
// sees no later request.
template <class ReplicaOf>
std::vector<int64_t> place_in_arrival_order(const std::vector<packing::Request>& requests,
                                            ReplicaOf replica_of) {
  std::vector<int64_t> out(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) out[i] = replica_of(i, requests[i]);
  return out;
}

const Registry<Router>& routers();

// The requests of each replica as a log of its own (ids renumbered 0..; `ids[k][j]` is the
// original id of replica k's request j).
struct Split {
  std::vector<packing::RequestLog> logs;
  std::vector<std::vector<int64_t>> ids;
};
Split split_by_replica(const packing::RequestLog& log, const std::vector<int64_t>& replica_of, int64_t replicas);

}  // namespace systolic::serving
