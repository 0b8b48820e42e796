#include "sim/serving/replicas.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/common/error.hpp"
#include "sim/common/add_members.hpp"
#include "sim/serving/metrics.hpp"
#include "sim/serving/scheduler.hpp"

namespace systolic::serving {
namespace {

void add(ServeTotals& into, const ServeTotals& t) {
  add_members(into, t, &ServeTotals::steps, &ServeTotals::busy_s, &ServeTotals::energy_pj,
              &ServeTotals::positions, &ServeTotals::useful, &ServeTotals::pad, &ServeTotals::compiled_shapes,
              &ServeTotals::compile_stall_s);
  into.first_arrival_s = std::min(into.first_arrival_s, t.first_arrival_s);
  into.end_s = std::max(into.end_s, t.end_s);
}

}  // namespace

void validate_replicas(int64_t replicas) {
  if (replicas < 1 || replicas > 4096)
    throw InputError(fmt::format("--replicas {}: expected a number of replicas in [1, 4096]", replicas));
}

ServeResult serve_replicas(const packing::RequestLog& log, std::string_view scheduler, const StepCost& cost,
                           const ServeOptions& options, int64_t replicas, const Router& router) {
  validate_replicas(replicas);
  if (replicas == 1) return serve(log, scheduler, cost, options);
  const Split split = split_by_replica(log, router.route(log.requests, replicas), replicas);
  ServeResult merged;
  merged.scheduler = std::string(scheduler);
  merged.records.resize(log.requests.size());
  merged.totals.first_arrival_s = log.requests.empty() ? 0 : log.requests.front().arrival_s;
  for (size_t k = 0; k < split.logs.size(); ++k) {
    if (split.logs[k].requests.empty()) continue;  // an idle replica
    ServeResult part = serve(split.logs[k], scheduler, cost, options);
    for (RequestRecord& r : part.records) {
      r.id = split.ids[k][static_cast<size_t>(r.id)];
      merged.records[static_cast<size_t>(r.id)] = std::move(r);
    }
    add(merged.totals, part.totals);
    merged.shapes = merge_rows(merged.shapes, part.shapes);
    for (packing::LaneInstance& inst : part.lanes) {
      inst.replica = static_cast<int64_t>(k);
      for (packing::Lane& lane : inst.lanes)
        for (packing::Segment& s : lane.segments)
          s.request_id = split.ids[k][static_cast<size_t>(s.request_id)];
      merged.lanes.push_back(std::move(inst));
    }
  }
  // The lane view in time order, replicas in order at the same time.
  std::stable_sort(merged.lanes.begin(), merged.lanes.end(),
                   [](const packing::LaneInstance& a, const packing::LaneInstance& b) {
                     return a.dispatch_s < b.dispatch_s;
                   });
  check_conservation(merged);
  return merged;
}

}  // namespace systolic::serving
