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

const Registry<Router>& routers();

// The requests of each replica as a log of its own (ids renumbered 0..; `ids[k][j]` is the
// original id of replica k's request j).
struct Split {
  std::vector<packing::RequestLog> logs;
  std::vector<std::vector<int64_t>> ids;
};
Split split_by_replica(const packing::RequestLog& log, const std::vector<int64_t>& replica_of, int64_t replicas);

}  // namespace systolic::serving
