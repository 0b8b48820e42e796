#include "sim/serving/batching.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace systolic::serving {

std::optional<Shape> smallest_fit(const std::vector<packing::Bucket>& buckets, int64_t batch,
                                  int64_t length) {
  for (const packing::Bucket& b : buckets)
    if (b.shape.batch >= batch && b.shape.length >= length) return b.shape;
  return std::nullopt;
}

int64_t widest_batch(const std::vector<packing::Bucket>& buckets) {
  int64_t widest = 0;
  for (const packing::Bucket& b : buckets) widest = std::max(widest, b.shape.batch);
  return widest;
}

SlotPool::SlotPool(int64_t slots, int64_t first) {
  for (int64_t s = first + slots - 1; s >= first; --s) free_.push_back(s);
}

int64_t SlotPool::take() {
  const int64_t slot = free_.back();
  free_.pop_back();
  return slot;
}

void SlotPool::give_back(int64_t slot) {
  free_.insert(std::upper_bound(free_.begin(), free_.end(), slot, std::greater<>()), slot);
}

void release_finished(const Engine& engine, std::vector<Work>& works, SlotPool& pool) {
  auto done = [&](const Work& w) { return engine.finished(w.request); };
  for (const Work& w : works)
    if (done(w)) pool.give_back(w.slot);
  works.erase(std::remove_if(works.begin(), works.end(), done), works.end());
}

namespace {

// True when running the batch in `grown` costs no more time than keeping the batch in `current`
// and giving the next request its own step in `alone`: a request whose prompt would stretch the
// batch to a much longer bucket waits for the next step instead.
bool worth_growing(const Engine& engine, Shape current, Shape grown, Shape alone) {
  const StepCost& cost = engine.cost();
  return cost.fixed(Phase::prefill, grown).seconds <=
         cost.fixed(Phase::prefill, current).seconds + cost.fixed(Phase::prefill, alone).seconds;
}

}  // namespace

bool select_prefill(Engine& engine, const ServeOptions& options, Shapes shapes, const SlotBinder& bind,
                    Step& step) {
  const auto& buckets = options.buckets.prefill;
  const auto widest = widest_batch(buckets);
  int64_t longest = 0;
  auto& waiting = engine.waiting();
  while (!waiting.empty() && static_cast<int64_t>(step.prefill.size()) < widest) {
    const RequestRecord& r = engine.record(waiting.front());
    std::optional<Shape> grown;
    if (shapes == Shapes::fixed) {
      grown = smallest_fit(buckets, static_cast<int64_t>(step.prefill.size()) + 1,
                           std::max(longest, r.prompt_tokens));
      if (!grown) break;
      if (!step.prefill.empty() &&
          !worth_growing(engine, step.prefill_shape, *grown, *smallest_fit(buckets, 1, r.prompt_tokens)))
        break;
    }
    const std::optional<int64_t> slot = bind(r.id);
    if (!slot) break;
    if (grown) step.prefill_shape = *grown;
    longest = std::max(longest, r.prompt_tokens);
    step.prefill.push_back({r.id, r.prompt_tokens, *slot});
    waiting.pop_front();
  }
  return !step.prefill.empty();
}

void run_continuous(Engine& engine, const ServeOptions& options, Shapes shapes) {
  const Shape decode = options.buckets.decode.back().shape;
  const Engine::Limits limits =
      shapes == Shapes::fixed ? Engine::Limits{options.buckets.prefill.back().shape.length, decode.length}
                              : Engine::Limits{options.model_context, options.model_context};
  SlotPool slots(decode.batch);
  const SlotBinder bind = [&](int64_t id) -> std::optional<int64_t> {
    if (!slots.any_free() || !engine.reserve_kv(id)) return std::nullopt;
    return slots.take();
  };
  std::vector<Work> active;  // decoding, one per occupied slot
  Step step;
  step.varlen = shapes == Shapes::varlen;
  step.decode_shape = decode;
  while (!engine.done()) {
    engine.admit_arrivals(limits);
    if (engine.done()) break;  // the last arrivals were all rejected
    step.clear();
    if (select_prefill(engine, options, shapes, bind, step)) {
      engine.execute(step);
      for (const Work& w : step.prefill) active.push_back({w.request, 0, w.slot});
    } else if (!active.empty()) {
      step.decode = active;
      engine.execute(step);
    } else if (!engine.wait_for_arrival()) {
      throw std::logic_error("continuous batching: requests left but nothing can run");
    }
    release_finished(engine, active, slots);
  }
}

}  // namespace systolic::serving
