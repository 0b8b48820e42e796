// Admission, arrival windows, lane lengths and instances (docs/packing.md).
#include "sim/packing/packer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "models/common/divide.hpp"
#include "models/common/error.hpp"
#include "sim/packing/detail.hpp"

namespace systolic::packing {
namespace {

// Two arrivals closer than this (seconds) count as simultaneous when closing a window, so
// that "a + W" computed in floating point still includes a request arriving exactly then.
constexpr double kTimeEpsilon = 1e-9;

struct PlacedLane {
  Lane lane;
  int64_t length = 0;
};

// Lengths -> B options (ascending) of the prefill shapes available now.
using BatchOptions = std::map<int64_t, std::vector<int64_t>>;

// For `lanes` lanes waiting at one length: the largest B that they fill completely, or, when
// fewer lanes wait than the smallest B, that smallest B (the rest of it is empty lanes).
int64_t pick_batch(const std::vector<int64_t>& options, int64_t lanes) {
  const auto it = std::upper_bound(options.begin(), options.end(), lanes);
  return it == options.begin() ? options.front() : *(it - 1);
}

// The rule of docs/packing.md, "From lanes to instances".
std::vector<BucketInstance> form_instances(std::vector<PlacedLane> lanes, const BatchOptions& batches) {
  // Pending lanes per length in creation order, plus one ordering of all of them by fill
  // (longest first, then longer bucket, then creation) for filling empty lanes.
  std::map<int64_t, std::set<size_t>, std::greater<int64_t>> by_length;
  std::set<std::tuple<int64_t, int64_t, size_t>> by_fill;  // (-used, -length, index)
  for (size_t i = 0; i < lanes.size(); ++i) {
    by_length[lanes[i].length].insert(i);
    by_fill.insert({-lanes[i].lane.used(), -lanes[i].length, i});
  }
  const auto take = [&](size_t i) {
    by_length[lanes[i].length].erase(i);
    by_fill.erase({-lanes[i].lane.used(), -lanes[i].length, i});
    return std::move(lanes[i].lane);
  };
  std::vector<BucketInstance> out;
  for (auto& [length, pending] : by_length) {
    const std::vector<int64_t>& options = batches.at(length);
    while (!pending.empty()) {
      const int64_t n = static_cast<int64_t>(pending.size());
      BucketInstance inst;
      inst.shape = {pick_batch(options, n), length};
      inst.lanes.reserve(static_cast<size_t>(inst.shape.batch));
      for (int64_t k = 0; k < std::min(n, inst.shape.batch); ++k)
        inst.lanes.push_back(take(*pending.begin()));
      // Empty lanes are free room: move the longest shorter lanes still waiting into them
      // (only shorter lengths are left, since this length's lanes are all placed).
      while (static_cast<int64_t>(inst.lanes.size()) < inst.shape.batch && !by_fill.empty())
        inst.lanes.push_back(take(std::get<2>(*by_fill.begin())));
      inst.lanes.resize(static_cast<size_t>(inst.shape.batch));
      out.push_back(std::move(inst));
    }
  }
  return out;
}

int64_t smallest_length(const BatchOptions& batches, int64_t fill) {
  const auto it = batches.lower_bound(fill);
  return it == batches.end() ? 0 : it->first;
}

std::string fmt_seconds(double s) { return fmt::format("{:.6g}", s); }

enum class Admit { fit, compile, split, reject, truncate };

struct Admitted {
  const Request* request = nullptr;
  Admit prefill = Admit::fit;
  Admit decode = Admit::fit;
  int64_t generated = 0;  // tokens it receives: the first from prefill, the rest one per decode step
  int64_t chunks = 1;
  double dispatch_s = 0;
};

}  // namespace

void validate(const PackOptions& o) {
  const auto bad = [](const char* key, const std::string& expected, const std::string& got) {
    throw InputError(fmt::format("option '{}': expected {}, got {}", key, expected, got));
  };
  if (!std::isfinite(o.window_ms) || o.window_ms < 0)
    bad("window_ms", "a time in milliseconds >= 0", fmt_seconds(o.window_ms));
  if (!std::isfinite(o.compile_stall_s) || o.compile_stall_s < 0)
    bad("compile_stall_s", "a time in seconds >= 0", fmt_seconds(o.compile_stall_s));
  if (o.compile_granule < 1 || o.compile_granule > kMaxTokens)
    bad("compile_granule", fmt::format("a token count in [1, {}]", kMaxTokens),
        std::to_string(o.compile_granule));
  if (!(o.compile_pad_threshold >= 0 && o.compile_pad_threshold <= 1))
    bad("compile_pad_threshold", "a fraction in [0, 1] (1: never compile to save padding)",
        fmt_seconds(o.compile_pad_threshold));
  if (o.compile_max_length < 0 || o.compile_max_length > kMaxTokens)
    bad("compile_max_length", fmt::format("0 (no limit) or a token count up to {}", kMaxTokens),
        std::to_string(o.compile_max_length));
}

std::vector<BucketInstance> place_lanes(const std::vector<Lane>& lanes,
                                        const std::vector<Shape>& prefill_shapes) {
  if (prefill_shapes.empty()) throw std::invalid_argument("place_lanes: no prefill shapes");
  BatchOptions batches;
  for (const Shape& s : prefill_shapes) batches[s.length].push_back(s.batch);
  for (auto& [l, bs] : batches) std::sort(bs.begin(), bs.end());
  std::vector<PlacedLane> placed;
  for (const Lane& lane : lanes) {
    const int64_t length = smallest_length(batches, std::max<int64_t>(lane.used(), 1));
    if (length == 0)
      throw std::invalid_argument(fmt::format("place_lanes: a lane of {} tokens fits no bucket",
                                              lane.used()));
    placed.push_back({lane, length});
  }
  return form_instances(std::move(placed), batches);
}

namespace {

// What one pack() call carries between its stages.
struct PackRun {
  const PackOptions& options;
  BatchOptions batches;  // configured prefill shapes, then runtime ones joining
  std::set<int64_t> runtime_lengths;
  int64_t s_cap = 0;  // lane length the packers fill
  int64_t l_cap = 0;  // longest decode L
  std::vector<Admitted> admitted;
  PackResult result;

  bool may_compile(int64_t tokens) const {
    return options.compile_new_shapes &&
           (options.compile_max_length == 0 ||
            round_up(tokens, options.compile_granule) <= options.compile_max_length);
  }
};

// Requests in arrival order (ties by id); their ids name them in lanes and rejections, so they
// must be unique (RequestLog's are).
std::vector<const Request*> arrival_order(const std::vector<Request>& requests) {
  std::vector<const Request*> order;
  order.reserve(requests.size());
  for (const Request& r : requests) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](const Request* a, const Request* b) {
    return a->arrival_s != b->arrival_s ? a->arrival_s < b->arrival_s : a->id < b->id;
  });
  std::vector<int64_t> ids;
  ids.reserve(requests.size());
  for (const Request& r : requests) ids.push_back(r.id);
  std::sort(ids.begin(), ids.end());
  if (const auto dup = std::adjacent_find(ids.begin(), ids.end()); dup != ids.end())
    throw std::invalid_argument(fmt::format("pack: request id {} appears twice", *dup));
  return order;
}

// How a request's prefill and decode fit the set (docs/packing.md, "Admission").
Admitted classify(const PackRun& run, const Request* r) {
  if (r->prompt_tokens < 1 || r->output_tokens < 1 || !std::isfinite(r->arrival_s))
    throw InputError(fmt::format("request {} (line {}): token counts must be positive and the arrival time finite",
                                 r->id, r->line));
  const Overflow overflow = run.options.overflow;
  Admitted a;
  a.request = r;
  a.prefill = r->prompt_tokens <= run.s_cap          ? Admit::fit
              : run.may_compile(r->prompt_tokens)    ? Admit::compile
              : overflow == Overflow::split          ? Admit::split
                                                     : Admit::reject;
  const int64_t kv = r->prompt_tokens + r->output_tokens;
  a.decode = kv <= run.l_cap                ? Admit::fit
             : run.may_compile(kv)          ? Admit::compile
             : overflow == Overflow::split  ? Admit::truncate
                                            : Admit::reject;
  a.generated = r->output_tokens;
  return a;
}

// Admits one request: rejected, or admitted (truncated or split as the policy says).
void admit(PackRun& run, const Request* r) {
  Admitted a = classify(run, r);
  if (a.prefill == Admit::reject) {
    run.result.rejected.push_back(
        {r->id, r->line, Phase::prefill,
         fmt::format("prompt of {} tokens > longest prefill bucket S = {}", r->prompt_tokens, run.s_cap)});
    return;
  }
  if (a.decode == Admit::reject) {
    run.result.rejected.push_back({r->id, r->line, Phase::decode,
                                   fmt::format("prompt + output = {} + {} = {} tokens > longest decode bucket L = {}",
                                               r->prompt_tokens, r->output_tokens,
                                               r->prompt_tokens + r->output_tokens, run.l_cap)});
    return;
  }
  if (a.decode == Admit::truncate) {
    // Its context (prompt + tokens) fits L; prefill's token comes whatever L leaves.
    a.generated = std::max<int64_t>(1, run.l_cap - r->prompt_tokens);
    run.result.truncated.push_back({r->id, r->line, a.generated, r->output_tokens - a.generated});
  }
  if (a.prefill == Admit::split) {
    a.chunks = ceil_div(r->prompt_tokens, run.s_cap);
    run.result.split.push_back(r->id);
  }
  run.admitted.push_back(a);
}

// The lanes of admitted requests [i, j): their prompts (or chunks) packed by the packer, and a
// lane of its own for each prompt that compiles its own shape.
std::vector<Lane> window_lanes(const PackRun& run, size_t i, size_t j) {
  std::vector<Item> items, alone;
  for (size_t k = i; k < j; ++k) {
    const Request& r = *run.admitted[k].request;
    if (run.admitted[k].prefill == Admit::compile) {
      alone.push_back({r.id, r.prompt_tokens, 0, 1, 0});
      continue;
    }
    const int64_t chunks = run.admitted[k].chunks;
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t offset = c * run.s_cap;
      items.push_back({r.id, std::min(run.s_cap, r.prompt_tokens - offset), c, chunks, offset});
    }
  }
  std::vector<Lane> lanes = pack_lanes(items, run.s_cap, run.options.packer);
  for (const Item& it : alone) {
    Lane lane;
    lane.segments.push_back({it.request_id, 0, it.tokens, 0, 1, 0});
    lanes.push_back(std::move(lane));
  }
  return lanes;
}

// Each lane's length; new shapes compiled where the policy says so (from `start`, one stall
// each, counted in `compiled`).
std::vector<PlacedLane> place_window(PackRun& run, std::vector<Lane> lanes, double start, int64_t& compiled) {
  const PackOptions& o = run.options;
  std::vector<PlacedLane> placed;
  placed.reserve(lanes.size());
  for (Lane& lane : lanes) {
    const int64_t fill = lane.used();
    int64_t length = smallest_length(run.batches, fill);
    const int64_t tight = round_up(fill, o.compile_granule);
    const bool overflow = length == 0;
    const bool wasteful =
        !overflow && static_cast<double>(length - fill) / static_cast<double>(length) > o.compile_pad_threshold;
    if (o.compile_new_shapes && (overflow || wasteful) && (overflow || tight < length)) {
      length = tight;
      run.batches[length] = {1};
      run.runtime_lengths.insert(length);
      run.result.compiled.push_back({Phase::prefill, Shape{1, length},
                                     start + static_cast<double>(compiled) * o.compile_stall_s,
                                     lane.segments.front().request_id});
      ++compiled;
    }
    placed.push_back({std::move(lane), length});
  }
  return placed;
}

// Prefill: arrival windows, each packed into lanes, given lengths and gathered into instances.
void pack_prefill(PackRun& run) {
  const double window_s = run.options.window_ms / 1000.0;
  double host_free = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < run.admitted.size();) {
    const double close = run.admitted[i].request->arrival_s + window_s;
    size_t j = i;
    while (j < run.admitted.size() && run.admitted[j].request->arrival_s <= close + kTimeEpsilon) ++j;
    int64_t compiled = 0;
    const double start = std::max(close, host_free);
    std::vector<PlacedLane> placed = place_window(run, window_lanes(run, i, j), start, compiled);
    const double dispatch = start + static_cast<double>(compiled) * run.options.compile_stall_s;
    host_free = dispatch;
    for (BucketInstance& inst : form_instances(std::move(placed), run.batches)) {
      inst.window = run.result.windows;
      inst.window_close_s = close;
      inst.dispatch_s = dispatch;
      inst.runtime_shape = run.runtime_lengths.count(inst.shape.length) > 0;
      run.result.prefill.push_back(std::move(inst));
    }
    for (size_t k = i; k < j; ++k) run.admitted[k].dispatch_s = dispatch;
    ++run.result.windows;
    i = j;
  }
}

// Decode pools compiled for overflowing generations, in order of the prefill dispatch of the
// request that needs them: L -> when compiled. Appends their shapes to `decode_shapes`.
std::map<int64_t, double> compile_decode_pools(PackRun& run, std::vector<Shape>& decode_shapes) {
  std::vector<size_t> by_dispatch(run.admitted.size());
  std::iota(by_dispatch.begin(), by_dispatch.end(), size_t{0});
  std::stable_sort(by_dispatch.begin(), by_dispatch.end(), [&](size_t a, size_t b) {
    return run.admitted[a].dispatch_s < run.admitted[b].dispatch_s;
  });
  std::map<int64_t, double> compiled;
  for (size_t k : by_dispatch) {
    const Admitted& a = run.admitted[k];
    if (a.decode != Admit::compile) continue;
    const int64_t kv = a.request->prompt_tokens + a.generated;
    if (compiled.lower_bound(kv) != compiled.end()) continue;
    const int64_t length = round_up(kv, run.options.compile_granule);
    compiled[length] = a.dispatch_s;
    decode_shapes.push_back({1, length});
    run.result.compiled.push_back({Phase::decode, Shape{1, length}, a.dispatch_s, a.request->id});
  }
  return compiled;
}

// Decode: every token after prefill's, continuously batched (backlogged) in the decode pools.
std::vector<Shape> pack_decode(PackRun& run, const BucketSet& buckets) {
  std::vector<Shape> decode_shapes;
  for (const Bucket& b : buckets.decode) decode_shapes.push_back(b.shape);
  const std::map<int64_t, double> compiled = compile_decode_pools(run, decode_shapes);
  std::vector<DecodeJob> jobs;
  for (const Admitted& a : run.admitted)
    if (a.generated > 1)  // else its only token came from prefill
      jobs.push_back({a.request->id, a.request->prompt_tokens, a.generated - 1, a.dispatch_s});
  run.result.decode = schedule_decode(jobs, decode_shapes);
  for (DecodeShapeStats& st : run.result.decode) st.runtime_shape = compiled.count(st.shape.length) > 0;
  return decode_shapes;
}

// One line per admitted request.
void add_request_lines(PackRun& run, const std::vector<Shape>& decode_shapes) {
  std::map<int64_t, int64_t> pool_batch;  // decode L -> B_max
  for (const Shape& s : decode_shapes) pool_batch[s.length] = std::max(pool_batch[s.length], s.batch);
  run.result.accepted.reserve(run.admitted.size());
  for (const Admitted& a : run.admitted) {
    RequestTiming t;
    t.request_id = a.request->id;
    t.arrival_s = a.request->arrival_s;
    t.prompt_tokens = a.request->prompt_tokens;
    t.prefill_dispatch_s = a.dispatch_s;
    t.chunks = a.chunks;
    t.generated_tokens = a.generated;
    if (a.generated > 1) {
      const auto it = pool_batch.lower_bound(a.request->prompt_tokens + a.generated - 1);
      t.decode_shape = {it->second, it->first};
    }
    run.result.accepted.push_back(t);
  }
}

}  // namespace

PackResult pack(const std::vector<Request>& requests, const BucketSet& buckets, const PackOptions& options) {
  validate(options);
  if (buckets.prefill.empty() || buckets.decode.empty())
    throw InputError(
        fmt::format("bucket set '{}': needs at least one prefill and one decode bucket", buckets.name));
  PackRun run{options, {}, {}, 0, 0, {}, {}};
  run.result.bucket_set = buckets.name;
  run.result.options = options;
  run.result.requests = static_cast<int64_t>(requests.size());
  for (const Bucket& b : buckets.prefill) run.batches[b.shape.length].push_back(b.shape.batch);
  for (auto& [l, bs] : run.batches) std::sort(bs.begin(), bs.end());
  run.s_cap = run.batches.rbegin()->first;
  for (const Bucket& b : buckets.decode) run.l_cap = std::max(run.l_cap, b.shape.length);

  const std::vector<const Request*> order = arrival_order(requests);
  run.admitted.reserve(order.size());
  for (const Request* r : order) admit(run, r);
  pack_prefill(run);
  const std::vector<Shape> decode_shapes = pack_decode(run, buckets);
  run.result.compile_stall_s = static_cast<double>(run.result.compiled.size()) * options.compile_stall_s;
  std::stable_sort(run.result.compiled.begin(), run.result.compiled.end(),
                   [](const CompiledShape& a, const CompiledShape& b) { return a.at_s < b.at_s; });
  add_request_lines(run, decode_shapes);
  return std::move(run.result);
}

}  // namespace systolic::packing
