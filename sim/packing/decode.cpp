// Decode: continuous batching of generations into [B slots, L] pools (docs/packing.md,
// "Decode").
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "models/common/error.hpp"
#include "sim/packing/detail.hpp"
#include "sim/packing/packer.hpp"

namespace systolic::packing {
namespace {

struct Active {
  size_t job;
  int64_t generated;
};

}  // namespace

std::vector<DecodeShapeStats> schedule_decode(const std::vector<DecodeJob>& jobs,
                                              const std::vector<Shape>& decode_shapes,
                                              const std::function<double(const Shape&)>& step_time,
                                              std::vector<double>* done_s) {
  using detail::checked_add;
  if (decode_shapes.empty()) throw std::invalid_argument("schedule_decode: no decode shapes");
  std::map<int64_t, std::vector<int64_t>> batches;  // L -> B options, ascending
  for (const Shape& s : decode_shapes) batches[s.length].push_back(s.batch);
  for (auto& [length, bs] : batches) {
    std::sort(bs.begin(), bs.end());
    bs.erase(std::unique(bs.begin(), bs.end()), bs.end());
  }

  // Route every job to the class with the smallest L >= prompt + output.
  std::map<int64_t, std::vector<size_t>> members;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const DecodeJob& j = jobs[i];
    if (j.output_tokens < 1 || j.prompt_tokens < 0)
      throw std::invalid_argument(fmt::format("schedule_decode: request {} has no token to decode",
                                              j.request_id));
    const auto it = batches.lower_bound(j.prompt_tokens + j.output_tokens);
    if (it == batches.end())
      throw std::invalid_argument(fmt::format(
          "schedule_decode: request {} needs a KV length of {} > every decode L", j.request_id,
          j.prompt_tokens + j.output_tokens));
    members[it->first].push_back(i);
  }
  if (done_s) done_s->assign(jobs.size(), -1.0);
  const bool timed = static_cast<bool>(step_time);

  std::vector<DecodeShapeStats> out;
  for (const auto& [length, bs] : batches) {
    const auto m = members.find(length);
    if (m == members.end()) continue;
    std::vector<size_t> queue = m->second;
    std::stable_sort(queue.begin(), queue.end(), [&](size_t a, size_t b) {
      return jobs[a].ready_s != jobs[b].ready_s ? jobs[a].ready_s < jobs[b].ready_s
                                                : jobs[a].request_id < jobs[b].request_id;
    });
    const int64_t capacity = bs.back();
    std::vector<DecodeShapeStats> stats(bs.size());
    std::vector<std::vector<bool>> seen(bs.size(), std::vector<bool>(queue.size(), false));
    std::vector<size_t> position(jobs.size());  // job -> index in queue, for `seen`
    for (size_t q = 0; q < queue.size(); ++q) position[queue[q]] = q;
    for (size_t k = 0; k < bs.size(); ++k) {
      stats[k].shape = {bs[k], length};
    }
    std::vector<Active> active;
    active.reserve(static_cast<size_t>(capacity));
    size_t next = 0;
    double t = 0.0;
    while (true) {
      if (timed && active.empty()) {
        if (next == queue.size()) break;
        t = std::max(t, jobs[queue[next]].ready_s);  // idle until the next job is ready
      }
      while (static_cast<int64_t>(active.size()) < capacity && next < queue.size() &&
             (!timed || jobs[queue[next]].ready_s <= t)) {
        active.push_back({queue[next], 0});
        ++next;
      }
      if (active.empty()) break;
      const int64_t n = static_cast<int64_t>(active.size());
      const size_t k = static_cast<size_t>(std::lower_bound(bs.begin(), bs.end(), n) - bs.begin());
      DecodeShapeStats& st = stats[k];
      st.steps += 1;
      st.occupied_slot_steps += n;
      st.empty_slot_steps += bs[k] - n;
      st.kv_capacity = checked_add(st.kv_capacity, bs[k] * length, "decode KV capacity");
      for (Active& a : active) {
        const DecodeJob& j = jobs[a.job];
        // Step g (0-based) attends to the prompt, the g tokens generated so far and itself.
        st.kv_used = checked_add(st.kv_used, j.prompt_tokens + a.generated + 1, "decode KV used");
        a.generated += 1;
        const size_t q = position[a.job];
        if (!seen[k][q]) {
          seen[k][q] = true;
          st.requests += 1;
        }
      }
      if (timed) {
        const double dt = step_time(st.shape);
        if (!(dt > 0) || !std::isfinite(dt))
          throw InputError(fmt::format("decode step time of {} must be a positive number of "
                                       "seconds, got {}",
                                       to_string(st.shape), dt));
        t += dt;
      }
      // Finished requests free their slot for the next step.
      size_t w = 0;
      for (size_t r = 0; r < active.size(); ++r) {
        const Active& a = active[r];
        if (a.generated >= jobs[a.job].output_tokens) {
          if (done_s) (*done_s)[a.job] = timed ? t : -1.0;
        } else {
          active[w++] = a;
        }
      }
      active.resize(w);
    }
    for (const DecodeShapeStats& st : stats)
      if (st.steps > 0) out.push_back(st);
  }
  return out;
}

}  // namespace systolic::packing
