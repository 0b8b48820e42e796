#include "sim/serving/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "models/common/error.hpp"

namespace systolic::serving {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double ratio(double a, double b) { return b > 0 ? a / b : kNaN; }

bool meets(const RequestRecord& r, const Slo& slo) {
  if (!r.served()) return false;
  return r.ttft_s() <= slo.ttft_s && (r.generated_tokens < 2 || r.tbt_mean_s() <= slo.tbt_s);
}

void overload(const ServeResult& result, std::optional<double> capacity_rps, Summary& s) {
  const auto& records = result.records;
  const double span = records.back().arrival_s - records.front().arrival_s;
  s.offered_rps = span > 0 ? static_cast<double>(s.requests - 1) / span : kNaN;
  s.capacity_rps = capacity_rps && *capacity_rps > 0 ? *capacity_rps : kNaN;
  s.load = s.offered_rps / s.capacity_rps;
  s.replicas = std::isfinite(s.load) ? std::max<int64_t>(1, static_cast<int64_t>(std::ceil(s.load))) : 0;
}

[[noreturn]] void conservation_broken(const std::string& what) { throw std::logic_error("serving conservation: " + what); }

void check_outcome(const RequestRecord& r) {
  if (!r.decided) conservation_broken(fmt::format("request {} has no outcome", r.id));
  const bool ok = r.outcome == Outcome::rejected
                      ? r.generated_tokens == 0 && r.prefilled_tokens == 0 && r.reason != Reason::none
                  : r.outcome == Outcome::truncated
                      ? r.generated_tokens == r.target_tokens && r.target_tokens < r.output_tokens &&
                            r.reason != Reason::none
                      : r.generated_tokens == r.output_tokens && r.reason == Reason::none;
  if (!ok)
    conservation_broken(fmt::format("request {}: outcome {} with {} of {} tokens", r.id, kOutcomeNames.name(r.outcome),
                       r.generated_tokens, r.output_tokens));
  if (r.served() &&
      !(r.arrival_s <= r.start_s && r.start_s <= r.first_token_s && r.first_token_s <= r.last_token_s))
    conservation_broken(fmt::format("request {}: times out of order", r.id));
}

// A number of summary_json for the terminal: 4 significant digits, "-" for null (does not exist).
std::string value_text(const nlohmann::ordered_json& v) {
  return v.is_null() ? std::string("-") : fmt::format("{:.4g}", v.get<double>());
}

nlohmann::ordered_json distribution_json(const Distribution& d) {
  return {{"count", d.count},          {"mean", json_number(d.mean)}, {"p50", json_number(d.p50)},
          {"p90", json_number(d.p90)}, {"p99", json_number(d.p99)},   {"max", json_number(d.max)}};
}

// The work table is the same replay: its rows sum to the steps' seconds, energy and tokens.
void check_work_table(const ServeResult& result) {
  const ServeTotals& t = result.totals;
  double seconds = 0, energy = 0;
  int64_t useful = 0, pad = 0;
  for (const ShapeWork& w : result.shapes) {
    seconds += w.seconds, energy += w.energy_pj;
    useful += w.useful_tokens, pad += w.pad_tokens;
    if (w.cells.computed != w.cells.useful + w.cells.cross + w.cells.pad)
      conservation_broken(
          fmt::format("{} row: cells computed != useful + cross + pad", packing::kPhaseNames.name(w.phase)));
  }
  if (std::abs(seconds - t.busy_s) > 1e-9 * std::max(1.0, t.busy_s))
    conservation_broken(fmt::format("the work table's {} s != the busy time {} s", seconds, t.busy_s));
  if (std::abs(energy - t.energy_pj) > 1e-9 * std::max(1.0, t.energy_pj))
    conservation_broken(fmt::format("the work table's {} pJ != the total {} pJ", energy, t.energy_pj));
  if (useful != t.useful || pad != t.pad)
    conservation_broken(fmt::format("the work table holds {} useful + {} pad tokens, the steps computed {} + {}", useful,
                       pad, t.useful, t.pad));
}

}  // namespace

nlohmann::ordered_json json_number(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nullptr;
}

Distribution distribution(std::vector<double> values) {
  Distribution d;
  d.count = static_cast<int64_t>(values.size());
  if (values.empty()) {
    d.mean = d.p50 = d.p90 = d.p99 = d.max = kNaN;
    return d;
  }
  double sum = 0;
  for (const double v : values) sum += v;
  d.mean = sum / static_cast<double>(values.size());
  d.max = *std::max_element(values.begin(), values.end());
  d.p50 = percentile(values, 0.50);
  d.p90 = percentile(values, 0.90);
  d.p99 = percentile(values, 0.99);
  return d;
}

void validate(const Slo& slo) {
  for (const auto& [value, key] : {std::pair{slo.ttft_s, "ttft_s"}, {slo.tbt_s, "tbt_s"}})
    if (!(std::isfinite(value) && value > 0))
      throw InputError(fmt::format("SLO '{}': expected a time in seconds > 0, got {}", key, value));
}

Summary summarize(const ServeResult& result, std::optional<Slo> slo, std::optional<double> capacity_rps) {
  Summary s;
  std::vector<double> queue, ttft, tbt_mean, tbt_max, e2e;
  int64_t generated = 0, meeting = 0;
  for (const RequestRecord& r : result.records) {
    ++s.requests;
    s.served += r.decided && r.outcome == Outcome::served;
    s.truncated += r.decided && r.outcome == Outcome::truncated;
    s.rejected += r.outcome == Outcome::rejected;
    if (slo && meets(r, *slo)) ++meeting;
    if (!r.served()) continue;
    generated += r.generated_tokens;
    queue.push_back(r.queue_s());
    ttft.push_back(r.ttft_s());
    e2e.push_back(r.e2e_s());
    if (r.generated_tokens < 2) continue;
    tbt_mean.push_back(r.tbt_mean_s());
    tbt_max.push_back(r.tbt_max_s);
  }
  s.queue_s = distribution(std::move(queue));
  s.ttft_s = distribution(std::move(ttft));
  s.tbt_mean_s = distribution(std::move(tbt_mean));
  s.tbt_max_s = distribution(std::move(tbt_max));
  s.e2e_s = distribution(std::move(e2e));
  const ServeTotals& t = result.totals;
  s.makespan_s = t.end_s - t.first_arrival_s;
  s.busy_s = t.busy_s;
  s.tokens_per_s = ratio(static_cast<double>(generated), s.makespan_s);
  s.requests_per_s = ratio(static_cast<double>(s.served + s.truncated), s.makespan_s);
  s.pad_fraction = ratio(static_cast<double>(t.pad), static_cast<double>(t.positions));
  if (slo) {
    validate(*slo);
    s.slo = slo;
    s.slo_attainment = static_cast<double>(meeting) / static_cast<double>(s.requests);
    s.goodput_rps = ratio(static_cast<double>(meeting), s.makespan_s);
  }
  if (!result.records.empty()) overload(result, capacity_rps, s);
  return s;
}

nlohmann::ordered_json summary_json(const Summary& s) {
  nlohmann::ordered_json j;
  j["requests"] = {
      {"total", s.requests}, {"served", s.served}, {"truncated", s.truncated}, {"rejected", s.rejected}};
  j["latency_s"] = {{"queue", distribution_json(s.queue_s)},
                    {"ttft", distribution_json(s.ttft_s)},
                    {"tbt_mean", distribution_json(s.tbt_mean_s)},
                    {"tbt_max", distribution_json(s.tbt_max_s)},
                    {"e2e", distribution_json(s.e2e_s)}};
  j["throughput"] = {{"makespan_s", s.makespan_s},
                     {"busy_s", s.busy_s},
                     {"tokens_per_s", json_number(s.tokens_per_s)},
                     {"requests_per_s", json_number(s.requests_per_s)},
                     {"pad_fraction", json_number(s.pad_fraction)}};
  j["slo"] = s.slo ? nlohmann::ordered_json{{"ttft_s", s.slo->ttft_s},
                                            {"tbt_s", s.slo->tbt_s},
                                            {"attainment", s.slo_attainment},
                                            {"goodput_rps", json_number(s.goodput_rps)}}
                   : nlohmann::ordered_json(nullptr);
  j["load"] = {{"offered_rps", json_number(s.offered_rps)},
               {"capacity_rps", json_number(s.capacity_rps)},
               {"load", json_number(s.load)},
               {"replicas", s.replicas > 0 ? nlohmann::ordered_json(s.replicas) : nullptr}};
  return j;
}

std::string format_summary(const Summary& s) { return format_summary(summary_json(s)); }

std::string format_summary(const nlohmann::ordered_json& s) {
  const auto& n = s["requests"];
  std::string out = fmt::format("requests {}: served {}, truncated {}, rejected {}\n", n["total"].get<int64_t>(),
                                n["served"].get<int64_t>(), n["truncated"].get<int64_t>(), n["rejected"].get<int64_t>());
  out += fmt::format("{:<14} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "seconds", "mean", "p50", "p90", "p99", "max");
  for (const auto& [name, key] : {std::pair{"queue", "queue"},
                                  {"TTFT", "ttft"},
                                  {"TBT (mean)", "tbt_mean"},
                                  {"TBT (max gap)", "tbt_max"},
                                  {"end-to-end", "e2e"}}) {
    const auto& d = s["latency_s"][key];
    out += fmt::format("{:<14} {:>10} {:>10} {:>10} {:>10} {:>10}\n", name, value_text(d["mean"]), value_text(d["p50"]),
                       value_text(d["p90"]), value_text(d["p99"]), value_text(d["max"]));
  }
  const auto& t = s["throughput"];
  const auto& pad = t["pad_fraction"];
  out += fmt::format("makespan {:.4g} s, busy {:.4g} s; {} tokens/s, {} requests/s; pad {} % of positions\n",
                     t["makespan_s"].get<double>(), t["busy_s"].get<double>(), value_text(t["tokens_per_s"]),
                     value_text(t["requests_per_s"]),
                     pad.is_null() ? "-" : fmt::format("{:.1f}", 100 * pad.get<double>()));
  if (const auto& slo = s["slo"]; !slo.is_null())
    out += fmt::format("SLO TTFT <= {:g} s, TBT <= {:g} s: attainment {:.1f} %, goodput {} requests/s\n",
                       slo["ttft_s"].get<double>(), slo["tbt_s"].get<double>(),
                       100 * slo["attainment"].get<double>(), value_text(slo["goodput_rps"]));
  const auto& load = s["load"];
  if (load["replicas"].is_null()) return out + "load: unknown (arrivals span no time, or no capacity was measured)\n";
  const auto replicas = load["replicas"].get<int64_t>();
  return out + fmt::format("load: offered {} requests/s vs capacity {} requests/s = {:.2f}x; {} replica{} would keep "
                           "up\n",
                           value_text(load["offered_rps"]), value_text(load["capacity_rps"]),
                           load["load"].get<double>(), replicas, replicas == 1 ? "" : "s");
}

void check_conservation(const ServeResult& result) {
  int64_t useful = 0, pad = 0;
  double energy = 0;
  for (size_t i = 0; i < result.records.size(); ++i) {
    const RequestRecord& r = result.records[i];
    if (r.id != static_cast<int64_t>(i)) conservation_broken(fmt::format("record {} has id {}", i, r.id));
    check_outcome(r);
    useful += r.useful_tokens();
    pad += r.pad_tokens;
    energy += r.energy_pj;
  }
  const ServeTotals& t = result.totals;
  if (t.positions != t.useful + t.pad) conservation_broken("positions computed != useful + pad");
  if (useful != t.useful || pad != t.pad)
    conservation_broken(fmt::format("records hold {} useful + {} pad tokens, the steps computed {} + {}", useful, pad,
                       t.useful, t.pad));
  if (std::abs(energy - t.energy_pj) > 1e-9 * std::max(1.0, t.energy_pj))
    conservation_broken(fmt::format("records' energy {} pJ != total {} pJ", energy, t.energy_pj));
  check_work_table(result);
}

}  // namespace systolic::serving
