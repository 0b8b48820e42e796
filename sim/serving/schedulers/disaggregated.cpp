// `disaggregated`: prefill and decode on separate chip pools (Splitwise, Patel et al., ISCA 2024;
// DistServe, Zhong et al., OSDI 2024). `prefill_chips` chips run only prefill steps in the
// set's prefill buckets, batched as `continuous` batches them; `decode_chips` chips each run
// the decode shape [B slots, L] (options.buckets.decode.back()), each with its own KV budget.
// A request that decodes is given a decode slot on the decode chip with the most free slots (and
// room for its KV cache) when its prefill starts; after its first token its KV cache, prompt x
// kv_bytes_per_token bytes, crosses the link at kv_link_bytes_per_s, and it decodes from the
// first step of its decode chip that starts after the cache arrived.
//
// Every chip has its own clock; the chip whose clock is earliest acts next, so arrivals, slots
// and KV caches are always looked at in time order. On a tie decode chips act first: a slot
// freed by a step ending at t is free for a prefill starting at t. A chip with nothing to do
// idles until the next event it knows of (an arrival, another chip's step ending, a KV cache
// arriving); a step started meanwhile wakes it at its end, when it may bring new work.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "models/common/error.hpp"
#include "sim/serving/batching.hpp"
#include "sim/serving/scheduler.hpp"

namespace systolic::serving {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

struct Clock {
  double t = 0;
  bool idle = false;  // waiting for an event rather than for its step to end
};

struct DecodeChip {
  Clock clock;
  SlotPool slots;
  std::vector<Work> arriving;  // slot given at prefill; decodes once its KV cache is here
  std::vector<Work> active;
};

class Pools {
 public:
  Pools(Engine& engine, const ServeOptions& options)
      : engine_(engine),
        options_(options),
        decode_(options.buckets.decode.back().shape),
        limits_{prefill_limit(options), decode_.length},
        prefill_clocks_(static_cast<size_t>(options.prefill_chips), Clock{engine.now()}) {
    for (int64_t c = 0; c < options.decode_chips; ++c)
      decode_chips_.push_back({Clock{engine.now()}, SlotPool(decode_.batch, c * decode_.batch), {}, {}});
  }

  void run() {
    while (!engine_.done()) {
      const auto [prefill, chip, t] = earliest();
      if (t == kNever) throw std::logic_error("disaggregated: requests left but nothing can run");
      engine_.admit_arrivals(limits_, t);
      if (engine_.done()) break;
      const std::optional<double> end = prefill ? run_prefill(t) : run_decode(decode_chips_[chip], t);
      Clock& clock = prefill ? prefill_clocks_[chip] : decode_chips_[chip].clock;
      clock = end ? Clock{*end, false} : Clock{next_event(t), true};
      if (end) wake_idle(*end);
    }
  }

 private:
  struct Turn {
    bool prefill;
    size_t chip;
    double t;
  };

  Turn earliest() const {
    Turn turn{false, 0, kNever};
    for (size_t i = 0; i < decode_chips_.size(); ++i)
      if (decode_chips_[i].clock.t < turn.t) turn = {false, i, decode_chips_[i].clock.t};
    for (size_t i = 0; i < prefill_clocks_.size(); ++i)
      if (prefill_clocks_[i].t < turn.t) turn = {true, i, prefill_clocks_[i].t};
    return turn;
  }

  void wake_idle(double at) {
    for (Clock& c : prefill_clocks_)
      if (c.idle && c.t > at) c.t = at;
    for (DecodeChip& d : decode_chips_)
      if (d.clock.idle && d.clock.t > at) d.clock.t = at;
  }

  // The first event after t that could give an idle chip work.
  double next_event(double t) const {
    double next = engine_.next_arrival_s();
    if (const double ready = engine_.batch_ready_s(); ready > t) next = std::min(next, ready);
    const auto later = [&](double x) {
      if (x > t && x < next) next = x;
    };
    for (const Clock& c : prefill_clocks_) later(c.t);
    for (const DecodeChip& d : decode_chips_) {
      later(d.clock.t);
      for (const Work& w : d.arriving) later(ready_s(w.request));
    }
    return next;
  }

  double ready_s(int64_t id) const {
    const RequestRecord& r = engine_.record(id);
    return r.first_token_s + r.kv_transfer_s;
  }

  // The KV reservation on the decode chip with the most free slots and, when the request
  // decodes, a slot there (-1 when its only token comes from prefill).
  std::optional<int64_t> bind(int64_t id, double t) {
    const bool decodes = engine_.record(id).target_tokens > 1;
    DecodeChip* best = nullptr;
    for (DecodeChip& d : decode_chips_)
      if ((!decodes || d.slots.any_free()) && (!best || d.slots.free_count() > best->slots.free_count()))
        best = &d;
    if (!best || !engine_.reserve_kv(id, best - decode_chips_.data(), t)) return std::nullopt;
    return decodes ? best->slots.take() : -1;
  }

  // The end of the prefill step it ran at t, or nullopt when it had nothing to run.
  std::optional<double> run_prefill(double t) {
    step_.clear();
    if (!select_prefill(
            engine_, options_, Shapes::fixed, [&](int64_t id) { return bind(id, t); }, step_, t))
      return std::nullopt;
    for (const Work& w : step_.prefill) {
      const RequestRecord& r = engine_.record(w.request);
      if (r.target_tokens > 1)  // a request whose only token comes from prefill moves no KV cache
        engine_.set_kv_transfer(r.id, static_cast<double>(r.prompt_tokens) * options_.kv_bytes_per_token /
                                          options_.kv_link_bytes_per_s);
    }
    const double end = engine_.execute_at(step_, t);
    for (const Work& w : step_.prefill)
      if (w.slot >= 0)
        decode_chips_[static_cast<size_t>(w.slot / decode_.batch)].arriving.push_back({w.request, 0, w.slot});
    return end;
  }

  // The end of the decode step it ran at t, or nullopt when it had nothing to run.
  std::optional<double> run_decode(DecodeChip& chip, double t) {
    release_finished(engine_, chip.active, chip.slots);  // its last step ended at t
    auto& arriving = chip.arriving;
    for (auto it = arriving.begin(); it != arriving.end();) {
      if (ready_s(it->request) > t) {
        ++it;
        continue;
      }
      chip.active.push_back(*it);
      it = arriving.erase(it);
    }
    if (chip.active.empty()) return std::nullopt;
    step_.clear();
    step_.decode_shape = decode_;
    step_.decode = chip.active;
    return engine_.execute_at(step_, t);
  }

  Engine& engine_;
  const ServeOptions& options_;
  const Shape decode_;
  const Engine::Limits limits_;
  std::vector<Clock> prefill_clocks_;
  std::vector<DecodeChip> decode_chips_;
  Step step_;
};

class Disaggregated : public Scheduler {
 public:
  void validate(const ServeOptions& options) const override {
    for (const auto& [value, key] :
         {std::pair{options.prefill_chips, "prefill_chips"}, {options.decode_chips, "decode_chips"}})
      if (value < 1 || value > kMaxChips)
        throw InputError(
            fmt::format("serving option '{}': expected chips in [1, {}], got {}", key, kMaxChips, value));
    if (!(std::isfinite(options.kv_link_bytes_per_s) && options.kv_link_bytes_per_s > 0))
      throw InputError(
          fmt::format("serving option 'kv_link_bytes_per_s': expected the bytes/s of the link the KV "
                      "cache crosses (a number > 0), got {}",
                      options.kv_link_bytes_per_s));
    validate_decode_shape(options.buckets.decode.back().shape, options);
  }

  void run(Engine& engine, const ServeOptions& options) const override { Pools(engine, options).run(); }

  int64_t kv_pools(const ServeOptions& options) const override { return options.decode_chips; }
  std::vector<StepShape> shapes(const ServeOptions& options) const override {
    return grown_on_demand(prefill_and_decode(options.buckets, false), options.buckets);
  }

 private:
  static constexpr int64_t kMaxChips = 4096;
};

const Registration<Scheduler> registration{
    {"disaggregated", 40,
     "separate prefill and decode chip pools, the KV cache moved between them (Splitwise)",
     std::make_shared<Disaggregated>()}};

}  // namespace

}  // namespace systolic::serving
