// `chunked`: Sarathi-style chunked prefill (Agrawal et al., OSDI 2024). Every step has one
// static shape: a prefill chunk [1, C] (C = chunk_tokens) beside the decode shape [B slots, L]
// (options.buckets.decode.back()), either part left out when it has nothing to do. A waiting
// request takes its KV reservation and, if it decodes, a free slot (arrival order); the
// chunk is filled with the next prompt tokens of the requests in their prefill, in order (a
// chunk may end one prompt and start the next). A request whose last prompt token is in a chunk
// gets its first token from that step and decodes from the next. Decode tokens are never held
// back by a prefill for longer than one chunk's step: the TBT the scheme bounds.
// Not charged: a chunk's attention to the earlier chunks of its prompt (the oracle's prefill
// [1, C] has no prior context), an undercount of up to C * (prompt - C) cells per later chunk.
#include <deque>

#include <fmt/format.h>

#include "models/common/error.hpp"
#include "sim/serving/batching.hpp"
#include "sim/serving/scheduler.hpp"

namespace systolic::serving {
namespace {

class ChunkedPrefill : public Scheduler {
 public:
  void validate(const ServeOptions& options) const override {
    if (options.chunk_tokens < 1 || options.chunk_tokens > packing::kMaxTokens)
      throw InputError(
          fmt::format("serving option 'chunk_tokens': expected prompt tokens per step in [1, {}], got {}",
                      packing::kMaxTokens, options.chunk_tokens));
    validate_decode_shape(options.buckets.decode.back().shape, options);
  }

  std::vector<StepShape> shapes(const ServeOptions& options) const override {
    return {{Phase::prefill, {1, options.chunk_tokens}},
            {Phase::decode, options.buckets.decode.back().shape}};
  }

  void run(Engine& engine, const ServeOptions& options) const override {
    const Shape decode = options.buckets.decode.back().shape;
    const Engine::Limits limits{0, decode.length};
    SlotPool slots(decode.batch);
    std::deque<Work> prefilling;  // slot holders still in their prompt, in arrival order
    std::vector<Work> active;     // decoding
    Step step;
    step.prefill_shape = {1, options.chunk_tokens};
    step.decode_shape = decode;
    while (!engine.done()) {
      engine.admit_arrivals(limits);
      if (engine.done()) break;  // the last arrivals were all rejected
      admit_waiting(engine, slots, prefilling);
      step.clear();
      fill_chunk(engine, prefilling, options.chunk_tokens, step);
      step.decode = active;
      if (step.prefill.empty() && step.decode.empty()) {
        if (!engine.wait_for_event())
          throw std::logic_error("chunked prefill: requests left but nothing can run");
        continue;
      }
      engine.execute(step);
      while (!prefilling.empty() && engine.prefilled(prefilling.front().request)) {
        if (prefilling.front().slot >= 0) active.push_back(prefilling.front());
        prefilling.pop_front();
      }
      release_finished(engine, active, slots);
    }
  }

 private:
  // Once the batching window of the oldest has closed, waiting requests start their prefill in
  // arrival order while the KV budget holds them and, for those that decode, a slot is free.
  static void admit_waiting(Engine& engine, SlotPool& slots, std::deque<Work>& prefilling) {
    if (engine.batch_ready_s() > engine.now()) return;
    auto& waiting = engine.waiting();
    while (!waiting.empty()) {
      const bool decodes = engine.record(waiting.front()).target_tokens > 1;
      if ((decodes && !slots.any_free()) || !engine.reserve_kv(waiting.front())) break;
      prefilling.push_back({waiting.front(), 0, decodes ? slots.take() : -1});
      waiting.pop_front();
    }
  }

  static void fill_chunk(const Engine& engine, const std::deque<Work>& prefilling, int64_t chunk,
                         Step& step) {
    int64_t room = chunk;
    for (auto it = prefilling.begin(); it != prefilling.end() && room > 0; ++it) {
      const RequestRecord& r = engine.record(it->request);
      const int64_t tokens = std::min(room, r.prompt_tokens - r.prefilled_tokens);
      step.prefill.push_back({r.id, tokens, it->slot});
      room -= tokens;
    }
  }
};

const Registration<Scheduler> registration{
    {"chunked", 30, "prefill chunks of C tokens beside the [B, L] decode shape in every step (Sarathi)",
     std::make_shared<ChunkedPrefill>()}};

}  // namespace

}  // namespace systolic::serving
