#include "sim/serving/batching.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "models/common/divide.hpp"
#include "sim/packing/bin_packer.hpp"

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

std::vector<StepShape> prefill_and_decode(const packing::BucketSet& buckets, bool every_decode) {
  std::vector<StepShape> out;
  for (const packing::Bucket& b : buckets.prefill) out.push_back({Phase::prefill, b.shape});
  if (every_decode)
    for (const packing::Bucket& b : buckets.decode) out.push_back({Phase::decode, b.shape});
  else
    out.push_back({Phase::decode, buckets.decode.back().shape});
  return out;
}

std::vector<StepShape> grown_on_demand(std::vector<StepShape> shapes, const packing::BucketSet& buckets) {
  // One lane of u tokens fits the first bucket with length >= u; that choice changes only
  // where u passes a bucket's length, so those lengths give every bucket one prompt can take.
  std::vector<Shape> alone;
  for (const packing::Bucket& b : buckets.prefill)
    if (const std::optional<Shape> s = smallest_fit(buckets.prefill, 1, b.shape.length)) alone.push_back(*s);
  for (StepShape& s : shapes)
    s.on_demand = s.phase == Phase::prefill && std::find(alone.begin(), alone.end(), s.shape) == alone.end();
  return shapes;
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
    if (done(w) && w.slot >= 0) pool.give_back(w.slot);
  works.erase(std::remove_if(works.begin(), works.end(), done), works.end());
}

namespace {

// A lone lane of `used` tokens in its own [1, round_up(used)] shape.
PrefillPlan runtime_plan(const ServeOptions& options, std::vector<packing::Lane> lanes, int64_t used) {
  return {{1, round_up(used, options.compile_granule)}, true, std::move(lanes)};
}

}  // namespace

std::optional<PrefillPlan> plan_prefill(const ServeOptions& options,
                                        const std::vector<packing::Item>& prompts) {
  const auto& buckets = options.buckets.prefill;
  const int64_t longest_s = buckets.back().shape.length;  // sorted by length
  if (options.compile_new_shapes) {
    for (const packing::Item& p : prompts)
      if (p.tokens > longest_s) {
        if (prompts.size() > 1) return std::nullopt;  // a runtime shape of its own
        packing::Lane lane;
        packing::append(lane, p);
        return runtime_plan(options, {lane}, p.tokens);
      }
  }
  std::vector<packing::Lane> lanes = packing::pack_lanes(prompts, longest_s, options.packer);
  int64_t used = 0;
  for (const packing::Lane& lane : lanes) used = std::max(used, lane.used());
  const std::optional<Shape> shape = smallest_fit(buckets, static_cast<int64_t>(lanes.size()), used);
  if (!shape) return std::nullopt;
  if (options.compile_new_shapes && lanes.size() == 1 &&
      static_cast<double>(shape->length - used) >
          options.compile_pad_threshold * static_cast<double>(shape->length) &&
      round_up(used, options.compile_granule) < shape->length)
    return runtime_plan(options, std::move(lanes), used);
  return PrefillPlan{*shape, false, std::move(lanes)};
}

void lay_out(const PrefillPlan& plan, const std::vector<std::pair<int64_t, int64_t>>& slots, Step& step) {
  step.prefill_shape = plan.shape;
  step.runtime_prefill = plan.runtime;
  step.prefill.clear();
  for (size_t k = 0; k < plan.lanes.size(); ++k)
    for (const packing::Segment& s : plan.lanes[k].segments) {
      const auto it =
          std::find_if(slots.begin(), slots.end(), [&](const auto& p) { return p.first == s.request_id; });
      step.prefill.push_back(
          {s.request_id, s.tokens, it == slots.end() ? -1 : it->second, static_cast<int64_t>(k)});
    }
}

namespace {

// True when running the batch in `grown` costs no more time than keeping the batch in `current`
// and giving the next request its own step in `alone`: a request whose prompt would stretch the
// batch to a much longer bucket waits for the next step instead. A lower bound on `grown`'s time
// above the two settles it without `grown`'s cost, which the chip simulator would pay for in
// seconds (the same answer: the cost is at least the bound).
bool worth_growing(const Engine& engine, Shape current, Shape grown, Shape alone) {
  const StepCost& cost = engine.cost();
  const double apart =
      cost.fixed(Phase::prefill, current).seconds + cost.fixed(Phase::prefill, alone).seconds;
  return cost.fixed_seconds_at_least(Phase::prefill, grown) <= apart &&
         cost.fixed(Phase::prefill, grown).seconds <= apart;
}

// Varlen prefill: the waiting requests in arrival order, as many as the widest bucket's batch.
bool select_varlen(Engine& engine, const ServeOptions& options, const SlotBinder& bind, Step& step) {
  const auto widest = widest_batch(options.buckets.prefill);
  auto& waiting = engine.waiting();
  while (!waiting.empty() && static_cast<int64_t>(step.prefill.size()) < widest) {
    const RequestRecord& r = engine.record(waiting.front());
    const std::optional<int64_t> slot = bind(r.id);
    if (!slot) break;
    step.prefill.push_back({r.id, r.prompt_tokens, *slot});
    waiting.pop_front();
  }
  return !step.prefill.empty();
}

}  // namespace

bool select_prefill(Engine& engine, const ServeOptions& options, Shapes shapes, const SlotBinder& bind,
                    Step& step, double at) {
  if (engine.batch_ready_s() > at) return false;  // the window is open (or nobody waits)
  if (shapes == Shapes::varlen) return select_varlen(engine, options, bind, step);
  auto& waiting = engine.waiting();
  std::vector<packing::Item> prompts;
  std::vector<std::pair<int64_t, int64_t>> slots;  // (request, decode slot)
  std::optional<PrefillPlan> plan;
  while (!waiting.empty()) {
    const RequestRecord& r = engine.record(waiting.front());
    const packing::Item item{r.id, r.prompt_tokens};
    prompts.push_back(item);
    std::optional<PrefillPlan> grown = plan_prefill(options, prompts);
    const bool fits = grown && (!plan || worth_growing(engine, plan->shape, grown->shape,
                                                       plan_prefill(options, {item})->shape));
    const std::optional<int64_t> slot = fits ? bind(r.id) : std::nullopt;
    if (!slot) {
      prompts.pop_back();
      break;
    }
    plan = std::move(grown);
    slots.emplace_back(r.id, *slot);
    waiting.pop_front();
  }
  if (!plan) return false;
  lay_out(*plan, slots, step);
  return true;
}

void run_continuous(Engine& engine, const ServeOptions& options, Shapes shapes) {
  const Shape decode = options.buckets.decode.back().shape;
  const Engine::Limits limits = shapes == Shapes::varlen
                                    ? Engine::Limits{options.model_context, options.model_context}
                                    : Engine::Limits{prefill_limit(options), decode.length};
  SlotPool slots(decode.batch);
  const SlotBinder bind = [&](int64_t id) -> std::optional<int64_t> {
    const bool decodes = engine.record(id).target_tokens > 1;
    if ((decodes && !slots.any_free()) || !engine.reserve_kv(id)) return std::nullopt;
    return decodes ? slots.take() : -1;
  };
  std::vector<Work> active;  // decoding, one per occupied slot
  Step step;
  step.varlen = shapes == Shapes::varlen;
  step.decode_shape = decode;
  while (!engine.done()) {
    engine.admit_arrivals(limits);
    if (engine.done()) break;  // the last arrivals were all rejected
    step.clear();
    if (select_prefill(engine, options, shapes, bind, step, engine.now())) {
      engine.execute(step);
      for (const Work& w : step.prefill)
        if (w.slot >= 0) active.push_back({w.request, 0, w.slot});
    } else if (!active.empty()) {
      step.decode = active;
      engine.execute(step);
    } else if (!engine.wait_for_event()) {
      throw std::logic_error("continuous batching: requests left but nothing can run");
    }
    release_finished(engine, active, slots);
  }
}

int64_t prefill_limit(const ServeOptions& options) {
  return options.compile_new_shapes ? options.model_context : options.buckets.prefill.back().shape.length;
}

}  // namespace systolic::serving
