#include "sim/config/config.hpp"
#include "sim/serving/replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "models/common/error.hpp"
#include "models/common/suggest.hpp"
#include "sim/compile/capacity.hpp"
#include "sim/compile/compile.hpp"
#include "sim/packing/bin_packer.hpp"
#include "sim/packing/metrics.hpp"
#include "sim/report/report.hpp"
#include "sim/run/pipeline.hpp"
#include "sim/simulate/simulate.hpp"
#include "sim/workload/workload.hpp"

namespace systolic {
namespace {

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5)];
}

// The model at one static shape.
WorkloadOptions shape_options(packing::Phase phase, packing::Shape shape) {
  WorkloadOptions opts;
  opts.bucket = fmt::format("{}x{}", shape.batch, shape.length);
  opts.phase = packing::kPhaseNames.name(phase);
  return opts;
}

// Every prefill and decode shape of the set holds the model (weights, its KV cache,
// activations) in the chip's HBM; else InputError naming the bucket (sim/compile/capacity.hpp).
void check_buckets_fit_hbm(const ChipConfig& config, const std::string& model, const packing::BucketSet& set) {
  const auto check = [&](packing::Phase phase, const packing::Bucket& b) {
    Workload w = load_workload(model, shape_options(phase, b.shape));
    w.tp = 0;  // pack replays on one chip: no --tp to suggest
    const std::string file = set.path.empty() ? set.name : fmt::format("{}:{}", set.path, b.line);
    require_hbm_fits(config, w, 0,
                     fmt::format("{}: bucket set '{}', {} bucket {}: {} (workload '{}')", file, set.name,
                                 packing::kPhaseNames.name(phase), packing::to_string(b.shape), model, w.name));
  };
  for (const packing::Bucket& b : set.prefill) check(packing::Phase::prefill, b);
  for (const packing::Bucket& b : set.decode) check(packing::Phase::decode, b);
}

}  // namespace

const ShapeCost& ShapeSimulator::cost(packing::Phase phase, packing::Shape shape) {
  const auto key = std::make_tuple(static_cast<int>(phase), shape.batch, shape.length);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  RunRequest request{config_, {model_, "", shape_options(phase, shape)}, {}, "pack"};
  const auto report = run(request).report;
  ShapeCost c;
  c.seconds = report["totals"]["seconds"].get<double>();
  c.energy_pj = report["energy_pj"]["total"].get<double>();
  c.utilization = report["totals"]["utilization"].get<double>();
  const auto& kinds = report["chips"][0]["op_kinds"];  // pack runs on one chip (require_single_chip)
  const double attention = kinds.contains("attention") ? kinds["attention"]["macs"].get<double>() : 0.0;
  c.attention_share = ratio(attention, report["totals"]["macs_issued"].get<double>());
  return cache_.emplace(key, c).first->second;
}

nlohmann::ordered_json replay(ShapeSimulator& sim, const packing::RequestLog& log,
                              const packing::BucketSet& buckets, packing::PackOptions options,
                              nlohmann::ordered_json* timeline, int pid) {
  using json = nlohmann::ordered_json;
  using packing::Phase;
  // Decode steps take the simulated step time of their shape.
  options.decode_step_time = [&sim](const packing::Shape& s) { return sim.cost(Phase::decode, s).seconds; };
  const packing::PackResult result = packing::pack(log.requests, buckets, options);
  const packing::Summary summary = packing::summarize(result);

  json rows = json::array();
  double seconds = 0, energy = 0, ideal_seconds = 0, ideal_energy = 0;
  int64_t useful = 0, pads = 0;
  for (const auto& s : summary.shapes) {
    const ShapeCost& c = sim.cost(s.phase, s.shape);
    // MACs on pad tokens and on masked cells, over the MACs issued: the token-proportional
    // (matmul) share wastes the pad fraction of the token slots, the attention share the
    // pad and cross-request fractions of the score cells.
    const double slots = static_cast<double>(s.useful_tokens + s.pad_tokens);
    const double cells = static_cast<double>(s.cells.computed);
    const double padding_waste = (1 - c.attention_share) * ratio(s.pad_tokens, slots) +
                                 c.attention_share * ratio(static_cast<double>(s.cells.pad), cells);
    const double mask_waste = c.attention_share * ratio(static_cast<double>(s.cells.cross), cells);
    const double t = static_cast<double>(s.runs) * c.seconds, e = static_cast<double>(s.runs) * c.energy_pj;
    seconds += t;
    energy += e;
    ideal_seconds += t * (1 - padding_waste - mask_waste);
    ideal_energy += e * (1 - padding_waste - mask_waste);
    useful += s.phase == Phase::prefill ? s.useful_tokens : 0;
    pads += s.phase == Phase::prefill ? s.pad_tokens : 0;
    rows.push_back({{"phase", packing::kPhaseNames.name(s.phase)},
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
                    {"energy_pj_per_useful_token", ratio(e, static_cast<double>(s.useful_tokens))}});
  }
  seconds += summary.compile_stall_s;

  // Latency: prefill instances run first come first served on the chip as they are
  // dispatched; a request's first token is out when the instance holding its last prompt
  // chunk ends. Decode runs in its own pool (prefill/decode disaggregation, as in Splitwise).
  std::unordered_map<int64_t, double> arrival;
  for (const auto& r : log.requests) arrival[r.id] = r.arrival_s;
  std::vector<double> ttft;
  double chip_free = 0, end_all = 0;
  if (timeline) {
    (*timeline)["traceEvents"].push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid},
                                          {"args", {{"name", "bucket set " + buckets.name}}}});
    (*timeline)["traceEvents"].push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", 0},
                                          {"args", {{"name", "chip (prefill)"}}}});
  }
  for (const auto& inst : result.prefill) {
    const double start = std::max(inst.dispatch_s, chip_free);
    chip_free = start + sim.cost(Phase::prefill, inst.shape).seconds;
    if (timeline)
      (*timeline)["traceEvents"].push_back(
          {{"ph", "X"}, {"pid", pid}, {"tid", 0}, {"name", fmt::format("prefill {}x{}", inst.shape.batch, inst.shape.length)},
           {"ts", start * 1e6}, {"dur", (chip_free - start) * 1e6},
           {"args", {{"lanes", inst.lanes.size()}, {"useful_tokens", packing::useful_tokens(inst)},
                     {"pad_tokens", packing::pad_tokens(inst)}, {"dispatched_s", inst.dispatch_s}}}});
    for (const auto& lane : inst.lanes)
      for (const auto& seg : lane.segments)
        if (seg.chunk == seg.chunks - 1) ttft.push_back(chip_free - arrival[seg.request_id]);
  }
  end_all = chip_free;
  int64_t generated = 0;
  for (const auto& a : result.accepted) {
    generated += a.generated_tokens;
    end_all = std::max(end_all, a.decode_done_s);
  }
  const double first = log.requests.empty() ? 0 : log.requests.front().arrival_s;
  double mean = 0;
  for (double x : ttft) mean += x;
  mean = ratio(mean, static_cast<double>(ttft.size()));

  json out;
  out["bucket_set"] = buckets.name;
  out["bucket_file"] = buckets.path;
  out["buckets"] = std::move(rows);
  out["totals"] = {{"requests", summary.requests},
                   {"accepted", summary.accepted},
                   {"rejected", summary.rejected},
                   {"useful_tokens", useful},
                   {"pad_tokens", pads},
                   {"compile_stall_s", summary.compile_stall_s},
                   {"seconds", seconds},
                   {"energy_pj", energy},
                   {"energy_pj_per_useful_token", ratio(energy, static_cast<double>(useful))}};
  out["varlen"] = {{"requests", summary.accepted},
                   {"useful_tokens", useful},
                   {"pad_tokens", 0},
                   {"seconds", ideal_seconds},
                   {"energy_pj", ideal_energy},
                   {"energy_pj_per_useful_token", ratio(ideal_energy, static_cast<double>(useful))}};
  out["latency"] = {{"ttft_mean_s", mean},
                    {"ttft_p50_s", percentile(ttft, 0.5)},
                    {"ttft_p99_s", percentile(ttft, 0.99)},
                    {"generated_tokens", generated},
                    {"makespan_s", end_all - first},
                    {"throughput_tokens_per_s", ratio(static_cast<double>(generated), end_all - first)}};
  json rejected = json::array();
  for (const auto& r : result.rejected)
    rejected.push_back({{"request", r.request_id}, {"line", r.line}, {"reason", r.reason}});
  out["rejected_requests"] = std::move(rejected);
  out["packing"] = packing::to_json(summary);
  return out;
}


namespace {
// The replay times every bucket shape on one chip; a multi-chip config would report one chip's
// time as the system's. Refused until pack learns --tp.
void require_single_chip(const ChipConfig& config) {
  if (config.ici.topology == IciTopologyKind::none) return;
  throw InputError(fmt::format("{}: ici.topology = {} makes a {}-chip system; pack replays on one chip and has no "
                               "--tp yet: expected a single-chip config (ici.topology: none)",
                               config.source, kIciTopologyNames.name(config.ici.topology), config.ici.chips()));
}
}  // namespace

nlohmann::ordered_json pack_report(const ChipConfig& config, const PackRequest& r,
                                   std::vector<std::string>* warnings, nlohmann::ordered_json* timeline) {
  require_single_chip(config);
  // Everything is read and checked before anything is simulated.
  const packing::RequestLog log = packing::load_request_log(r.requests, r.skip_bad_lines);
  std::vector<packing::BucketSet> sets;
  for (const auto& b : r.bucket_files) {
    sets.push_back(packing::load_bucket_set(b));
    packing::check_buckets_fit_array(sets.back(), config.mxu.rows, config.mxu.cols);
  }
  for (const packing::BucketSet& set : sets) check_buckets_fit_hbm(config, r.model, set);
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
  if (warnings) {
    for (const auto& w : log.warnings) warnings->push_back(w);
    if (log.skipped_lines > 0)
      warnings->push_back(fmt::format("{}: skipped {} malformed line(s)", r.requests, log.skipped_lines));
  }

  ShapeSimulator sim(config, r.model);
  nlohmann::ordered_json replays = nlohmann::ordered_json::array();
  if (timeline) {
    *timeline = nlohmann::ordered_json::object();
    (*timeline)["traceEvents"] = nlohmann::ordered_json::array();
    (*timeline)["otherData"] = {{"generator", fmt::format("systolic {}", SYSTOLIC_VERSION)},
                                {"time_unit", "1 trace us = 1 us of replayed time"}};
  }
  for (size_t i = 0; i < sets.size(); ++i)
    replays.push_back(replay(sim, log, sets[i], options, timeline, static_cast<int>(i)));

  nlohmann::ordered_json report;
  report["schema_version"] = kReportSchemaVersion;
  report["generator"] = fmt::format("systolic {}", SYSTOLIC_VERSION);
  report["config"] = config_to_json(config);
  report["memory_timing"] = memory_timing(config);
  report["model"] = r.model;
  report["requests"] = {{"path", r.requests}, {"count", log.requests.size()}, {"skipped_lines", log.skipped_lines}};
  report["policy"] = {{"packer", r.packer}, {"window_ms", r.window_ms}, {"overflow", r.overflow},
                      {"compile_new_shapes", r.compile_new_shapes}, {"compile_stall_s", r.compile_stall_s}};
  // The first bucket set's results at the top level; every set (the first included) in
  // `replays`, for side-by-side comparison.
  for (const char* k : {"buckets", "totals", "varlen", "latency"}) report[k] = replays[0][k];
  report["replays"] = replays;
  report["shapes_simulated"] = sim.simulated();
  return report;
}

std::string format_replay(const nlohmann::ordered_json& r) {
  std::string out = fmt::format("bucket set {} ({})\n", r["bucket_set"].get<std::string>(),
                                r["bucket_file"].get<std::string>());
  out += fmt::format("{:<8} {:>12} {:>9} {:>8} {:>11} {:>10} {:>6} {:>6} {:>7} {:>6} {:>10} {:>10} {:>9}\n", "phase",
                     "shape", "instances", "requests", "useful tok", "pad tok", "fill", "util", "padwst",
                     "mask", "time (s)", "energy (J)", "uJ/token");
  const auto pct = [](double v) { return fmt::format("{:.1f}%", 100 * v); };
  for (const auto& b : r["buckets"])
    out += fmt::format("{:<8} {:>12} {:>9} {:>8} {:>11} {:>10} {:>6} {:>6} {:>7} {:>6} {:>10.4f} {:>10.4f} {:>9.2f}\n",
                       b["phase"].get<std::string>(),
                       fmt::format("{}x{}", b["shape"][0].get<int64_t>(), b["shape"][1].get<int64_t>()),
                       b["instances"].get<int64_t>(), b["requests"].get<int64_t>(),
                       b["useful_tokens"].get<int64_t>(), b["pad_tokens"].get<int64_t>(),
                       pct(b["fill"].get<double>()), pct(b["utilization"].get<double>()),
                       pct(b["padding_waste"].get<double>()), pct(b["mask_waste"].get<double>()),
                       b["seconds"].get<double>(), b["energy_pj"].get<double>() * 1e-12,
                       b["energy_pj_per_useful_token"].get<double>() * 1e-6);
  const auto& t = r["totals"];
  const auto& v = r["varlen"];
  const auto& l = r["latency"];
  out += fmt::format("total: {} requests ({} rejected), {} useful + {} pad prompt tokens, {:.3f} s, {:.3f} J, "
                     "{:.2f} uJ per useful prompt token\n",
                     t["requests"].get<int64_t>(), t["rejected"].get<int64_t>(), t["useful_tokens"].get<int64_t>(),
                     t["pad_tokens"].get<int64_t>(), t["seconds"].get<double>(), t["energy_pj"].get<double>() * 1e-12,
                     t["energy_pj_per_useful_token"].get<double>() * 1e-6);
  out += fmt::format("varlen ideal: {:.3f} s, {:.3f} J -> static-shape tax {:.1f}% time, {:.1f}% energy\n",
                     v["seconds"].get<double>(), v["energy_pj"].get<double>() * 1e-12,
                     100 * (t["seconds"].get<double>() / std::max(1e-30, v["seconds"].get<double>()) - 1),
                     100 * (t["energy_pj"].get<double>() / std::max(1e-30, v["energy_pj"].get<double>()) - 1));
  out += fmt::format("time to first token: mean {:.3f} s, p50 {:.3f} s, p99 {:.3f} s; throughput {:.0f} tokens/s\n",
                     l["ttft_mean_s"].get<double>(), l["ttft_p50_s"].get<double>(), l["ttft_p99_s"].get<double>(),
                     l["throughput_tokens_per_s"].get<double>());
  return out;
}

}  // namespace systolic
