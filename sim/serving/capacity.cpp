#include "sim/serving/capacity.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/common/error.hpp"

namespace systolic::serving {
namespace {

using json = nlohmann::ordered_json;

// The bracket of the rate search: 2^-30 .. 2^30 times the log's rate.
constexpr int kMaxDoublings = 30;

CapacityPoint point_of(const Summary& s, double rate_factor, int64_t replicas, double target) {
  CapacityPoint p;
  p.rate_factor = rate_factor;
  p.replicas = replicas;
  p.offered_rps = s.offered_rps;
  p.attainment = s.slo_attainment;
  p.ttft_p99_s = s.ttft_s.p99;
  p.tbt_p99_s = s.tbt_mean_s.p99;
  p.goodput_rps = s.goodput_rps;
  p.sustained = s.slo_attainment >= target;
  return p;
}

// Replays at (rate_factor, replicas), keeping the point on `curve`.
CapacityPoint run(const CapacityReplay& replay, const CapacityOptions& o, double rate_factor,
                  int64_t replicas, std::vector<CapacityPoint>& curve) {
  curve.push_back(point_of(replay(rate_factor, replicas), rate_factor, replicas, o.target));
  return curve.back();
}

// Whether attainment, taken along `curve` in order, never moves against `step` (-1: never rises,
// +1: never falls).
bool monotone(const std::vector<CapacityPoint>& curve, int step) {
  for (size_t i = 1; i < curve.size(); ++i)
    if (step * (curve[i].attainment - curve[i - 1].attainment) < 0) return false;
  return true;
}

json point_json(const CapacityPoint& p, int64_t chips_per_replica) {
  return {{"rate_factor", p.rate_factor},
          {"offered_rps", json_number(p.offered_rps)},
          {"replicas", p.replicas},
          {"chips", p.replicas * chips_per_replica},
          {"attainment", p.attainment},
          {"ttft_p99_s", json_number(p.ttft_p99_s)},
          {"tbt_p99_s", json_number(p.tbt_p99_s)},
          {"goodput_rps", json_number(p.goodput_rps)},
          {"sustained", p.sustained}};
}

json maybe_point(const std::optional<CapacityPoint>& p, int64_t chips_per_replica) {
  return p ? point_json(*p, chips_per_replica) : json(nullptr);
}

std::string csv_value(double v) { return std::isfinite(v) ? fmt::format("{:.9g}", v) : ""; }

std::string csv_rows(const char* search, const std::vector<CapacityPoint>& curve, int64_t chips_per_replica) {
  std::string out;
  for (const CapacityPoint& p : curve)
    out += fmt::format("{},{:.9g},{},{},{},{:.9g},{},{},{},{}\n", search, p.rate_factor,
                       csv_value(p.offered_rps), p.replicas, p.replicas * chips_per_replica, p.attainment,
                       csv_value(p.ttft_p99_s), csv_value(p.tbt_p99_s), csv_value(p.goodput_rps),
                       p.sustained ? "true" : "false");
  return out;
}

std::string text(double v) { return std::isfinite(v) ? fmt::format("{:.4g}", v) : "-"; }

std::string format_curve(const std::vector<CapacityPoint>& curve, int64_t chips_per_replica) {
  std::string out =
      fmt::format("{:>10} {:>12} {:>8} {:>6} {:>11} {:>10} {:>10} {:>12}  {}\n", "rate x", "requests/s",
                  "replicas", "chips", "attainment", "TTFT p99", "TBT p99", "goodput r/s", "sustained");
  for (const CapacityPoint& p : curve)
    out +=
        fmt::format("{:>10.4g} {:>12} {:>8} {:>6} {:>10.1f}% {:>10} {:>10} {:>12}  {}\n", p.rate_factor,
                    text(p.offered_rps), p.replicas, p.replicas * chips_per_replica, 100 * p.attainment,
                    text(p.ttft_p99_s), text(p.tbt_p99_s), text(p.goodput_rps), p.sustained ? "yes" : "no");
  return out;
}

std::string slo_text(const CapacityOptions& o) {
  return fmt::format("SLO TTFT <= {:g} s, TBT <= {:g} s, sustained at attainment >= {:g} %", o.slo.ttft_s,
                     o.slo.tbt_s, 100 * o.target);
}

}  // namespace

void validate(const CapacityOptions& o) {
  validate(o.slo);
  if (!(o.target > 0 && o.target <= 1))
    throw InputError(fmt::format(
        "--target {}: expected the SLO attainment that counts as sustained, in (0, 1]", o.target));
  if (!(o.tolerance > 0 && o.tolerance < 1))
    throw InputError(
        fmt::format("--tolerance {}: expected the rate search's relative precision, in (0, 1)", o.tolerance));
  if (o.max_replicas < 1 || o.max_replicas > 4096)
    throw InputError(
        fmt::format("--max-replicas {}: expected a number of replicas in [1, 4096]", o.max_replicas));
}

RateSearch highest_rate(const CapacityReplay& replay, const CapacityOptions& o) {
  validate(o);
  RateSearch out;
  std::optional<CapacityPoint> lo, hi;  // sustained, failed
  const auto take = [&](double f) {
    const CapacityPoint p = run(replay, o, f, 1, out.curve);
    (p.sustained ? lo : hi) = p;
  };
  take(1);
  const double step = lo ? 2.0 : 0.5;  // away from the side already known
  for (int k = 1; k <= kMaxDoublings && !(lo && hi); ++k) take(std::ldexp(1.0, k * (step > 1 ? 1 : -1)));
  while (lo && hi && hi->rate_factor > lo->rate_factor * (1 + o.tolerance))
    take(std::sqrt(lo->rate_factor * hi->rate_factor));
  std::sort(out.curve.begin(), out.curve.end(),
            [](const CapacityPoint& a, const CapacityPoint& b) { return a.rate_factor < b.rate_factor; });
  out.highest = lo;
  out.lowest_failed = hi;
  out.monotone = monotone(out.curve, -1);
  return out;
}

ReplicaSearch fewest_replicas(const CapacityReplay& replay, const CapacityOptions& o, double rate_factor) {
  validate(o);
  ReplicaSearch out;
  std::optional<CapacityPoint> lo, hi;  // failed, sustained
  for (int64_t n = 1; !hi; n = std::min(2 * n, o.max_replicas)) {
    const CapacityPoint p = run(replay, o, rate_factor, n, out.curve);
    (p.sustained ? hi : lo) = p;
    if (n == o.max_replicas) break;
  }
  while (lo && hi && hi->replicas - lo->replicas > 1) {
    const CapacityPoint p = run(replay, o, rate_factor, (lo->replicas + hi->replicas) / 2, out.curve);
    (p.sustained ? hi : lo) = p;
  }
  std::sort(out.curve.begin(), out.curve.end(),
            [](const CapacityPoint& a, const CapacityPoint& b) { return a.replicas < b.replicas; });
  out.fewest = hi;
  out.monotone = monotone(out.curve, +1);
  return out;
}

json rate_json(const RateSearch& s, int64_t chips_per_replica) {
  json curve = json::array();
  for (const CapacityPoint& p : s.curve) curve.push_back(point_json(p, chips_per_replica));
  return {{"highest", maybe_point(s.highest, chips_per_replica)},
          {"lowest_failed", maybe_point(s.lowest_failed, chips_per_replica)},
          {"monotone", s.monotone},
          {"curve", curve}};
}

json replicas_json(const ReplicaSearch& s, int64_t chips_per_replica) {
  json curve = json::array();
  for (const CapacityPoint& p : s.curve) curve.push_back(point_json(p, chips_per_replica));
  return {{"fewest", maybe_point(s.fewest, chips_per_replica)}, {"monotone", s.monotone}, {"curve", curve}};
}

std::string capacity_csv(const RateSearch* rate, const ReplicaSearch* replicas, int64_t chips_per_replica) {
  std::string out =
      "search,rate_factor,offered_rps,replicas,chips,attainment,ttft_p99_s,tbt_p99_s,goodput_rps,"
      "sustained\n";
  if (rate) out += csv_rows("rate", rate->curve, chips_per_replica);
  if (replicas) out += csv_rows("replicas", replicas->curve, chips_per_replica);
  return out;
}

std::string format_rate(const RateSearch& s, const CapacityOptions& o, int64_t chips_per_replica) {
  std::string out = fmt::format("highest rate one replica sustains ({}):\n{}", slo_text(o),
                                format_curve(s.curve, chips_per_replica));
  if (!s.highest)
    out += "answer: no rate tried sustains the SLOs (requests miss them even when they arrive far apart)\n";
  else if (!s.lowest_failed)
    out += fmt::format(
        "answer: every rate tried sustains the SLOs, up to {} requests/s (x{:g} the log's rate)\n",
        text(s.highest->offered_rps), s.highest->rate_factor);
  else
    out += fmt::format(
        "answer: {} requests/s (x{:.4g} the log's rate); {} requests/s (x{:.4g}) is not sustained\n",
        text(s.highest->offered_rps), s.highest->rate_factor, text(s.lowest_failed->offered_rps),
        s.lowest_failed->rate_factor);
  if (!s.monotone)
    out += "note: attainment rises with the rate somewhere on this curve; the answer is one crossing\n";
  return out;
}

std::string format_replicas(const ReplicaSearch& s, const CapacityOptions& o, int64_t chips_per_replica) {
  std::string out = fmt::format("fewest replicas that serve the log ({}):\n{}", slo_text(o),
                                format_curve(s.curve, chips_per_replica));
  if (s.fewest)
    out += fmt::format("answer: {} replica(s), {} chip(s)\n", s.fewest->replicas,
                       s.fewest->replicas * chips_per_replica);
  else
    out += fmt::format("answer: not even {} replicas sustain the SLOs\n", o.max_replicas);
  if (!s.monotone)
    out += "note: attainment falls with more replicas somewhere on this curve; the answer is one crossing\n";
  return out;
}

}  // namespace systolic::serving
