#include "sim/serving/setup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/common/error.hpp"
#include "sim/compile/capacity.hpp"
#include "sim/packing/bin_packer.hpp"
#include "sim/serving/arrivals.hpp"
#include "sim/serving/replicas.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/workload/transformer/model.hpp"

namespace systolic {
namespace {

// The replay times every shape on one chip; a multi-chip config would report one chip's time
// as the system's. Refused until pack learns --tp.
void require_single_chip(const ChipConfig& config) {
  if (config.ici.topology == IciTopologyKind::none) return;
  throw InputError(
      fmt::format("{}: ici.topology = {} makes a {}-chip system; pack replays on one chip and has no "
                  "--tp yet: expected a single-chip config (ici.topology: none)",
                  config.source, kIciTopologyNames.name(config.ici.topology), config.ici.chips()));
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
  o.kv_bytes_per_token =
      static_cast<double>(need.kv_cache) / static_cast<double>(longest.batch * longest.length);
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
  if (r.poisson_qps) return serving::poisson_log(log, *r.poisson_qps, r.seed);
  return log;
}

}  // namespace

ServingSetup prepare_serving(const ChipConfig& config, const PackRequest& r) {
  require_single_chip(config);
  ServingSetup s;
  s.log = offered_log(r);
  validate_counts(r);
  s.router = &serving::routers().get(r.router, "--router");
  const serving::Scheduler& scheduler = serving::schedulers().get(r.scheduler, "--scheduler");
  s.slo = slo_of(r);
  s.pack = pack_options(config, r);
  for (const auto& b : r.bucket_files) {
    const packing::BucketSet set = packing::load_bucket_set(b);
    packing::check_buckets_fit_array(set, config.mxu.rows, config.mxu.cols);
    s.serve.push_back(serve_options(config, r.model, set, s.pack.overflow, r.chunk_tokens));
    serving::validate_common(s.serve.back());
    scheduler.validate(s.serve.back());
  }
  s.warnings = s.log.warnings;
  if (s.log.skipped_lines > 0)
    s.warnings.push_back(fmt::format("{}: skipped {} malformed line(s)", r.requests, s.log.skipped_lines));
  return s;
}

serving::SimulatedStepCost simulated_step_cost(ShapeSimulator& simulator, const ChipConfig& config,
                                               const serving::ServeOptions& first) {
  return serving::SimulatedStepCost(simulator, packing::array_tile(config.mxu.rows, config.mxu.cols),
                                    first.model_context, varlen_ladders(first.buckets));
}

}  // namespace systolic
