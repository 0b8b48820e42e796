#include "sim/serving/router.hpp"

namespace systolic::serving {

const Registry<Router>& routers() { return Registry<Router>::instance(); }

Split split_by_replica(const packing::RequestLog& log, const std::vector<int64_t>& replica_of, int64_t replicas) {
  Split s;
  s.logs.assign(static_cast<size_t>(replicas), log);
  s.ids.resize(static_cast<size_t>(replicas));
  for (auto& l : s.logs) l.requests.clear();
  for (size_t i = 0; i < log.requests.size(); ++i) {
    const auto k = static_cast<size_t>(replica_of[i]);
    packing::Request r = log.requests[i];
    r.id = static_cast<int64_t>(s.logs[k].requests.size());
    s.logs[k].requests.push_back(r);
    s.ids[k].push_back(log.requests[i].id);
  }
  return s;
}

}  // namespace systolic::serving
