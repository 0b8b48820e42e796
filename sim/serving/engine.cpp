#include "sim/serving/engine.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace systolic::serving {
namespace {

int64_t useful_of(Phase phase, const Work& w) { return phase == Phase::prefill ? w.prefill_tokens : 1; }

int64_t useful_of(Phase phase, const std::vector<Work>& works) {
  int64_t n = 0;
  for (const Work& w : works) n += useful_of(phase, w);
  return n;
}

// Token positions a part computes: a static shape computes all of it, pads included.
int64_t positions_of(Phase phase, const Step& step) {
  const auto& works = phase == Phase::prefill ? step.prefill : step.decode;
  if (step.varlen) return useful_of(phase, works);
  const Shape& s = phase == Phase::prefill ? step.prefill_shape : step.decode_shape;
  return phase == Phase::prefill ? s.batch * s.length : s.batch;
}

[[noreturn]] void broken(const std::string& what) { throw std::logic_error("serving engine: " + what); }

}  // namespace

double RequestRecord::tbt_mean_s() const {
  return generated_tokens > 1 ? tbt_sum_s / static_cast<double>(generated_tokens - 1)
                              : std::numeric_limits<double>::quiet_NaN();
}

Engine::Engine(const std::vector<Request>& requests, const StepCost& cost, const ServeOptions& options,
               int64_t kv_pools)
    : cost_(cost),
      options_(options),
      kv_pools_(static_cast<size_t>(std::max<int64_t>(1, kv_pools))),
      table_(requests.size()) {
  records_.reserve(requests.size());
  for (const Request& q : requests) {
    RequestRecord r;
    r.id = static_cast<int64_t>(records_.size());
    r.arrival_s = q.arrival_s;
    r.prompt_tokens = q.prompt_tokens;
    r.output_tokens = r.target_tokens = q.output_tokens;
    records_.push_back(r);
  }
  if (!requests.empty()) now_ = totals_.first_arrival_s = totals_.end_s = requests.front().arrival_s;
}

void Engine::admit_arrivals(const Limits& limits, double until) {
  while (next_arrival_ < records_.size() && records_[next_arrival_].arrival_s <= until) {
    RequestRecord& r = records_[next_arrival_++];
    triage(r, limits);
    if (!r.decided) waiting_.push_back(r.id);
  }
}

void Engine::triage(RequestRecord& r, const Limits& limits) {
  if (limits.max_prompt > 0 && r.prompt_tokens > limits.max_prompt)
    return reject(r, Reason::prompt_exceeds_prefill);
  if (limits.max_context > 0 && r.output_tokens > 1 &&
      r.prompt_tokens + r.output_tokens > limits.max_context) {
    if (options_.overflow == Overflow::reject) return reject(r, Reason::context_exceeds_decode);
    r.target_tokens = std::max<int64_t>(1, limits.max_context - r.prompt_tokens);
    r.outcome = Outcome::truncated;
    r.reason = Reason::context_exceeds_decode;
  }
  const double context = static_cast<double>(r.prompt_tokens + r.target_tokens);
  if (context * options_.kv_bytes_per_token > options_.kv_capacity_bytes)
    reject(r, Reason::kv_exceeds_capacity);
}

void Engine::reject(RequestRecord& r, Reason reason) {
  if (r.decided) broken(fmt::format("request {} decided twice", r.id));
  r.outcome = Outcome::rejected;
  r.reason = reason;
  r.target_tokens = 0;
  r.decided = true;
  ++decided_;
}

double Engine::next_arrival_s() const {
  return next_arrival_ < records_.size() ? records_[next_arrival_].arrival_s
                                         : std::numeric_limits<double>::infinity();
}

double Engine::batch_ready_s() const {
  return waiting_.empty() ? std::numeric_limits<double>::infinity()
                          : records_[static_cast<size_t>(waiting_.front())].arrival_s + options_.window_s;
}

bool Engine::wait_for_event() {
  double next = next_arrival_s();
  if (const double ready = batch_ready_s(); ready > now_) next = std::min(next, ready);
  if (!std::isfinite(next)) return false;
  now_ = std::max(now_, next);
  return true;
}

bool Engine::reserve_kv(int64_t id, int64_t pool, double at) {
  RequestRecord& r = records_[static_cast<size_t>(id)];
  KvPool& kv = kv_pools_.at(static_cast<size_t>(pool));
  for (; !kv.freed.empty() && kv.freed.top().first <= at; kv.freed.pop())
    kv.used_tokens -= kv.freed.top().second;
  const int64_t tokens = kv.used_tokens + r.prompt_tokens + r.target_tokens;
  if (static_cast<double>(tokens) * options_.kv_bytes_per_token > options_.kv_capacity_bytes) return false;
  kv.used_tokens = tokens;
  r.kv_reserved = true;
  r.kv_pool = pool;
  return true;
}

void Engine::set_kv_transfer(int64_t id, double seconds) {
  records_[static_cast<size_t>(id)].kv_transfer_s = seconds;
}

void Engine::check_part(Phase phase, const Step& step) const {
  const bool prefill = phase == Phase::prefill;
  const auto& works = prefill ? step.prefill : step.decode;
  const Shape& shape = prefill ? step.prefill_shape : step.decode_shape;
  for (const Work& w : works) {
    const RequestRecord& r = record(w.request);
    if (r.decided || r.arrival_s > now_) broken(fmt::format("request {} in a step it cannot be in", r.id));
    if (prefill && (w.prefill_tokens < 1 || r.prefilled_tokens + w.prefill_tokens > r.prompt_tokens))
      broken(fmt::format("request {}: prefill of {} tokens out of range", r.id, w.prefill_tokens));
    if (!r.kv_reserved) broken(fmt::format("request {} runs without a KV reservation", r.id));
    if (!prefill && !(prefilled(r.id) && now_ >= r.first_token_s + r.kv_transfer_s))
      broken(fmt::format("request {} decodes before its prefill finished and its KV cache arrived", r.id));
    if (step.varlen) continue;
    if (prefill ? w.prefill_tokens > shape.length || w.lane < 0 || w.lane >= shape.batch
                : r.prompt_tokens + r.generated_tokens > shape.length)
      broken(fmt::format("request {} does not fit {}", r.id, packing::to_string(shape)));
  }
  if (!step.varlen && (prefill ? useful_of(phase, works) > shape.batch * shape.length
                               : static_cast<int64_t>(works.size()) > shape.batch))
    broken(fmt::format("step overfills {}", packing::to_string(shape)));
}

StepCharge Engine::run_part(Phase phase, const Step& step) {
  const auto& works = phase == Phase::prefill ? step.prefill : step.decode;
  if (works.empty()) return {};
  check_part(phase, step);
  if (!step.varlen)
    return cost_.fixed(phase, phase == Phase::prefill ? step.prefill_shape : step.decode_shape);
  lengths_.clear();
  for (const Work& w : works) {
    const RequestRecord& r = record(w.request);
    lengths_.push_back(phase == Phase::prefill ? w.prefill_tokens : r.prompt_tokens + r.generated_tokens);
  }
  return cost_.varlen(phase, lengths_);
}

// The first step of a runtime prefill shape waits for its compilation (the chip idle).
double Engine::compile_stall(const Step& step) {
  if (step.prefill.empty() || !step.runtime_prefill || !compiled_.insert(step.prefill_shape).second) return 0;
  ++totals_.compiled_shapes;
  totals_.compile_stall_s += options_.compile_stall_s;
  return options_.compile_stall_s;
}

double Engine::execute_at(const Step& step, double start) {
  if (step.prefill.empty() && step.decode.empty()) broken("an empty step");
  now_ = start + compile_stall(step);
  const StepCharge p = run_part(Phase::prefill, step);
  const StepCharge d = run_part(Phase::decode, step);
  for (const auto* works : {&step.prefill, &step.decode})
    for (const Work& w : *works)
      if (std::isnan(records_[w.request].start_s)) records_[w.request].start_s = now_;
  // Counted before the records move on: the cells need each request's tokens so far.
  if (!step.prefill.empty()) account(Phase::prefill, step, p);
  if (!step.decode.empty()) account(Phase::decode, step, d);
  now_ += p.seconds + d.seconds;
  ++totals_.steps;
  totals_.busy_s += p.seconds + d.seconds;
  totals_.energy_pj += p.energy_pj + d.energy_pj;
  totals_.end_s = std::max(totals_.end_s, now_);
  if (!step.prefill.empty())
    attribute(step.prefill, positions_of(Phase::prefill, step), p.energy_pj, Phase::prefill);
  if (!step.decode.empty())
    attribute(step.decode, positions_of(Phase::decode, step), d.energy_pj, Phase::decode);
  for (const Work& w : step.prefill) {
    RequestRecord& r = records_[w.request];
    if (!step.varlen && !r.prefill_shape) r.prefill_shape = step.prefill_shape;
    r.varlen = step.varlen;
    r.prefilled_tokens += w.prefill_tokens;
    if (r.prefilled_tokens == r.prompt_tokens) emit_token(r);
  }
  for (const Work& w : step.decode) {
    RequestRecord& r = records_[w.request];
    if (!step.varlen) r.decode_shape = step.decode_shape;
    r.slot = w.slot;
    emit_token(r);
  }
  return now_;
}

// Pads go to the works in proportion to their useful tokens, rounded down, the remainder one
// each to the first works (so they sum exactly); energy in proportion to the positions each
// then holds (its useful tokens plus its exact, unrounded pad share).
void Engine::attribute(const std::vector<Work>& works, int64_t positions, double energy_pj, Phase phase) {
  const int64_t useful = useful_of(phase, works);
  const int64_t pad = positions - useful;
  totals_.positions += positions;
  totals_.useful += useful;
  totals_.pad += pad;
  int64_t left = pad;
  for (const Work& w : works) {
    const int64_t share = pad * useful_of(phase, w) / useful;
    records_[w.request].pad_tokens += share;
    left -= share;
  }
  for (size_t i = 0; left > 0; ++i, --left) ++records_[works[i].request].pad_tokens;
  for (const Work& w : works) {
    const double held =
        static_cast<double>(useful_of(phase, w)) +
        static_cast<double>(pad) * static_cast<double>(useful_of(phase, w)) / static_cast<double>(useful);
    records_[w.request].energy_pj += energy_pj * held / static_cast<double>(positions);
  }
}

// The attention cells of a static prefill step, as attention_cells (packing/metrics.hpp) counts
// a lane: each lane's S x S rectangle, each segment's square useful, the rest of the used square
// cross, the remainder pad. Counted from per-lane sums (no lanes built: this runs every step); a
// lane holding more than S tokens is a scheduler bug.
packing::AttentionCells Engine::prefill_cells(const Step& step) {
  const Shape& shape = step.prefill_shape;
  lane_used_.assign(static_cast<size_t>(shape.batch), 0);
  packing::AttentionCells c;
  for (const Work& w : step.prefill) {
    lane_used_[static_cast<size_t>(w.lane)] += w.prefill_tokens;
    c.useful += w.prefill_tokens * w.prefill_tokens;
  }
  int64_t used_squares = 0;
  for (size_t k = 0; k < lane_used_.size(); ++k) {
    if (lane_used_[k] > shape.length)
      broken(fmt::format("lane {} of {} overfilled", k, packing::to_string(shape)));
    used_squares += lane_used_[k] * lane_used_[k];
  }
  c.computed = shape.batch * shape.length * shape.length;
  c.cross = used_squares - c.useful;
  c.pad = c.computed - used_squares;
  return c;
}

// The lane view of a static prefill step: each work a segment of its lane, in order, at the
// request's prompt offset so far.
void Engine::record_lanes(const Step& step) {
  std::vector<packing::Lane> lanes(static_cast<size_t>(step.prefill_shape.batch));
  for (const Work& w : step.prefill) {
    packing::Lane& lane = lanes[static_cast<size_t>(w.lane)];
    packing::Segment s;
    s.request_id = w.request;
    s.offset = lane.used();
    s.tokens = w.prefill_tokens;
    s.request_offset = record(w.request).prefilled_tokens;
    lane.segments.push_back(s);
  }
  recorded_.push_back({step.prefill_shape, now_, 0, step.runtime_prefill, std::move(lanes)});
}

// Adds one part of the step to the work table: its tokens, its attention cells (prefill: each
// lane's rectangle; decode: the KV positions attended) and its charge.
void Engine::account(Phase phase, const Step& step, const StepCharge& charge) {
  const bool prefill = phase == Phase::prefill;
  const auto& works = prefill ? step.prefill : step.decode;
  ShapeWork part;
  part.phase = phase;
  part.varlen = step.varlen;
  part.runs = 1;
  part.segments = static_cast<int64_t>(works.size());
  part.useful_tokens = useful_of(phase, works);
  part.pad_tokens = positions_of(phase, step) - part.useful_tokens;
  part.seconds = charge.seconds;
  part.energy_pj = charge.energy_pj;
  if (!step.varlen) {
    part.shape = prefill ? step.prefill_shape : step.decode_shape;
    part.runtime_shape = prefill && step.runtime_prefill;
  }
  if (prefill && !step.varlen) {
    part.cells = prefill_cells(step);
    if (options_.record_lanes) record_lanes(step);
  } else {
    for (const Work& w : works) {
      const RequestRecord& r = record(w.request);
      part.cells.useful +=
          prefill ? w.prefill_tokens * w.prefill_tokens : r.prompt_tokens + r.generated_tokens;
    }
    part.cells.computed = step.varlen ? part.cells.useful : part.shape.batch * part.shape.length;
    part.cells.pad = part.cells.computed - part.cells.useful;
  }
  table_.add(part, works);
}

void Engine::emit_token(RequestRecord& r) {
  if (r.generated_tokens == 0) {
    r.first_token_s = now_;
  } else {
    const double gap = now_ - r.last_token_s;
    r.tbt_sum_s += gap;
    r.tbt_max_s = std::max(r.tbt_max_s, gap);
  }
  r.last_token_s = now_;
  if (++r.generated_tokens < r.target_tokens) return;
  if (r.decided) broken(fmt::format("request {} decided twice", r.id));
  r.decided = true;
  ++decided_;
  kv_pools_[static_cast<size_t>(r.kv_pool)].freed.emplace(now_, r.prompt_tokens + r.target_tokens);
  r.kv_reserved = false;
}

ServeResult Engine::take_result(std::string scheduler) {
  if (!done()) broken("the scheduler stopped before every request had an outcome");
  // A prompt prefilled in several pieces (chunked): each segment is chunk k of n.
  std::vector<int64_t> pieces(records_.size(), 0), seen(records_.size(), 0);
  for (const auto& inst : recorded_)
    for (const auto& lane : inst.lanes)
      for (const auto& s : lane.segments) ++pieces[static_cast<size_t>(s.request_id)];
  for (auto& inst : recorded_)
    for (auto& lane : inst.lanes)
      for (auto& s : lane.segments) {
        s.chunk = seen[static_cast<size_t>(s.request_id)]++;
        s.chunks = pieces[static_cast<size_t>(s.request_id)];
      }
  return {std::move(scheduler), std::move(records_), totals_, table_.rows(), std::move(recorded_)};
}

}  // namespace systolic::serving
