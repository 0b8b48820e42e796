#pragma once
// N replicas of one chip behind a router (docs/serving.md, "Replicas and arrivals"): the router
// splits the log, each replica serves its share through the scheduler, and the records and
// totals are merged into one result (busy time and energy summed over the replicas).
#include <cstdint>
#include <string_view>

#include "sim/serving/engine.hpp"
#include "sim/serving/router.hpp"

namespace systolic::serving {

// InputError naming --replicas unless 1 <= replicas <= 4096.
void validate_replicas(int64_t replicas);

ServeResult serve_replicas(const packing::RequestLog& log, std::string_view scheduler, const StepCost& cost,
                           const ServeOptions& options, int64_t replicas, const Router& router);

}  // namespace systolic::serving
