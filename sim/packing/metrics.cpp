#include "sim/packing/metrics.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "sim/common/percentile.hpp"
#include "sim/packing/detail.hpp"

namespace systolic::packing {
namespace {

using detail::checked_add;
using detail::checked_mul;

double ratio(int64_t a, int64_t b) {
  return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b);
}

void finish(PhaseTotals& t) { t.fill = ratio(t.useful_tokens, t.useful_tokens + t.pad_tokens); }

}  // namespace

double AttentionCells::masked_fraction() const { return ratio(masked(), computed); }

AttentionCells& AttentionCells::operator+=(const AttentionCells& c) {
  computed = checked_add(computed, c.computed, "attention cells");
  useful = checked_add(useful, c.useful, "attention cells");
  cross = checked_add(cross, c.cross, "attention cells");
  pad = checked_add(pad, c.pad, "attention cells");
  return *this;
}

int64_t pad_tokens(const Lane& lane, int64_t length) { return length - lane.used(); }

int64_t useful_tokens(const BucketInstance& instance) {
  int64_t n = 0;
  for (const Lane& lane : instance.lanes) n += lane.used();
  return n;
}

int64_t pad_tokens(const BucketInstance& instance) {
  return instance.shape.batch * instance.shape.length - useful_tokens(instance);
}

double pad_fraction(const BucketInstance& instance) {
  return ratio(pad_tokens(instance), instance.shape.batch * instance.shape.length);
}

double fill(const BucketInstance& instance) {
  return ratio(useful_tokens(instance), instance.shape.batch * instance.shape.length);
}

AttentionCells attention_cells(const Lane& lane, int64_t length) {
  AttentionCells c;
  const int64_t used = lane.used();
  c.computed = length * length;
  for (const Segment& s : lane.segments) c.useful += s.tokens * s.tokens;
  c.cross = used * used - c.useful;
  c.pad = c.computed - used * used;
  return c;
}

AttentionCells attention_cells(const BucketInstance& instance) {
  AttentionCells c;
  for (const Lane& lane : instance.lanes) c += attention_cells(lane, instance.shape.length);
  // Lanes beyond lanes.size() (none when built by the packer) would be all pad.
  const int64_t missing = instance.shape.batch - static_cast<int64_t>(instance.lanes.size());
  if (missing > 0) {
    const int64_t cells = checked_mul(missing, instance.shape.length * instance.shape.length,
                                      "attention cells");
    c.computed = checked_add(c.computed, cells, "attention cells");
    c.pad = checked_add(c.pad, cells, "attention cells");
  }
  return c;
}

namespace {

// One row per prefill shape, added to the prefill totals.
void add_prefill_rows(const PackResult& r, Summary& s) {
  struct Acc {
    ShapeSummary row;
    std::unordered_set<int64_t> requests;
  };
  std::map<Shape, Acc> prefill;
  for (const BucketInstance& inst : r.prefill) {
    Acc& a = prefill[inst.shape];
    a.row.phase = Phase::prefill;
    a.row.shape = inst.shape;
    a.row.runtime_shape = inst.runtime_shape;
    a.row.runs += 1;
    const int64_t useful = useful_tokens(inst);
    a.row.useful_tokens = checked_add(a.row.useful_tokens, useful, "prefill tokens");
    a.row.pad_tokens = checked_add(a.row.pad_tokens, pad_tokens(inst), "prefill tokens");
    a.row.cells += attention_cells(inst);
    for (const Lane& lane : inst.lanes) {
      a.row.segments += static_cast<int64_t>(lane.segments.size());
      for (const Segment& seg : lane.segments) a.requests.insert(seg.request_id);
    }
  }
  for (auto& [shape, a] : prefill) {
    a.row.requests = static_cast<int64_t>(a.requests.size());
    a.row.fill = ratio(a.row.useful_tokens, a.row.useful_tokens + a.row.pad_tokens);
    s.prefill.runs += a.row.runs;
    s.prefill.useful_tokens += a.row.useful_tokens;
    s.prefill.pad_tokens += a.row.pad_tokens;
    s.prefill.cells += a.row.cells;
    s.shapes.push_back(a.row);
  }

}

// One row per decode shape (already one entry per shape), sorted by length then batch, added to
// the decode totals.
void add_decode_rows(const PackResult& r, Summary& s) {
  std::vector<DecodeShapeStats> decode = r.decode;
  std::stable_sort(decode.begin(), decode.end(),
                   [](const DecodeShapeStats& a, const DecodeShapeStats& b) { return a.shape < b.shape; });
  for (const DecodeShapeStats& d : decode) {
    ShapeSummary row;
    row.phase = Phase::decode;
    row.shape = d.shape;
    row.runtime_shape = d.runtime_shape;
    row.runs = d.steps;
    row.requests = d.requests;
    row.useful_tokens = d.occupied_slot_steps;
    row.pad_tokens = d.empty_slot_steps;
    row.fill = ratio(row.useful_tokens, row.useful_tokens + row.pad_tokens);
    row.cells.computed = d.kv_capacity;
    row.cells.useful = d.kv_used;
    row.cells.pad = d.kv_capacity - d.kv_used;
    s.decode.runs += row.runs;
    s.decode.useful_tokens += row.useful_tokens;
    s.decode.pad_tokens += row.pad_tokens;
    s.decode.cells += row.cells;
    s.shapes.push_back(row);
  }
}

// The varlen ideal, the split accounting and the packing delays, from the accepted requests.
void add_ideal(const PackResult& r, Summary& s) {
  std::unordered_map<int64_t, int64_t> chunk_squares;  // split request -> sum chunk^2
  for (const BucketInstance& inst : r.prefill)
    for (const Lane& lane : inst.lanes)
      for (const Segment& seg : lane.segments)
        if (seg.chunks > 1) chunk_squares[seg.request_id] += seg.tokens * seg.tokens;
  std::vector<double> waits;
  waits.reserve(r.accepted.size());
  for (const RequestTiming& t : r.accepted) {
    const int64_t p = t.prompt_tokens;
    const int64_t g = t.generated_tokens - 1;  // decode steps: prefill produced the first token
    s.prefill.ideal_tokens += p;
    s.prefill.ideal_cells = checked_add(s.prefill.ideal_cells, p * p, "attention cells");
    s.decode.ideal_tokens += g;
    // sum over steps k = 0..g-1 of (p + k + 1): step k feeds token k and attends to the prompt
    // and tokens 0..k
    s.decode.ideal_cells =
        checked_add(s.decode.ideal_cells, checked_mul(g, p, "decode cells") + g * (g + 1) / 2,
                    "decode cells");
    if (t.chunks > 1) {
      s.chunks += t.chunks;
      s.split_cross_cells += p * p - chunk_squares[t.request_id];
    }
    waits.push_back(t.prefill_dispatch_s - t.arrival_s);
  }
  std::sort(waits.begin(), waits.end());
  if (!waits.empty()) {
    double sum = 0;
    for (double w : waits) sum += w;
    s.wait.mean = sum / static_cast<double>(waits.size());
    s.wait.p50 = percentile(waits, 0.50);
    s.wait.p99 = percentile(waits, 0.99);
    s.wait.max = waits.back();
  }
}

}  // namespace

Summary summarize(const PackResult& r) {
  Summary s;
  s.bucket_set = r.bucket_set;
  s.packer = r.options.packer;
  s.window_ms = r.options.window_ms;
  s.overflow = r.options.overflow;
  s.compile_new_shapes = r.options.compile_new_shapes;
  s.requests = r.requests;
  s.accepted = static_cast<int64_t>(r.accepted.size());
  s.rejected = static_cast<int64_t>(r.rejected.size());
  for (const Rejection& x : r.rejected)
    (x.phase == Phase::prefill ? s.rejected_prefill : s.rejected_decode) += 1;
  s.split = static_cast<int64_t>(r.split.size());
  s.truncated = static_cast<int64_t>(r.truncated.size());
  for (const Truncation& t : r.truncated) s.truncated_tokens += t.dropped_tokens;
  s.compiled_shapes = static_cast<int64_t>(r.compiled.size());
  s.compile_stall_s = r.compile_stall_s;
  s.windows = r.windows;

  add_prefill_rows(r, s);
  add_decode_rows(r, s);
  finish(s.prefill);
  finish(s.decode);

  add_ideal(r, s);
  return s;
}

namespace {

nlohmann::ordered_json cells_summary_json(const AttentionCells& c) {
  return {{"computed", c.computed},   {"useful", c.useful},
          {"masked", c.masked()},     {"masked_fraction", c.masked_fraction()},
          {"cross", c.cross},         {"pad", c.pad}};
}

nlohmann::ordered_json totals_json(const PhaseTotals& t) {
  return {{"runs", t.runs},
          {"useful_tokens", t.useful_tokens},
          {"pad_tokens", t.pad_tokens},
          {"fill", t.fill},
          {"cells", cells_summary_json(t.cells)},
          {"varlen_ideal", {{"tokens", t.ideal_tokens}, {"cells", t.ideal_cells}}}};
}

}  // namespace

nlohmann::ordered_json to_json(const Summary& s) {
  nlohmann::ordered_json j;
  j["packing_schema"] = kPackingSchemaVersion;
  j["bucket_set"] = s.bucket_set;
  j["packer"] = s.packer;
  j["window_ms"] = s.window_ms;
  j["overflow"] = kOverflowNames.name(s.overflow);
  j["compile_new_shapes"] = s.compile_new_shapes;
  j["decode_timing"] = "backlogged";  // when tokens come out: the serving engine's report
  j["requests"] = {{"given", s.requests},
                   {"accepted", s.accepted},
                   {"rejected", s.rejected},
                   {"rejected_prefill", s.rejected_prefill},
                   {"rejected_decode", s.rejected_decode},
                   {"split", s.split},
                   {"chunks", s.chunks},
                   {"truncated", s.truncated},
                   {"truncated_tokens", s.truncated_tokens}};
  j["windows"] = s.windows;
  j["compiled_shapes"] = s.compiled_shapes;
  j["compile_stall_s"] = s.compile_stall_s;
  j["prefill_wait_s"] = {{"mean", s.wait.mean}, {"p50", s.wait.p50}, {"p99", s.wait.p99},
                         {"max", s.wait.max}};
  auto shapes = nlohmann::ordered_json::array();
  for (const ShapeSummary& r : s.shapes) {
    nlohmann::ordered_json row;
    row["phase"] = kPhaseNames.name(r.phase);
    row["shape"] = {r.shape.batch, r.shape.length};
    row["runtime_shape"] = r.runtime_shape;
    row["runs"] = r.runs;
    row["requests"] = r.requests;
    if (r.phase == Phase::prefill) row["segments"] = r.segments;
    row["useful_tokens"] = r.useful_tokens;
    row["pad_tokens"] = r.pad_tokens;
    row["fill"] = r.fill;
    row["cells"] = cells_summary_json(r.cells);
    shapes.push_back(row);
  }
  j["shapes"] = shapes;
  j["prefill"] = totals_json(s.prefill);
  j["prefill"]["split_cross_cells"] = s.split_cross_cells;
  j["decode"] = totals_json(s.decode);
  return j;
}

nlohmann::ordered_json instances_to_json(const PackResult& r) {
  auto out = nlohmann::ordered_json::array();
  for (const BucketInstance& inst : r.prefill) {
    auto lanes = nlohmann::ordered_json::array();
    for (const Lane& lane : inst.lanes) {
      auto segs = nlohmann::ordered_json::array();
      for (const Segment& s : lane.segments) segs.push_back({s.request_id, s.tokens});
      lanes.push_back(segs);
    }
    out.push_back({{"window", inst.window},
                   {"dispatch_s", inst.dispatch_s},
                   {"shape", {inst.shape.batch, inst.shape.length}},
                   {"runtime_shape", inst.runtime_shape},
                   {"lanes", lanes}});
  }
  return out;
}

std::string format_summary(const Summary& s) {
  std::string out = fmt::format(
      "bucket set '{}', packer {}, window {} ms, overflow {}{}; decode backlogged (a freed slot is "
      "refilled at once)\n",
      s.bucket_set, s.packer, s.window_ms, kOverflowNames.name(s.overflow),
      s.compile_new_shapes ? ", compiles new shapes" : "");
  out += fmt::format(
      "requests {}: accepted {}, rejected {} (prefill {}, decode {}), split {} into {} chunks, "
      "truncated {} ({} tokens); windows {}; compiled {} shapes, stall {:.1f} s\n",
      s.requests, s.accepted, s.rejected, s.rejected_prefill, s.rejected_decode, s.split,
      s.chunks, s.truncated, s.truncated_tokens, s.windows, s.compiled_shapes, s.compile_stall_s);
  out += fmt::format("{:<8} {:>14} {:>9} {:>9} {:>14} {:>14} {:>7} {:>9}\n", "phase", "shape",
                     "runs", "requests", "useful tok", "pad tok", "fill", "masked");
  for (const ShapeSummary& r : s.shapes)
    out += fmt::format("{:<8} {:>14} {:>9} {:>9} {:>14} {:>14} {:>6.1f}% {:>8.1f}%\n",
                       kPhaseNames.name(r.phase), to_string(r.shape) + (r.runtime_shape ? "*" : ""),
                       r.runs, r.requests, r.useful_tokens, r.pad_tokens, 100 * r.fill,
                       100 * r.cells.masked_fraction());
  for (const auto* t : {&s.prefill, &s.decode}) {
    const bool pre = t == &s.prefill;
    out += fmt::format(
        "{:<8} {:>14} {:>9} {:>9} {:>14} {:>14} {:>6.1f}% {:>8.1f}%   cells {} of {} useful; "
        "varlen ideal {} tokens, {} cells\n",
        pre ? "prefill" : "decode", "total", t->runs, "", t->useful_tokens, t->pad_tokens,
        100 * t->fill, 100 * t->cells.masked_fraction(), t->cells.useful, t->cells.computed,
        t->ideal_tokens, t->ideal_cells);
  }
  out += fmt::format("prefill wait (dispatch - arrival): mean {:.3f} s, p50 {:.3f} s, p99 {:.3f} s, "
                     "max {:.3f} s\n",
                     s.wait.mean, s.wait.p50, s.wait.p99, s.wait.max);
  if (s.compiled_shapes > 0) out += "* compiled at run time\n";
  return out;
}

}  // namespace systolic::packing
