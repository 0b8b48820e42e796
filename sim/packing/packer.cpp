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

PackResult pack(const std::vector<Request>& requests, const BucketSet& buckets,
                const PackOptions& options) {
  validate(options);
  if (buckets.prefill.empty() || buckets.decode.empty())
    throw InputError(fmt::format("bucket set '{}': needs at least one prefill and one decode bucket",
                                 buckets.name));
  PackResult result;
  result.bucket_set = buckets.name;
  result.options = options;
  result.requests = static_cast<int64_t>(requests.size());

  BatchOptions batches;  // configured prefill shapes, then runtime ones joining
  for (const Bucket& b : buckets.prefill) batches[b.shape.length].push_back(b.shape.batch);
  for (auto& [l, bs] : batches) std::sort(bs.begin(), bs.end());
  std::set<int64_t> runtime_lengths;
  const int64_t s_cap = batches.rbegin()->first;  // lane length the packers fill
  int64_t l_cap = 0;
  for (const Bucket& b : buckets.decode) l_cap = std::max(l_cap, b.shape.length);
  const int64_t granule = options.compile_granule;
  const auto may_compile = [&](int64_t tokens) {
    return options.compile_new_shapes &&
           (options.compile_max_length == 0 ||
            detail::round_up(tokens, granule) <= options.compile_max_length);
  };

  // --- Admission, in arrival order (ties by id). ---
  std::vector<const Request*> order;
  order.reserve(requests.size());
  for (const Request& r : requests) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](const Request* a, const Request* b) {
    return a->arrival_s != b->arrival_s ? a->arrival_s < b->arrival_s : a->id < b->id;
  });
  {  // ids name requests in lanes and rejections: they must be unique (RequestLog's are)
    std::vector<int64_t> ids;
    ids.reserve(requests.size());
    for (const Request& r : requests) ids.push_back(r.id);
    std::sort(ids.begin(), ids.end());
    const auto dup = std::adjacent_find(ids.begin(), ids.end());
    if (dup != ids.end())
      throw std::invalid_argument(fmt::format("pack: request id {} appears twice", *dup));
  }
  std::vector<Admitted> admitted;
  admitted.reserve(order.size());
  for (const Request* r : order) {
    if (r->prompt_tokens < 1 || r->output_tokens < 1 || !std::isfinite(r->arrival_s))
      throw InputError(fmt::format("request {} (line {}): token counts must be positive and the "
                                   "arrival time finite",
                                   r->id, r->line));
    Admitted a;
    a.request = r;
    if (r->prompt_tokens <= s_cap)
      a.prefill = Admit::fit;
    else if (may_compile(r->prompt_tokens))
      a.prefill = Admit::compile;
    else if (options.overflow == Overflow::split)
      a.prefill = Admit::split;
    else
      a.prefill = Admit::reject;
    const int64_t kv = r->prompt_tokens + r->output_tokens;
    a.generated = r->output_tokens;
    if (kv <= l_cap)
      a.decode = Admit::fit;
    else if (may_compile(kv))
      a.decode = Admit::compile;
    else if (options.overflow == Overflow::split)
      a.decode = Admit::truncate;
    else
      a.decode = Admit::reject;

    if (a.prefill == Admit::reject) {
      result.rejected.push_back(
          {r->id, r->line, Phase::prefill,
           fmt::format("prompt of {} tokens > longest prefill bucket S = {}", r->prompt_tokens,
                       s_cap)});
      continue;
    }
    if (a.decode == Admit::reject) {
      result.rejected.push_back(
          {r->id, r->line, Phase::decode,
           fmt::format("prompt + output = {} + {} = {} tokens > longest decode bucket L = {}",
                       r->prompt_tokens, r->output_tokens, kv, l_cap)});
      continue;
    }
    if (a.decode == Admit::truncate) {
      // Its context (prompt + tokens) fits L; prefill's token comes whatever L leaves.
      a.generated = std::max<int64_t>(1, l_cap - r->prompt_tokens);
      result.truncated.push_back({r->id, r->line, a.generated, r->output_tokens - a.generated});
    }
    if (a.prefill == Admit::split) {
      a.chunks = (r->prompt_tokens + s_cap - 1) / s_cap;
      result.split.push_back(r->id);
    }
    admitted.push_back(a);
  }

  // --- Prefill: windows, lanes, lengths, instances. ---
  const double window_s = options.window_ms / 1000.0;
  double host_free = -std::numeric_limits<double>::infinity();
  std::vector<Item> items, alone;
  for (size_t i = 0; i < admitted.size();) {
    const double close = admitted[i].request->arrival_s + window_s;
    size_t j = i;
    items.clear();
    alone.clear();
    while (j < admitted.size() && admitted[j].request->arrival_s <= close + kTimeEpsilon) {
      const Request& r = *admitted[j].request;
      if (admitted[j].prefill == Admit::compile) {
        alone.push_back({r.id, r.prompt_tokens, 0, 1, 0});
      } else {
        const int64_t chunks = admitted[j].chunks;
        for (int64_t c = 0; c < chunks; ++c) {
          const int64_t offset = c * s_cap;
          items.push_back({r.id, std::min(s_cap, r.prompt_tokens - offset), c, chunks, offset});
        }
      }
      ++j;
    }
    std::vector<Lane> lanes = pack_lanes(items, s_cap, options.packer);
    for (const Item& it : alone) {
      Lane lane;
      lane.segments.push_back({it.request_id, 0, it.tokens, 0, 1, 0});
      lanes.push_back(std::move(lane));
    }

    // Lane lengths; compile new shapes where the policy says so.
    int64_t compiled_here = 0;
    const double start = std::max(close, host_free);
    std::vector<PlacedLane> placed;
    placed.reserve(lanes.size());
    for (Lane& lane : lanes) {
      const int64_t fill = lane.used();
      int64_t length = smallest_length(batches, fill);
      if (options.compile_new_shapes) {
        const int64_t tight = detail::round_up(fill, granule);
        const bool overflow = length == 0;
        const bool wasteful =
            !overflow && static_cast<double>(length - fill) / static_cast<double>(length) >
                             options.compile_pad_threshold;
        if ((overflow || wasteful) && (overflow || tight < length)) {
          length = tight;
          batches[length] = {1};
          runtime_lengths.insert(length);
          result.compiled.push_back({Phase::prefill, Shape{1, length},
                                     start + static_cast<double>(compiled_here) * options.compile_stall_s,
                                     lane.segments.front().request_id});
          ++compiled_here;
        }
      }
      placed.push_back({std::move(lane), length});
    }
    const double dispatch = start + static_cast<double>(compiled_here) * options.compile_stall_s;
    host_free = dispatch;

    std::vector<BucketInstance> instances = form_instances(std::move(placed), batches);
    for (BucketInstance& inst : instances) {
      inst.window = result.windows;
      inst.window_close_s = close;
      inst.dispatch_s = dispatch;
      inst.runtime_shape = runtime_lengths.count(inst.shape.length) > 0;
      result.prefill.push_back(std::move(inst));
    }
    for (size_t k = i; k < j; ++k) admitted[k].dispatch_s = dispatch;
    ++result.windows;
    i = j;
  }

  // --- Decode. ---
  std::vector<Shape> decode_shapes;
  for (const Bucket& b : buckets.decode) decode_shapes.push_back(b.shape);
  std::vector<DecodeJob> jobs;
  // Decode compilations, in order of the prefill dispatch of the request that needs them.
  std::vector<size_t> by_ready(admitted.size());
  std::iota(by_ready.begin(), by_ready.end(), size_t{0});
  std::stable_sort(by_ready.begin(), by_ready.end(), [&](size_t a, size_t b) {
    return admitted[a].dispatch_s < admitted[b].dispatch_s;
  });
  std::map<int64_t, double> decode_compiled;  // L -> compiled at
  for (size_t k : by_ready) {
    const Admitted& a = admitted[k];
    if (a.decode != Admit::compile) continue;
    const int64_t kv = a.request->prompt_tokens + a.generated;
    if (decode_compiled.lower_bound(kv) != decode_compiled.end()) continue;
    const int64_t length = detail::round_up(kv, granule);
    decode_compiled[length] = a.dispatch_s;
    decode_shapes.push_back({1, length});
    result.compiled.push_back({Phase::decode, Shape{1, length}, a.dispatch_s, a.request->id});
  }
  for (size_t k = 0; k < admitted.size(); ++k) {
    const Admitted& a = admitted[k];
    if (a.generated < 2) continue;  // its only token came from prefill
    DecodeJob job{a.request->id, a.request->prompt_tokens, a.generated - 1, a.dispatch_s};
    jobs.push_back(job);
  }
  result.decode = schedule_decode(jobs, decode_shapes);
  for (DecodeShapeStats& st : result.decode)
    st.runtime_shape = decode_compiled.count(st.shape.length) > 0;
  result.compile_stall_s = static_cast<double>(result.compiled.size()) * options.compile_stall_s;
  std::stable_sort(result.compiled.begin(), result.compiled.end(),
                   [](const CompiledShape& a, const CompiledShape& b) { return a.at_s < b.at_s; });

  // --- Per-request lines. ---
  std::map<int64_t, int64_t> pool_batch;  // decode L -> B_max
  for (const Shape& s : decode_shapes)
    pool_batch[s.length] = std::max(pool_batch[s.length], s.batch);
  result.accepted.reserve(admitted.size());
  for (const Admitted& a : admitted) {
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
    result.accepted.push_back(t);
  }
  return result;
}

}  // namespace systolic::packing
