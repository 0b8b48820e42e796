#include "sim/serving/replay.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/serving/metrics.hpp"

namespace systolic {
namespace {

using json = nlohmann::ordered_json;

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

json cells_json(const packing::AttentionCells& c) {
  return {{"computed", c.computed}, {"useful", c.useful}, {"cross", c.cross}, {"pad", c.pad}};
}

// One shape's row: what the replay's steps computed in it and what they cost, with the MACs
// wasted on pad tokens and on masked cells over the MACs issued: the token-proportional
// (matmul) share wastes the pad fraction of the token slots, the attention share the pad and
// cross-request fractions of the score cells. Varlen rows compute no pads and no cross cells.
json bucket_row(const serving::ShapeWork& w, ShapeSimulator& sim) {
  const double slots = static_cast<double>(w.useful_tokens + w.pad_tokens);
  const double cells = static_cast<double>(w.cells.computed);
  const ShapeCost c = w.varlen ? ShapeCost{} : sim.cost(w.phase, w.shape);
  const double padding_waste = (1 - c.attention_share) * ratio(static_cast<double>(w.pad_tokens), slots) +
                               c.attention_share * ratio(static_cast<double>(w.cells.pad), cells);
  const double mask_waste = c.attention_share * ratio(static_cast<double>(w.cells.cross), cells);
  return {{"phase", packing::kPhaseNames.name(w.phase)},
          {"shape", w.varlen ? json(nullptr) : json{w.shape.batch, w.shape.length}},
          {"varlen", w.varlen},
          {"runtime_shape", w.runtime_shape},
          {"instances", w.runs},
          {"requests", w.requests},
          {"useful_tokens", w.useful_tokens},
          {"pad_tokens", w.pad_tokens},
          {"fill", ratio(static_cast<double>(w.useful_tokens), slots)},
          {"cells", cells_json(w.cells)},
          {"utilization", w.varlen ? json(nullptr) : json(c.utilization)},
          {"padding_waste", padding_waste},
          {"mask_waste", mask_waste},
          {"seconds_per_instance", w.seconds / static_cast<double>(w.runs)},
          {"seconds", w.seconds},
          {"energy_pj", w.energy_pj},
          {"energy_pj_per_useful_token", ratio(w.energy_pj, static_cast<double>(w.useful_tokens))}};
}

// Sums of the rows (the replay's busy time and energy) and the requests' outcomes.
json totals_json(const json& rows, const serving::ServeResult& result) {
  double seconds = 0, energy = 0;
  int64_t useful = 0, pads = 0;
  for (const json& b : rows) {
    seconds += b["seconds"].get<double>();
    energy += b["energy_pj"].get<double>();
    if (b["phase"] != "prefill") continue;
    useful += b["useful_tokens"].get<int64_t>();
    pads += b["pad_tokens"].get<int64_t>();
  }
  int64_t rejected = 0, truncated = 0;
  for (const serving::RequestRecord& r : result.records) {
    rejected += r.outcome == serving::Outcome::rejected;
    truncated += r.outcome == serving::Outcome::truncated;
  }
  const auto requests = static_cast<int64_t>(result.records.size());
  return {{"requests", requests},
          {"accepted", requests - rejected},
          {"rejected", rejected},
          {"truncated", truncated},
          {"useful_tokens", useful},
          {"pad_tokens", pads},
          {"compiled_shapes", result.totals.compiled_shapes},
          {"compile_stall_s", result.totals.compile_stall_s},
          {"seconds", seconds},
          {"energy_pj", energy},
          {"energy_pj_per_useful_token", ratio(energy, static_cast<double>(useful))}};
}

std::string format_rows(const json& rows) {
  std::string out =
      fmt::format("{:<8} {:>12} {:>9} {:>8} {:>11} {:>10} {:>6} {:>6} {:>7} {:>6} {:>10} {:>10} {:>9}\n", "phase",
                  "shape", "instances", "requests", "useful tok", "pad tok", "fill", "util", "padwst", "mask",
                  "time (s)", "energy (J)", "uJ/token");
  const auto pct = [](const json& v) {
    return v.is_null() ? std::string("-") : fmt::format("{:.1f}%", 100 * v.get<double>());
  };
  const auto shape = [](const json& s) {
    return s.is_null() ? std::string("varlen")
                       : fmt::format("{}x{}", s[0].get<int64_t>(), s[1].get<int64_t>());
  };
  for (const auto& b : rows)
    out += fmt::format(
        "{:<8} {:>12} {:>9} {:>8} {:>11} {:>10} {:>6} {:>6} {:>7} {:>6} {:>10.4f} {:>10.4f} {:>9.2f}\n",
        b["phase"].get<std::string>(), shape(b["shape"]), b["instances"].get<int64_t>(),
        b["requests"].get<int64_t>(), b["useful_tokens"].get<int64_t>(), b["pad_tokens"].get<int64_t>(),
        pct(b["fill"]), pct(b["utilization"]), pct(b["padding_waste"]), pct(b["mask_waste"]),
        b["seconds"].get<double>(), b["energy_pj"].get<double>() * 1e-12,
        b["energy_pj_per_useful_token"].get<double>() * 1e-6);
  return out;
}

std::string format_tax(const json& t) {
  return fmt::format("static-shape tax against {} on the same log (bucket set {}): {:+.1f}% time (busy {:.1f} s vs "
                     "{:.1f} s), {:+.1f}% energy ({:.1f} kJ vs {:.1f} kJ)\n",
                     t["baseline"].get<std::string>(), t["baseline_bucket_set"].get<std::string>(),
                     100 * t["time"].get<double>(), t["busy_s"].get<double>(), t["baseline_busy_s"].get<double>(),
                     100 * t["energy"].get<double>(), t["energy_pj"].get<double>() * 1e-15,
                     t["baseline_energy_pj"].get<double>() * 1e-15);
}

}  // namespace

json work_table(ShapeSimulator& sim, const packing::RequestLog& log, const packing::BucketSet& buckets,
                const serving::ServeResult& result) {
  json rows = json::array();
  for (const serving::ShapeWork& w : result.shapes) rows.push_back(bucket_row(w, sim));
  json out;
  out["bucket_set"] = buckets.name;
  out["bucket_file"] = buckets.path;
  out["buckets"] = rows;
  out["totals"] = totals_json(rows, result);
  json rejected = json::array();
  for (const serving::RequestRecord& r : result.records)
    if (r.outcome == serving::Outcome::rejected)
      rejected.push_back({{"request", r.id},
                          {"line", log.requests[static_cast<size_t>(r.id)].line},
                          {"reason", serving::kReasonNames.name(r.reason)}});
  out["rejected_requests"] = std::move(rejected);
  return out;
}

std::string format_replay(const json& r) {
  std::string out = fmt::format("bucket set {} ({})\n", r["bucket_set"].get<std::string>(),
                                r["bucket_file"].get<std::string>());
  out += format_rows(r["buckets"]);
  const auto& t = r["totals"];
  out += fmt::format("total: {} requests ({} rejected, {} truncated), {} useful + {} pad prompt tokens, {:.3f} s, "
                     "{:.3f} J, {:.2f} uJ per useful prompt token\n",
                     t["requests"].get<int64_t>(), t["rejected"].get<int64_t>(), t["truncated"].get<int64_t>(),
                     t["useful_tokens"].get<int64_t>(), t["pad_tokens"].get<int64_t>(), t["seconds"].get<double>(),
                     t["energy_pj"].get<double>() * 1e-12, t["energy_pj_per_useful_token"].get<double>() * 1e-6);
  if (t["compiled_shapes"].get<int64_t>() > 0)
    out += fmt::format("compiled during the replay: {} prefill shape(s), steps waiting {:.3f} s for them\n",
                       t["compiled_shapes"].get<int64_t>(), t["compile_stall_s"].get<double>());
  if (r.contains("tax")) out += format_tax(r["tax"]);
  if (r.contains("serving"))
    out += fmt::format("serving: scheduler {}\n{}", r["serving"]["scheduler"].get<std::string>(),
                       serving::format_summary(r["serving"]));
  return out;
}

}  // namespace systolic
