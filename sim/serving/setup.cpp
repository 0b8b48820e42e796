#include "sim/serving/setup.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <tuple>
#include <vector>

#include "models/common/error.hpp"
#include "sim/compile/capacity.hpp"
#include "sim/packing/bin_packer.hpp"
#include "sim/serving/arrivals.hpp"
#include "sim/serving/replicas.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/workload/transformer/model.hpp"

namespace systolic {
namespace {

// A replica is tp chips of `config`: one chip (tp 1, its ici removed), the whole system (tp =
// its chip count), or a slice of it between the two, as a TPU pod is carved into slices: the
// same topology kind on dims that tile the system's (tiling_slice, models/ici/topology.hpp; the
// parallelism meshes of sim/workload/transformer/shard_mesh.cpp carve groups the same way). A slice axis
// shorter than the system's has no wraparound link (the chips at its ends are not neighbours), so a slice
// keeps ici.wraparound only when every axis it spans is whole.
ChipConfig replica_config(const ChipConfig& config, int64_t tp) {
  const int64_t chips = config.ici.chips();
  if (chips == 1 && tp != 1)
    throw InputError(
        fmt::format("--tp {}: {} is a single chip (ici.topology: none): expected --tp 1 (a replica "
                    "of several chips needs a multi-chip config)",
                    tp, config.source));
  const auto slice = tp >= 1 && tp <= chips ? tiling_slice(config.ici.dims, tp) : std::nullopt;
  if (!slice) {
    std::vector<int64_t> degrees;
    for (int64_t d = 1; d <= chips; ++d)
      if (tiling_slice(config.ici.dims, d)) degrees.push_back(d);
    throw InputError(
        fmt::format("--tp {}: expected a number of chips whose slice tiles the {} chips of {} ({}): one of {}",
                    tp, chips, config.source, dims_text(config.ici.dims), fmt::join(degrees, ", ")));
  }
  ChipConfig replica = config;
  if (tp == 1) {
    replica.ici.topology = IciTopologyKind::none;
    replica.ici.dims.clear();
    return replica;
  }
  for (size_t i = 0; i < slice->size(); ++i)
    if ((*slice)[i] > 1 && (*slice)[i] != config.ici.dims[i]) replica.ici.wraparound = false;
  replica.ici.dims = *slice;
  return replica;
}

// disaggregated's pools (1 + 1 chips unless given): each pool chip is tp chips of the config.
std::pair<int64_t, int64_t> pools_of(const PackRequest& r) {
  const bool disaggregated = r.scheduler == "disaggregated";
  std::pair<int64_t, int64_t> pools{1, 1};
  for (const auto& [given, flag, into] : {std::tuple{r.prefill_chips, "--prefill-chips", &pools.first},
                                          {r.decode_chips, "--decode-chips", &pools.second}}) {
    if (!given) continue;
    if (!disaggregated)
      throw InputError(
          fmt::format("{} {}: expected only with --scheduler disaggregated (the pools of prefill and "
                      "decode chips), got --scheduler {}",
                      flag, *given, r.scheduler));
    if (*given < 1 || *given > 4096)
      throw InputError(fmt::format("{} {}: expected chips in [1, 4096]", flag, *given));
    *into = *given;
  }
  return pools;
}

// --replicas on a multi-chip config must match its chips / chips per replica: the config says
// how many chips there are. On a single chip, --replicas N is N copies of a replica.
int64_t replicas_of(const ChipConfig& config, const PackRequest& r, int64_t chips_per_replica) {
  const int64_t chips = config.ici.chips();
  if (chips > 1 && chips % chips_per_replica != 0)
    throw InputError(
        fmt::format("{} has {} chips: expected a multiple of the {} chips of a replica (--tp {} x "
                    "the disaggregated pools' --prefill-chips + --decode-chips)",
                    config.source, chips, chips_per_replica, r.tp));
  const int64_t fitting = std::max<int64_t>(1, chips / chips_per_replica);
  if (!r.replicas) return fitting;
  serving::validate_replicas(*r.replicas);
  if (chips > 1 && *r.replicas != fitting)
    throw InputError(
        fmt::format("--replicas {}: {} has {} chips, {} per replica (--tp {}): expected {} or no "
                    "--replicas (a single-chip config serves any number of copies)",
                    *r.replicas, config.source, chips, chips_per_replica, r.tp, fitting));
  return *r.replicas;
}

std::optional<serving::Slo> slo_of(const PackRequest& r) {
  for (const auto& [value, flag] : {std::pair{r.slo_ttft_s, "--slo-ttft"}, {r.slo_tbt_s, "--slo-tbt"}})
    if (value && !(std::isfinite(*value) && *value > 0))
      throw InputError(fmt::format("{} {}: expected a time in seconds > 0", flag, *value));
  if (r.slo_ttft_s.has_value() != r.slo_tbt_s.has_value())
    throw InputError(
        "--slo-ttft and --slo-tbt: expected both (a request meets the SLO when its time to first token "
        "and its mean time between tokens are within them), got only one");
  if (!r.slo_ttft_s) return std::nullopt;
  return serving::Slo{*r.slo_ttft_s, *r.slo_tbt_s};
}

void validate_counts(const PackRequest& r) {
  if (r.chunk_tokens < 1)
    throw InputError(fmt::format("--chunk-tokens {}: expected prompt tokens per step >= 1", r.chunk_tokens));
  for (const auto& [value, flag, what] :
       {std::tuple{r.window_ms, "--window", "a batching window in milliseconds >= 0"},
        {r.compile_stall_s, "--compile-stall", "the seconds one compilation takes, >= 0"}})
    if (!(std::isfinite(value) && value >= 0))
      throw InputError(fmt::format("{} {}: expected {}", flag, value, what));
}

packing::PackOptions pack_options(const ChipConfig& config, const PackRequest& r) {
  packing::PackOptions options;
  options.packer = packing::packer_name(r.packer, "--policy");
  options.window_ms = r.window_ms;
  const auto overflow = packing::kOverflowNames.parse(r.overflow);
  if (!overflow)
    throw InputError(fmt::format("--overflow '{}': expected {}{}", r.overflow,
                                 packing::kOverflowNames.choices(" or "),
                                 packing::kOverflowNames.suggest(r.overflow)));
  options.overflow = *overflow;
  options.compile_new_shapes = r.compile_new_shapes;
  options.compile_stall_s = r.compile_stall_s;
  options.compile_granule = packing::array_tile(config.mxu.rows, config.mxu.cols);
  packing::validate(options);
  return options;
}

// How the static-shape schedulers fill their prefill steps: the packer, the batching window,
// runtime shapes (docs/serving.md, "Packing prefill steps").
void apply_packing(const packing::PackOptions& pack, serving::ServeOptions& o) {
  o.packer = pack.packer;
  o.window_s = pack.window_ms / 1000;
  o.compile_new_shapes = pack.compile_new_shapes;
  o.compile_stall_s = pack.compile_stall_s;
  o.compile_granule = pack.compile_granule;
  o.compile_pad_threshold = pack.compile_pad_threshold;
}

// The model at one shape on chip 0 of a replica: its share of the model with tp > 1.
Workload chip_share(const std::string& model, packing::Phase phase, packing::Shape shape, int64_t tp) {
  WorkloadOptions options = shape_options(phase, shape);
  if (tp == 1) {
    Workload w = load_workload(model, options);
    w.tp = 0;  // one chip per replica: no --tp to suggest
    return w;
  }
  options.tp = tp;
  return load_system_workloads(model, options, static_cast<int>(tp))[0];
}

// Lowers the model at every prefill and decode shape of the set; each must hold the model
// (weights, its KV cache, activations) in a chip's HBM (its share with tp > 1), else InputError
// naming the bucket (sim/compile/capacity.hpp). Returns the serving options of the set, their
// KV budget from the same layouts: bytes per token = the longest decode shape's KV cache / its
// B x L tokens; capacity = hbm.capacity_bytes - the weights - the largest activations of any
// shape; both per chip, times tp (every chip of a replica holds an equal share).
serving::ServeOptions serve_options(const ChipConfig& config, int64_t tp, const std::string& model,
                                    const packing::BucketSet& set, packing::Overflow overflow,
                                    int64_t chunk_tokens) {
  HbmNeed need;
  uint64_t activations = 0;
  const auto check = [&](packing::Phase phase, const packing::Bucket& b) {
    const Workload w = chip_share(model, phase, b.shape, tp);
    const std::string file = set.path.empty() ? set.name : fmt::format("{}:{}", set.path, b.line);
    require_hbm_fits(
        config, w, 0,
        fmt::format("{}: bucket set '{}', {} bucket {}: {} (workload '{}')", file, set.name,
                    packing::kPhaseNames.name(phase), packing::to_string(b.shape), model, w.name));
    need = hbm_need(config, w);
    activations = std::max(activations, need.activations);
  };
  for (const packing::Bucket& b : set.prefill) check(packing::Phase::prefill, b);
  for (const packing::Bucket& b : set.decode)
    check(packing::Phase::decode, b);  // sorted by L: the last is longest
  const packing::Shape longest = set.decode.back().shape;
  serving::ServeOptions o;
  o.buckets = set;
  const auto chips = static_cast<double>(tp);
  o.kv_bytes_per_token =
      chips * static_cast<double>(need.kv_cache) / static_cast<double>(longest.batch * longest.length);
  o.kv_capacity_bytes = chips * (static_cast<double>(config.hbm.capacity_bytes) -
                                 static_cast<double>(need.weights) - static_cast<double>(activations));
  o.chunk_tokens = chunk_tokens;
  o.model_context = transformer::load_model(model).max_seq.value_or(0);
  o.overflow = overflow == packing::Overflow::split ? serving::Overflow::truncate : serving::Overflow::reject;
  // disaggregated: the KV cache crosses one ICI link, one direction (ici.link_gbps; its source
  // is in the config's comments).
  o.kv_link_bytes_per_s = config.ici.link_gbps * 1e9;
  return o;
}

// chunked's [1, C] step, checked as a bucket is before anything is simulated: C a multiple of
// the array tile (docs/packing.md, "Compatible with the array"), a shape the model accepts and
// the HBM holds (on chip 0 of a replica).
void check_chunk_shape(const ChipConfig& replica, const PackRequest& r) {
  const int64_t tile = packing::array_tile(replica.mxu.rows, replica.mxu.cols);
  if (r.chunk_tokens % tile != 0) {
    const int64_t below = r.chunk_tokens / tile * tile;
    throw InputError(
        fmt::format("--chunk-tokens {}: expected a multiple of the array tile, {} tokens (lcm of mxu.rows {} "
                    "and mxu.cols {}): "
                    "{}{}",
                    r.chunk_tokens, tile, replica.mxu.rows, replica.mxu.cols,
                    below > 0 ? fmt::format("{} or ", below) : "", below + tile));
  }
  const packing::Shape shape{1, r.chunk_tokens};
  const Workload w = chip_share(r.model, packing::Phase::prefill, shape, r.tp);
  require_hbm_fits(replica, w, 0,
                   fmt::format("--chunk-tokens {}: prefill chunk {}: {} (workload '{}')", r.chunk_tokens,
                               packing::to_string(shape), r.model, w.name));
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
    throw InputError(
        "--rate-scale and --poisson: expected at most one (Poisson arrivals have their own rate)");
  packing::RequestLog log = packing::load_request_log(r.requests, r.skip_bad_lines);
  if (r.rate_scale) return serving::scale_rate(std::move(log), *r.rate_scale);
  if (r.poisson_requests && !r.poisson_qps)
    throw InputError(fmt::format("--poisson-requests {}: expected with --poisson (it sizes the Poisson log)",
                                 *r.poisson_requests));
  if (r.poisson_qps) {
    if (r.poisson_requests && *r.poisson_requests < 1)
      throw InputError(fmt::format("--poisson-requests {}: expected a number of requests >= 1", *r.poisson_requests));
    return serving::poisson_log(log, *r.poisson_qps, r.seed, r.poisson_requests.value_or(0));
  }
  return log;
}

}  // namespace

ServingSetup prepare_serving(const ChipConfig& config, const PackRequest& r) {
  ServingSetup s;
  s.tp = r.tp;
  s.replica = replica_config(config, r.tp);
  s.log = offered_log(r);
  const auto [prefill_chips, decode_chips] = pools_of(r);
  s.chips_per_replica = r.tp * (r.scheduler == "disaggregated" ? prefill_chips + decode_chips : 1);
  s.replicas = replicas_of(config, r, s.chips_per_replica);
  validate_counts(r);
  s.router = &serving::routers().get(r.router, "--router");
  const serving::Scheduler& scheduler = serving::schedulers().get(r.scheduler, "--scheduler");
  s.slo = slo_of(r);
  s.pack = pack_options(config, r);
  for (const auto& b : r.bucket_files) {
    const packing::BucketSet set = packing::load_bucket_set(b);
    packing::check_buckets_fit_array(set, config.mxu.rows, config.mxu.cols);
    s.serve.push_back(serve_options(s.replica, r.tp, r.model, set, s.pack.overflow, r.chunk_tokens));
    s.serve.back().prefill_chips = prefill_chips;
    s.serve.back().decode_chips = decode_chips;
    apply_packing(s.pack, s.serve.back());
    serving::validate_common(s.serve.back());
    scheduler.validate(s.serve.back());
  }
  if (r.scheduler == "chunked") check_chunk_shape(s.replica, r);
  s.warnings = s.log.warnings;
  if (s.log.skipped_lines > 0)
    s.warnings.push_back(fmt::format("{}: skipped {} malformed line(s)", r.requests, s.log.skipped_lines));
  return s;
}

std::vector<serving::StepShape> shapes_ahead(const ServingSetup& setup, const std::string& scheduler,
                                             const serving::SimulatedStepCost* baseline) {
  std::vector<serving::StepShape> out;
  const serving::Scheduler& s = serving::schedulers().get(scheduler, "--scheduler");
  for (const serving::ServeOptions& o : setup.serve)
    for (const serving::StepShape& shape : s.shapes(o)) out.push_back(shape);
  if (baseline)
    for (const serving::StepShape& shape :
         baseline->ladder_shapes(setup.serve[0].buckets.decode.back().shape.batch))
      out.push_back(shape);
  return out;
}

serving::SimulatedStepCost simulated_step_cost(ShapeSimulator& simulator, const ChipConfig& config,
                                               const serving::ServeOptions& first) {
  return serving::SimulatedStepCost(simulator, packing::array_tile(config.mxu.rows, config.mxu.cols),
                                    first.model_context, varlen_ladders(first.buckets));
}

}  // namespace systolic
