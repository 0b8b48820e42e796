// `static`: fill a bucket, run it to completion. When the chip is idle, the requests waiting
// (arrival order, stopping at the first that does not fit) form one batch: a single prefill
// step of the smallest prefill bucket [B, S] that holds them, one request per lane, then
// decode steps of the smallest decode bucket [B', L] that holds those still generating, every
// step running the whole shape (finished lanes are pads) until the last request is done.
// Requests arriving meanwhile wait for the next batch.
#include <algorithm>

#include "sim/serving/batching.hpp"
#include "sim/serving/scheduler.hpp"

namespace systolic::serving {
namespace {

class StaticBatching : public Scheduler {
 public:
  void validate(const ServeOptions& options) const override {
    for (const packing::Bucket& b : options.buckets.decode) validate_decode_shape(b.shape, options);
  }

  void run(Engine& engine, const ServeOptions& options) const override {
    const auto& b = options.buckets;
    const Engine::Limits limits{b.prefill.back().shape.length, longest_decode(b)};
    Step step;
    while (!engine.done()) {
      engine.admit_arrivals(limits);
      if (engine.done()) break;  // the last arrivals were all rejected
      step.clear();
      if (select_batch(engine, options, step)) {
        run_batch(engine, options, step);
      } else if (!engine.wait_for_arrival()) {
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

  // Takes waiting requests while a prefill bucket and (for those that decode) a decode bucket
  // hold the batch and the KV budget has room.
  static bool select_batch(Engine& engine, const ServeOptions& options, Step& step) {
    const auto& b = options.buckets;
    int64_t longest = 0, decoding = 0, context = 0;
    auto& waiting = engine.waiting();
    while (!waiting.empty()) {
      const RequestRecord& r = engine.record(waiting.front());
      const auto prefill = smallest_fit(b.prefill, static_cast<int64_t>(step.prefill.size()) + 1,
                                        std::max(longest, r.prompt_tokens));
      const bool decodes = r.target_tokens > 1;
      const int64_t ctx = std::max(context, decodes ? r.prompt_tokens + r.target_tokens : 0);
      const auto decode = smallest_fit(b.decode, decoding + decodes, ctx);
      if (!prefill || (decodes && !decode) || !engine.reserve_kv(r.id)) break;
      step.prefill_shape = *prefill;
      if (decodes) step.decode_shape = *decode;
      longest = std::max(longest, r.prompt_tokens);
      context = ctx;
      step.prefill.push_back({r.id, r.prompt_tokens, decodes ? decoding++ : -1});
      waiting.pop_front();
    }
    return !step.prefill.empty();
  }

  static void run_batch(Engine& engine, const ServeOptions& options, Step& step) {
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
