// `static`: fill a bucket, run it to completion. When the chip is idle, the requests waiting
// (arrival order, stopping at the first that does not fit) form one batch: a single prefill
// step of the smallest prefill bucket [B, S] that holds their lanes as the packer fills them, then
// decode steps of the smallest decode bucket [B', L] that holds those still generating, every
// step running the whole shape (finished lanes are pads) until the last request is done.
// Requests arriving meanwhile wait for the next batch.
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>

#include "sim/serving/batching.hpp"
#include "sim/serving/scheduler.hpp"

namespace systolic::serving {
namespace {

class StaticBatching : public Scheduler {
 public:
  void validate(const ServeOptions& options) const override {
    for (const packing::Bucket& b : options.buckets.decode) validate_decode_shape(b.shape, options);
  }

  std::vector<StepShape> shapes(const ServeOptions& options) const override {
    return prefill_and_decode(options.buckets, true);
  }

  void run(Engine& engine, const ServeOptions& options) const override {
    const Engine::Limits limits{prefill_limit(options), longest_decode(options.buckets)};
    Step step;
    while (!engine.done()) {
      engine.admit_arrivals(limits);
      if (engine.done()) break;  // the last arrivals were all rejected
      step.clear();
      if (select_batch(engine, options, step)) {
        run_batch(engine, step);
      } else if (!engine.wait_for_event()) {
        throw std::logic_error("static batching: requests left but nothing can run");
      }
    }
  }

 private:
  static int64_t longest_decode(const packing::BucketSet& b) {
    int64_t longest = 0;
    for (const packing::Bucket& d : b.decode) longest = std::max(longest, d.shape.length);
    return longest;
  }

  // Takes waiting requests (once the batching window has closed) while a prefill bucket holds
  // their lanes (plan_prefill), a decode bucket holds those that decode, and the KV budget has
  // room.
  static bool select_batch(Engine& engine, const ServeOptions& options, Step& step) {
    if (engine.batch_ready_s() > engine.now()) return false;
    int64_t decoding = 0, context = 0;
    std::vector<packing::Item> prompts;
    std::vector<std::pair<int64_t, int64_t>> slots;  // (request, decode slot)
    std::optional<PrefillPlan> plan;
    auto& waiting = engine.waiting();
    while (!waiting.empty()) {
      const RequestRecord& r = engine.record(waiting.front());
      prompts.push_back({r.id, r.prompt_tokens});
      std::optional<PrefillPlan> grown = plan_prefill(options, prompts);
      const bool decodes = r.target_tokens > 1;
      const int64_t ctx = std::max(context, decodes ? r.prompt_tokens + r.target_tokens : 0);
      const auto decode = smallest_fit(options.buckets.decode, decoding + decodes, ctx);
      if (!grown || (decodes && !decode) || !engine.reserve_kv(r.id)) {
        prompts.pop_back();
        break;
      }
      plan = std::move(grown);
      if (decodes) step.decode_shape = *decode;
      context = ctx;
      slots.emplace_back(r.id, decodes ? decoding++ : -1);
      waiting.pop_front();
    }
    if (!plan) return false;
    lay_out(*plan, slots, step);
    return true;
  }

  static void run_batch(Engine& engine, Step& step) {
    engine.execute(step);
    std::vector<Work> lanes;
    for (const Work& w : step.prefill)
      if (!engine.finished(w.request)) lanes.push_back({w.request, 0, w.slot});
    step.prefill.clear();
    while (!lanes.empty()) {
      step.decode = lanes;
      engine.execute(step);
      lanes.erase(std::remove_if(lanes.begin(), lanes.end(),
                                 [&](const Work& w) { return engine.finished(w.request); }),
                  lanes.end());
    }
  }
};

const Registration<Scheduler> registration{
    {"static", 10, "fill a bucket, run it to completion", std::make_shared<StaticBatching>()}};

}  // namespace

}  // namespace systolic::serving
