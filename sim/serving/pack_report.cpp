#include "sim/serving/pack_report.hpp"
#include "sim/common/json_optional.hpp"

#include <fmt/format.h>

#include "sim/config/config.hpp"
#include "sim/packing/lane_view.hpp"
#include "sim/report/report.hpp"
#include "sim/serving/metrics.hpp"
#include "sim/serving/replay.hpp"
#include "sim/serving/replicas.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/serving/simulated_cost.hpp"

namespace systolic {
namespace {

using json = nlohmann::ordered_json;

constexpr const char* kBaselineScheduler = "dynamic";  // the static-shape tax's baseline

json kv_json(const serving::ServeOptions& o) {
  return {{"bytes_per_token", o.kv_bytes_per_token},
          {"capacity_bytes", o.kv_capacity_bytes},
          {"link_bytes_per_s", o.kv_link_bytes_per_s}};
}

// disaggregated's pool sizes (null for the other schedulers, which run on one pool).
json pools_json(const std::string& scheduler, const serving::ServeOptions& o) {
  if (scheduler != "disaggregated") return nullptr;
  return {{"prefill_chips", o.prefill_chips}, {"decode_chips", o.decode_chips}};
}

// Chrome trace events of a serving replay (process `pid`): per request, its prefill (first
// step holding it to its first token) and its decode (first token to last), on the track of
// its decode slot, in microseconds of replayed time.
void add_timeline(const serving::ServeResult& result, const std::string& set, int pid, json& timeline) {
  auto& events = timeline["traceEvents"];
  events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid},
                    {"args", {{"name", fmt::format("bucket set {} ({})", set, result.scheduler)}}}});
  for (const serving::RequestRecord& r : result.records) {
    if (!r.served()) continue;
    // Whole microseconds: rounding each end (not the duration) keeps back-to-back slices from overlapping.
    const auto us = [](double s) { return std::llround(s * 1e6); };
    const auto slice = [&](const char* what, double from, double to) {
      events.push_back({{"ph", "X"}, {"pid", pid}, {"tid", r.slot + 1}, {"name", fmt::format("{} {}", what, r.id)},
                        {"ts", us(from)}, {"dur", us(to) - us(from)},
                        {"args", {{"request", r.id}, {"prompt_tokens", r.prompt_tokens},
                                  {"generated_tokens", r.generated_tokens}}}});
    };
    slice("prefill", r.start_s, r.first_token_s);
    if (r.generated_tokens > 1) slice("decode", r.first_token_s, r.last_token_s);
  }
}

// The static-shape tax of `served` against the baseline: busy time and energy over the
// baseline's, minus 1 (docs/serving.md, "The static-shape tax").
json tax_json(const serving::ServeResult& served, const serving::ServeResult& baseline, const std::string& base_set) {
  const auto& t = served.totals;
  const auto& b = baseline.totals;
  return {{"baseline", baseline.scheduler},
          {"baseline_bucket_set", base_set},
          {"busy_s", t.busy_s},
          {"baseline_busy_s", b.busy_s},
          {"energy_pj", t.energy_pj},
          {"baseline_energy_pj", b.energy_pj},
          {"time", t.busy_s / b.busy_s - 1},
          {"energy", t.energy_pj / b.energy_pj - 1}};
}

json report_header(const ChipConfig& config, const PackRequest& r, const ServingSetup& setup) {
  json report;
  report["schema_version"] = kReportSchemaVersion;
  report["pack_schema"] = kPackSchemaVersion;
  report["generator"] = fmt::format("systolic {}", SYSTOLIC_VERSION);
  report["config"] = config_to_json(config);
  report["memory_timing"] = memory_timing(config);
  report["model"] = r.model;
  report["requests"] = {
      {"path", r.requests}, {"count", setup.log.requests.size()}, {"skipped_lines", setup.log.skipped_lines}};
  report["policy"] = {{"packer", r.packer},
                      {"window_ms", r.window_ms},
                      {"overflow", r.overflow},
                      {"compile_new_shapes", r.compile_new_shapes},
                      {"compile_stall_s", r.compile_stall_s},
                      {"scheduler", r.scheduler},
                      {"replicas", setup.replicas},
                      {"tp", setup.tp},
                      {"router", r.router},
                      {"rate_scale", r.rate_scale},
                      {"poisson_qps", r.poisson_qps},
                      {"poisson_requests", r.poisson_requests},
                      {"seed", r.seed}};
  return report;
}

// The log of `setup` served through r.scheduler for every bucket set, its shapes from `sim`.
PackOutput serve_all_sets(const ChipConfig& config, const PackRequest& r, const ServingSetup& setup,
                          ShapeSimulator& sim, bool with_timeline, bool with_lanes) {
  const packing::RequestLog& log = setup.log;
  const std::vector<serving::ServeOptions>& serve = setup.serve;
  const serving::Router& router = *setup.router;
  PackOutput out;
  out.warnings = setup.warnings;
  if (with_timeline)
    out.timeline = {{"traceEvents", json::array()},
                    {"otherData", {{"generator", fmt::format("systolic {}", SYSTOLIC_VERSION)},
                                   {"time_unit", "1 trace us = 1 us of replayed time"}}}};

  const serving::SimulatedStepCost cost = simulated_step_cost(sim, config, serve[0]);
  // One baseline for every set: `dynamic` with the first set's slot count, prefill batch and
  // KV budget (no shape constraint: the packer and the bucket lengths do not touch it).
  const serving::ServeResult baseline =
      serving::serve_replicas(log, kBaselineScheduler, cost, serve[0], setup.replicas, router);
  json replays = json::array();
  for (size_t i = 0; i < serve.size(); ++i) {
    serving::ServeOptions options = serve[i];
    options.record_lanes = with_lanes && i == 0;  // the lane view is the first set's
    serving::ServeResult result =
        serving::serve_replicas(log, r.scheduler, cost, options, setup.replicas, router);
    json rep = work_table(sim, log, serve[i].buckets, result);
    rep["tax"] = tax_json(result, baseline, serve[0].buckets.name);
    // One replica's capacity: the overload line then says how many replicas would keep up.
    const double capacity = serving::backlogged_capacity(log, r.scheduler, cost, serve[i]);
    rep["serving"] = {{"scheduler", r.scheduler}, {"replicas", setup.replicas},
                      {"tp", setup.tp},           {"chips", setup.replicas * setup.chips_per_replica},
                      {"router", r.router},       {"pools", pools_json(r.scheduler, serve[i])},
                      {"kv", kv_json(serve[i])}};
    rep["serving"].update(serving::summary_json(serving::summarize(result, setup.slo, capacity)));
    if (with_timeline) add_timeline(result, serve[i].buckets.name, static_cast<int>(i), out.timeline);
    if (options.record_lanes)
      out.lanes =
          packing::lanes_json({serve[i].buckets.name, setup.pack.packer, setup.pack.window_ms}, result.lanes);
    result.lanes.clear();
    out.serving.push_back(std::move(result));
    replays.push_back(std::move(rep));
  }
  out.report = report_header(config, r, setup);
  // The first bucket set's results at the top level; every set (the first included) in
  // `replays`, for side-by-side comparison.
  for (const char* k : {"buckets", "totals", "tax", "serving"}) out.report[k] = replays[0][k];
  out.report["replays"] = replays;
  out.report["shapes_simulated"] = sim.simulated();
  return out;
}

// Starts simulating the shapes every variant may need, before the first replay asks for one.
void simulate_ahead(const ChipConfig& config, const std::vector<PackRequest>& variants,
                    const std::vector<ServingSetup>& setups, ShapeSimulator& sim) {
  if (variants[0].jobs <= 1) return;
  const serving::SimulatedStepCost cost = simulated_step_cost(sim, config, setups[0].serve[0]);
  std::vector<serving::StepShape> shapes;
  for (size_t i = 0; i < variants.size(); ++i)
    for (const serving::StepShape& s : shapes_ahead(setups[i], variants[i].scheduler, &cost))
      shapes.push_back(s);
  sim.ahead(std::move(shapes), variants[0].jobs);
}

}  // namespace

PackOutput pack_report(const ChipConfig& config, const PackRequest& r, bool with_timeline, bool with_lanes) {
  // Everything is read and checked before anything is simulated.
  const std::vector<ServingSetup> setups{prepare_serving(config, r)};
  ShapeSimulator sim(setups[0].replica, r.model, setups[0].tp);
  simulate_ahead(config, {r}, setups, sim);
  return serve_all_sets(config, r, setups[0], sim, with_timeline, with_lanes);
}

std::vector<PackOutput> pack_compare(const ChipConfig& config, const std::vector<PackRequest>& variants,
                                     bool with_timeline, bool with_lanes) {
  std::vector<ServingSetup> setups;
  for (const PackRequest& v : variants) setups.push_back(prepare_serving(config, v));
  // The variants differ only by scheduler and packer: one replica, so one cache of simulated shapes.
  ShapeSimulator sim(setups[0].replica, variants[0].model, setups[0].tp);
  simulate_ahead(config, variants, setups, sim);
  std::vector<PackOutput> out;
  for (size_t i = 0; i < setups.size(); ++i)
    out.push_back(serve_all_sets(config, variants[i], setups[i], sim, with_timeline, with_lanes));
  return out;
}

}  // namespace systolic
