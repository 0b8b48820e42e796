#include "sim/serving/pack_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/common/error.hpp"
#include "sim/compile/capacity.hpp"
#include "sim/config/config.hpp"
#include "sim/packing/bin_packer.hpp"
#include "sim/report/report.hpp"
#include "sim/serving/arrivals.hpp"
#include "sim/serving/metrics.hpp"
#include "sim/serving/replay.hpp"
#include "sim/serving/replicas.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/serving/simulated_cost.hpp"
#include "sim/workload/transformer/model.hpp"

namespace systolic {
namespace {

using json = nlohmann::ordered_json;

constexpr const char* kBaselineScheduler = "dynamic";  // the static-shape tax's baseline

// The replay times every shape on one chip; a multi-chip config would report one chip's time
// as the system's. Refused until pack learns --tp.
void require_single_chip(const ChipConfig& config) {
  if (config.ici.topology == IciTopologyKind::none) return;
  throw InputError(fmt::format("{}: ici.topology = {} makes a {}-chip system; pack replays on one chip and has no "
                               "--tp yet: expected a single-chip config (ici.topology: none)",
                               config.source, kIciTopologyNames.name(config.ici.topology), config.ici.chips()));
}

std::optional<serving::Slo> slo_of(const PackRequest& r) {
  for (const auto& [value, flag] : {std::pair{r.slo_ttft_s, "--slo-ttft"}, {r.slo_tbt_s, "--slo-tbt"}})
    if (value && !(std::isfinite(*value) && *value > 0))
      throw InputError(fmt::format("{} {}: expected a time in seconds > 0", flag, *value));
  if (r.slo_ttft_s.has_value() != r.slo_tbt_s.has_value())
    throw InputError("--slo-ttft and --slo-tbt: expected both (a request meets the SLO when its time to first token "
                     "and its mean time between tokens are within them), got only one");
  if (!r.slo_ttft_s) return std::nullopt;
  return serving::Slo{*r.slo_ttft_s, *r.slo_tbt_s};
}

void validate_counts(const PackRequest& r) {
  serving::validate_replicas(r.replicas);
  if (r.chunk_tokens < 1)
    throw InputError(fmt::format("--chunk-tokens {}: expected prompt tokens per step >= 1", r.chunk_tokens));
}

packing::PackOptions pack_options(const ChipConfig& config, const PackRequest& r) {
  packing::PackOptions options;
  options.packer = packing::packer_name(r.packer, "--policy");
  options.window_ms = r.window_ms;
  const auto overflow = packing::kOverflowNames.parse(r.overflow);
  if (!overflow)
    throw InputError(fmt::format("--overflow '{}': expected {}{}", r.overflow, packing::kOverflowNames.choices(" or "),
                                 packing::kOverflowNames.suggest(r.overflow)));
  options.overflow = *overflow;
  options.compile_new_shapes = r.compile_new_shapes;
  options.compile_stall_s = r.compile_stall_s;
  options.compile_granule = packing::array_tile(config.mxu.rows, config.mxu.cols);
  packing::validate(options);
  return options;
}

// Lowers the model at every prefill and decode shape of the set; each must hold the model
// (weights, its KV cache, activations) in the chip's HBM, else InputError naming the bucket
// (sim/compile/capacity.hpp). Returns the serving options of the set, their KV budget from the
// same layouts: bytes per token = the longest decode shape's KV cache / its B x L tokens;
// capacity = hbm.capacity_bytes - the weights - the largest activations of any shape.
serving::ServeOptions serve_options(const ChipConfig& config, const std::string& model,
                                    const packing::BucketSet& set, packing::Overflow overflow,
                                    int64_t chunk_tokens) {
  HbmNeed need;
  uint64_t activations = 0;
  const auto check = [&](packing::Phase phase, const packing::Bucket& b) {
    Workload w = load_workload(model, shape_options(phase, b.shape));
    w.tp = 0;  // pack replays on one chip: no --tp to suggest
    const std::string file = set.path.empty() ? set.name : fmt::format("{}:{}", set.path, b.line);
    require_hbm_fits(config, w, 0,
                     fmt::format("{}: bucket set '{}', {} bucket {}: {} (workload '{}')", file, set.name,
                                 packing::kPhaseNames.name(phase), packing::to_string(b.shape), model, w.name));
    need = hbm_need(config, w);
    activations = std::max(activations, need.activations);
  };
  for (const packing::Bucket& b : set.prefill) check(packing::Phase::prefill, b);
  for (const packing::Bucket& b : set.decode) check(packing::Phase::decode, b);  // sorted by L: the last is longest
  const packing::Shape longest = set.decode.back().shape;
  serving::ServeOptions o;
  o.buckets = set;
  o.kv_bytes_per_token = static_cast<double>(need.kv_cache) / static_cast<double>(longest.batch * longest.length);
  o.kv_capacity_bytes = static_cast<double>(config.hbm.capacity_bytes) - static_cast<double>(need.weights) -
                        static_cast<double>(activations);
  o.chunk_tokens = chunk_tokens;
  o.model_context = transformer::load_model(model).max_seq.value_or(0);
  o.overflow = overflow == packing::Overflow::split ? serving::Overflow::truncate : serving::Overflow::reject;
  // disaggregated: the KV cache crosses one ICI link, one direction (ici.link_gbps; its source
  // is in the config's comments).
  o.kv_link_bytes_per_s = config.ici.link_gbps * 1e9;
  return o;
}

json kv_json(const serving::ServeOptions& o) {
  return {{"bytes_per_token", o.kv_bytes_per_token},
          {"capacity_bytes", o.kv_capacity_bytes},
          {"link_bytes_per_s", o.kv_link_bytes_per_s}};
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

// Varlen steps are priced from the first set's lengths (shapes simulated for it anyway), the
// scaling to the useful work of SimulatedStepCost doing the rest.
serving::SimulatedStepCost::Ladders varlen_ladders(const packing::BucketSet& set) {
  serving::SimulatedStepCost::Ladders ladders;
  for (const auto& b : set.prefill) ladders.prefill.push_back(b.shape.length);
  for (const auto& b : set.decode) ladders.decode.push_back(b.shape.length);
  for (auto* l : {&ladders.prefill, &ladders.decode}) l->erase(std::unique(l->begin(), l->end()), l->end());
  return ladders;
}

// The log as the replay offers it: loaded, then sped up (--rate-scale) or replaced by Poisson
// arrivals (--poisson).
packing::RequestLog offered_log(const PackRequest& r) {
  if (r.rate_scale && r.poisson_qps)
    throw InputError("--rate-scale and --poisson: expected at most one (Poisson arrivals have their own rate)");
  packing::RequestLog log = packing::load_request_log(r.requests, r.skip_bad_lines);
  if (r.rate_scale) return serving::scale_rate(std::move(log), *r.rate_scale);
  if (r.poisson_qps) return serving::poisson_log(log, *r.poisson_qps, r.seed);
  return log;
}

json report_header(const ChipConfig& config, const PackRequest& r, size_t requests, int64_t skipped) {
  json report;
  report["schema_version"] = kReportSchemaVersion;
  report["pack_schema"] = kPackSchemaVersion;
  report["generator"] = fmt::format("systolic {}", SYSTOLIC_VERSION);
  report["config"] = config_to_json(config);
  report["memory_timing"] = memory_timing(config);
  report["model"] = r.model;
  report["requests"] = {{"path", r.requests}, {"count", requests}, {"skipped_lines", skipped}};
  report["policy"] = {{"packer", r.packer}, {"window_ms", r.window_ms}, {"overflow", r.overflow},
                      {"compile_new_shapes", r.compile_new_shapes}, {"compile_stall_s", r.compile_stall_s},
                      {"scheduler", r.scheduler}, {"replicas", r.replicas}, {"router", r.router},
                      {"rate_scale", r.rate_scale ? json(*r.rate_scale) : json(nullptr)},
                      {"poisson_qps", r.poisson_qps ? json(*r.poisson_qps) : json(nullptr)}, {"seed", r.seed}};
  return report;
}

}  // namespace

PackOutput pack_report(const ChipConfig& config, const PackRequest& r, bool with_timeline) {
  require_single_chip(config);
  // Everything is read and checked before anything is simulated.
  const packing::RequestLog log = offered_log(r);
  validate_counts(r);
  const serving::Router& router = serving::routers().get(r.router, "--router");
  const serving::Scheduler& scheduler = serving::schedulers().get(r.scheduler, "--scheduler");
  const std::optional<serving::Slo> slo = slo_of(r);
  const packing::PackOptions options = pack_options(config, r);
  std::vector<serving::ServeOptions> serve;
  for (const auto& b : r.bucket_files) {
    const packing::BucketSet set = packing::load_bucket_set(b);
    packing::check_buckets_fit_array(set, config.mxu.rows, config.mxu.cols);
    serve.push_back(serve_options(config, r.model, set, options.overflow, r.chunk_tokens));
    serving::validate_common(serve.back());
    scheduler.validate(serve.back());
  }
  PackOutput out;
  for (const auto& w : log.warnings) out.warnings.push_back(w);
  if (log.skipped_lines > 0)
    out.warnings.push_back(fmt::format("{}: skipped {} malformed line(s)", r.requests, log.skipped_lines));
  if (with_timeline)
    out.timeline = {{"traceEvents", json::array()},
                    {"otherData", {{"generator", fmt::format("systolic {}", SYSTOLIC_VERSION)},
                                   {"time_unit", "1 trace us = 1 us of replayed time"}}}};

  ShapeSimulator sim(config, r.model);
  const serving::SimulatedStepCost cost(sim, packing::array_tile(config.mxu.rows, config.mxu.cols),
                                        serve[0].model_context, varlen_ladders(serve[0].buckets));
  // One baseline for every set: `dynamic` with the first set's slot count, prefill batch and
  // KV budget (no shape constraint: the packer and the bucket lengths do not touch it).
  const serving::ServeResult baseline =
      serving::serve_replicas(log, kBaselineScheduler, cost, serve[0], r.replicas, router);
  json replays = json::array();
  for (size_t i = 0; i < serve.size(); ++i) {
    json rep = replay(sim, log, serve[i].buckets, options);
    serving::ServeResult result = serving::serve_replicas(log, r.scheduler, cost, serve[i], r.replicas, router);
    rep["tax"] = tax_json(result, baseline, serve[0].buckets.name);
    // One replica's capacity: the overload line then says how many replicas would keep up.
    const double capacity = serving::backlogged_capacity(log, r.scheduler, cost, serve[i]);
    rep["serving"] = {{"scheduler", r.scheduler},
                      {"replicas", r.replicas},
                      {"router", r.router},
                      {"kv", kv_json(serve[i])}};
    rep["serving"].update(serving::summary_json(serving::summarize(result, slo, capacity)));
    if (with_timeline) add_timeline(result, serve[i].buckets.name, static_cast<int>(i), out.timeline);
    out.serving.push_back(std::move(result));
    replays.push_back(std::move(rep));
  }
  out.report = report_header(config, r, log.requests.size(), log.skipped_lines);
  // The first bucket set's results at the top level; every set (the first included) in
  // `replays`, for side-by-side comparison.
  for (const char* k : {"buckets", "totals", "tax", "serving"}) out.report[k] = replays[0][k];
  out.report["replays"] = replays;
  out.report["shapes_simulated"] = sim.simulated();
  return out;
}

}  // namespace systolic
