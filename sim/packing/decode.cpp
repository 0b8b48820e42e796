// Decode: continuous batching of generations into [B slots, L] pools (docs/packing.md,
// "Decode"), backlogged: the work and the occupancy the bucket set allows. When each token
// comes out is the serving engine's answer (sim/serving/), not this one.
#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/packing/detail.hpp"
#include "sim/packing/packer.hpp"

namespace systolic::packing {
namespace {

struct Active {
  size_t job;
  int64_t generated;
};

using BatchesByLength = std::map<int64_t, std::vector<int64_t>>;  // L -> B options, ascending

BatchesByLength batches_by_length(const std::vector<Shape>& decode_shapes) {
  BatchesByLength batches;
  for (const Shape& s : decode_shapes) batches[s.length].push_back(s.batch);
  for (auto& [length, bs] : batches) {
    std::sort(bs.begin(), bs.end());
    bs.erase(std::unique(bs.begin(), bs.end()), bs.end());
  }
  return batches;
}

// Every job's class: the smallest L >= prompt + output. Each class's jobs in the order they
// take freed slots (prefill dispatch, then request id).
std::map<int64_t, std::vector<size_t>> route(const std::vector<DecodeJob>& jobs, const BatchesByLength& batches) {
  std::map<int64_t, std::vector<size_t>> members;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const DecodeJob& j = jobs[i];
    if (j.output_tokens < 1 || j.prompt_tokens < 0)
      throw std::invalid_argument(fmt::format("schedule_decode: request {} has no token to decode", j.request_id));
    const auto it = batches.lower_bound(j.prompt_tokens + j.output_tokens);
    if (it == batches.end())
      throw std::invalid_argument(fmt::format("schedule_decode: request {} needs a KV length of {} > every decode L",
                                              j.request_id, j.prompt_tokens + j.output_tokens));
    members[it->first].push_back(i);
  }
  for (auto& [length, queue] : members)
    std::stable_sort(queue.begin(), queue.end(), [&](size_t a, size_t b) {
      return jobs[a].prefill_dispatch_s != jobs[b].prefill_dispatch_s
                 ? jobs[a].prefill_dispatch_s < jobs[b].prefill_dispatch_s
                 : jobs[a].request_id < jobs[b].request_id;
    });
  return members;
}

// One step of a pool: the shape with the smallest B >= the occupied slots, its counters, and
// every active job one token further.
void run_step(std::vector<Active>& active, const std::vector<DecodeJob>& jobs, const std::vector<int64_t>& bs,
              std::vector<DecodeShapeStats>& stats, std::vector<std::vector<bool>>& seen) {
  using detail::checked_add;
  const auto n = static_cast<int64_t>(active.size());
  const auto k = static_cast<size_t>(std::lower_bound(bs.begin(), bs.end(), n) - bs.begin());
  DecodeShapeStats& st = stats[k];
  st.steps += 1;
  st.occupied_slot_steps += n;
  st.empty_slot_steps += bs[k] - n;
  st.kv_capacity = checked_add(st.kv_capacity, bs[k] * st.shape.length, "decode KV capacity");
  for (Active& a : active) {
    const DecodeJob& j = jobs[a.job];
    // Step g (0-based) attends to the prompt, the g tokens generated so far and itself.
    st.kv_used = checked_add(st.kv_used, j.prompt_tokens + a.generated + 1, "decode KV used");
    a.generated += 1;
    if (!seen[k][a.job]) {
      seen[k][a.job] = true;
      st.requests += 1;
    }
  }
  // Finished jobs free their slot for the next step.
  active.erase(std::remove_if(active.begin(), active.end(),
                              [&](const Active& a) { return a.generated >= jobs[a.job].output_tokens; }),
               active.end());
}

// One pool of max(bs) slots, refilled from `queue` as jobs finish.
std::vector<DecodeShapeStats> run_pool(int64_t length, const std::vector<int64_t>& bs, const std::vector<size_t>& queue,
                                       const std::vector<DecodeJob>& jobs) {
  std::vector<DecodeShapeStats> stats(bs.size());
  for (size_t k = 0; k < bs.size(); ++k) stats[k].shape = {bs[k], length};
  std::vector<std::vector<bool>> seen(bs.size(), std::vector<bool>(jobs.size(), false));
  const int64_t capacity = bs.back();
  std::vector<Active> active;
  size_t next = 0;
  while (true) {
    while (static_cast<int64_t>(active.size()) < capacity && next < queue.size()) active.push_back({queue[next++], 0});
    if (active.empty()) break;
    run_step(active, jobs, bs, stats, seen);
  }
  return stats;
}

}  // namespace

std::vector<DecodeShapeStats> schedule_decode(const std::vector<DecodeJob>& jobs,
                                              const std::vector<Shape>& decode_shapes) {
  if (decode_shapes.empty()) throw std::invalid_argument("schedule_decode: no decode shapes");
  const BatchesByLength batches = batches_by_length(decode_shapes);
  const auto members = route(jobs, batches);
  std::vector<DecodeShapeStats> out;
  for (const auto& [length, queue] : members)
    for (const DecodeShapeStats& st : run_pool(length, batches.at(length), queue, jobs))
      if (st.steps > 0) out.push_back(st);
  return out;
}

}  // namespace systolic::packing
