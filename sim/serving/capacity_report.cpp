#include "sim/serving/capacity_report.hpp"
#include "sim/common/json_optional.hpp"

#include <fmt/format.h>

#include "models/common/error.hpp"
#include "sim/config/config.hpp"
#include "sim/serving/arrivals.hpp"
#include "sim/serving/capacity.hpp"
#include "sim/serving/replicas.hpp"

namespace systolic {
namespace {

using json = nlohmann::ordered_json;

CapacitySearch search_of(const std::string& name) {
  const auto search = kCapacitySearchNames.parse(name);
  if (!search)
    throw InputError(fmt::format("--search '{}': expected {}{}", name, kCapacitySearchNames.choices(" or "),
                                 kCapacitySearchNames.suggest(name)));
  return *search;
}

serving::CapacityOptions capacity_options(const CapacityRequest& r, const std::optional<serving::Slo>& slo) {
  if (!slo)
    throw InputError("--slo-ttft and --slo-tbt: expected both; capacity is the load served within them");
  serving::CapacityOptions o;
  o.slo = *slo;
  o.target = r.target;
  o.tolerance = r.tolerance;
  o.max_replicas = r.max_replicas;
  serving::validate(o);
  return o;
}

json header(const ChipConfig& config, const CapacityRequest& r, const ServingSetup& setup,
            const serving::CapacityOptions& o) {
  const PackRequest& p = r.serving;
  json j;
  j["capacity_schema"] = kCapacitySchemaVersion;
  j["generator"] = fmt::format("systolic {}", SYSTOLIC_VERSION);
  j["config"] = config_to_json(config);
  j["model"] = p.model;
  j["requests"] = {{"path", p.requests}, {"count", setup.log.requests.size()}};
  j["bucket_set"] = {{"name", setup.serve[0].buckets.name}, {"path", setup.serve[0].buckets.path}};
  j["tp"] = setup.tp;
  j["chips_per_replica"] = setup.chips_per_replica;
  j["scheduler"] = p.scheduler;
  j["router"] = p.router;
  j["overflow"] = p.overflow;
  j["packer"] = setup.pack.packer;
  j["window_ms"] = p.window_ms;
  j["compile_new_shapes"] = p.compile_new_shapes;
  j["arrivals"] = {{"rate_scale", p.rate_scale}, {"poisson_qps", p.poisson_qps}, {"seed", p.seed}};
  j["slo"] = {{"ttft_s", o.slo.ttft_s}, {"tbt_s", o.slo.tbt_s}};
  j["target"] = o.target;
  j["tolerance"] = o.tolerance;
  j["max_replicas"] = o.max_replicas;
  return j;
}

}  // namespace

CapacityOutput capacity_report(const ChipConfig& config, const CapacityRequest& r) {
  if (r.serving.bucket_files.size() != 1)
    throw InputError(
        fmt::format("--buckets: expected one bucket set, got {}", r.serving.bucket_files.size()));
  const CapacitySearch search = search_of(r.search);
  const ServingSetup setup = prepare_serving(config, r.serving);
  const serving::CapacityOptions options = capacity_options(r, setup.slo);

  ShapeSimulator sim(setup.replica, r.serving.model, setup.tp);
  const serving::SimulatedStepCost cost = simulated_step_cost(sim, config, setup.serve[0]);
  sim.ahead(shapes_ahead(setup, r.serving.scheduler, nullptr), r.serving.jobs);
  const serving::CapacityReplay replay = [&](double rate_factor, int64_t replicas) {
    const packing::RequestLog log = serving::scale_rate(setup.log, rate_factor);
    return serving::summarize(
        serving::serve_replicas(log, r.serving.scheduler, cost, setup.serve[0], replicas, *setup.router),
        options.slo);
  };
  CapacityOutput out;
  out.warnings = setup.warnings;
  out.report = header(config, r, setup, options);
  out.report["rate"] = nullptr;
  out.report["replicas"] = nullptr;
  std::optional<serving::RateSearch> rate;
  std::optional<serving::ReplicaSearch> replicas;
  if (search != CapacitySearch::replicas) {
    rate = serving::highest_rate(replay, options);
    out.report["rate"] = serving::rate_json(*rate, setup.chips_per_replica);
    out.text += serving::format_rate(*rate, options, setup.chips_per_replica);
  }
  if (search != CapacitySearch::rate) {
    replicas = serving::fewest_replicas(replay, options);
    out.report["replicas"] = serving::replicas_json(*replicas, setup.chips_per_replica);
    out.text += (out.text.empty() ? "" : "\n") +
                serving::format_replicas(*replicas, options, setup.chips_per_replica);
  }
  out.report["shapes_simulated"] = sim.simulated();
  out.csv = serving::capacity_csv(rate ? &*rate : nullptr, replicas ? &*replicas : nullptr,
                                  setup.chips_per_replica);
  return out;
}

}  // namespace systolic
