#include "sim/serving/replay.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/packing/metrics.hpp"
#include "sim/serving/metrics.hpp"

namespace systolic {
namespace {

using json = nlohmann::ordered_json;

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

// One shape's row: its counts, the simulated cost of one instance times how often it ran, and
// the MACs wasted on pad tokens and on masked cells over the MACs issued: the
// token-proportional (matmul) share wastes the pad fraction of the token slots, the attention
// share the pad and cross-request fractions of the score cells.
json bucket_row(const packing::ShapeSummary& s, const ShapeCost& c) {
  const double slots = static_cast<double>(s.useful_tokens + s.pad_tokens);
  const double cells = static_cast<double>(s.cells.computed);
  const double padding_waste = (1 - c.attention_share) * ratio(static_cast<double>(s.pad_tokens), slots) +
                               c.attention_share * ratio(static_cast<double>(s.cells.pad), cells);
  const double mask_waste = c.attention_share * ratio(static_cast<double>(s.cells.cross), cells);
  const double t = static_cast<double>(s.runs) * c.seconds, e = static_cast<double>(s.runs) * c.energy_pj;
  return {{"phase", packing::kPhaseNames.name(s.phase)},
          {"shape", {s.shape.batch, s.shape.length}},
          {"runtime_shape", s.runtime_shape},
          {"instances", s.runs},
          {"requests", s.requests},
          {"useful_tokens", s.useful_tokens},
          {"pad_tokens", s.pad_tokens},
          {"fill", s.fill},
          {"utilization", c.utilization},
          {"padding_waste", padding_waste},
          {"mask_waste", mask_waste},
          {"seconds_per_instance", c.seconds},
          {"seconds", t},
          {"energy_pj", e},
          {"energy_pj_per_useful_token", ratio(e, static_cast<double>(s.useful_tokens))}};
}

// Sums of the rows: the set's work in time and energy.
void add_totals(const json& rows, const packing::Summary& summary, json& out) {
  double seconds = summary.compile_stall_s, energy = 0;
  int64_t useful = 0, pads = 0;
  for (const json& b : rows) {
    seconds += b["seconds"].get<double>();
    energy += b["energy_pj"].get<double>();
    if (b["phase"] != "prefill") continue;
    useful += b["useful_tokens"].get<int64_t>();
    pads += b["pad_tokens"].get<int64_t>();
  }
  out["totals"] = {{"requests", summary.requests},
                   {"accepted", summary.accepted},
                   {"rejected", summary.rejected},
                   {"truncated", summary.truncated},
                   {"useful_tokens", useful},
                   {"pad_tokens", pads},
                   {"compile_stall_s", summary.compile_stall_s},
                   {"seconds", seconds},
                   {"energy_pj", energy},
                   {"energy_pj_per_useful_token", ratio(energy, static_cast<double>(useful))}};
}

std::string format_rows(const json& rows) {
  std::string out =
      fmt::format("{:<8} {:>12} {:>9} {:>8} {:>11} {:>10} {:>6} {:>6} {:>7} {:>6} {:>10} {:>10} {:>9}\n", "phase",
                  "shape", "instances", "requests", "useful tok", "pad tok", "fill", "util", "padwst", "mask",
                  "time (s)", "energy (J)", "uJ/token");
  const auto pct = [](double v) { return fmt::format("{:.1f}%", 100 * v); };
  for (const auto& b : rows)
    out += fmt::format("{:<8} {:>12} {:>9} {:>8} {:>11} {:>10} {:>6} {:>6} {:>7} {:>6} {:>10.4f} {:>10.4f} {:>9.2f}\n",
                       b["phase"].get<std::string>(),
                       fmt::format("{}x{}", b["shape"][0].get<int64_t>(), b["shape"][1].get<int64_t>()),
                       b["instances"].get<int64_t>(), b["requests"].get<int64_t>(),
                       b["useful_tokens"].get<int64_t>(), b["pad_tokens"].get<int64_t>(),
                       pct(b["fill"].get<double>()), pct(b["utilization"].get<double>()),
                       pct(b["padding_waste"].get<double>()), pct(b["mask_waste"].get<double>()),
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

json replay(ShapeSimulator& sim, const packing::RequestLog& log, const packing::BucketSet& buckets,
            const packing::PackOptions& options) {
  const packing::PackResult result = packing::pack(log.requests, buckets, options);
  const packing::Summary summary = packing::summarize(result);
  json rows = json::array();
  for (const auto& s : summary.shapes) rows.push_back(bucket_row(s, sim.cost(s.phase, s.shape)));
  json out;
  out["bucket_set"] = buckets.name;
  out["bucket_file"] = buckets.path;
  out["buckets"] = rows;
  add_totals(rows, summary, out);
  json rejected = json::array();
  for (const auto& r : result.rejected)
    rejected.push_back({{"request", r.request_id}, {"line", r.line}, {"reason", r.reason}});
  out["rejected_requests"] = std::move(rejected);
  out["packing"] = packing::to_json(summary);
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
  if (r.contains("tax")) out += format_tax(r["tax"]);
  if (r.contains("serving"))
    out += fmt::format("serving: scheduler {}\n{}", r["serving"]["scheduler"].get<std::string>(),
                       serving::format_summary(r["serving"]));
  return out;
}

}  // namespace systolic
