#include "sim/report/cost.hpp"

#include "models/area/die_cost.hpp"
#include "models/chip/chip_area.hpp"

namespace systolic {

using json = nlohmann::ordered_json;

json area_json(const ChipConfig& config, size_t chips) {
  const ChipArea area = chip_area(config);
  json blocks;
  for (const auto& [block, name] : kAreaBlockNames.entries()) blocks[std::string(name)] = area.of(block);
  return {{"by_block", blocks}, {"chip", area.total()}, {"total", area.total() * static_cast<double>(chips)}};
}

json power_json(const json& report) {
  const double seconds = report["totals"]["seconds"].get<double>();
  const double total_j = report["energy_pj"]["total"].get<double>() * 1e-12;
  const double static_j = report["energy_pj"]["by_component"]["static"].get<double>() * 1e-12;
  const auto watts = [&](double joules) { return seconds > 0 ? joules / seconds : 0.0; };
  return {{"total", watts(total_j)}, {"static", watts(static_j)}, {"dynamic", watts(total_j - static_j)}};
}

json efficiency_json(const ChipConfig& config, const json& report, int64_t tokens) {
  const double seconds = report["totals"]["seconds"].get<double>();
  const double ops = 2.0 * static_cast<double>(report["totals"]["macs"].get<uint64_t>());
  const double mm2 = report["area_mm2"]["total"].get<double>();
  const double watts = report["power_w"]["total"].get<double>();
  const double joules = report["energy_pj"]["total"].get<double>() * 1e-12;
  const double chips = static_cast<double>(report["system"]["chips"].get<int64_t>());
  const DieCost die = die_cost(report["area_mm2"]["chip"].get<double>(), node_factors(config.area.node),
                               config.area.defect_density_per_cm2);
  // Dollars a second of the system busy: its dies over their lifetime, plus the electricity.
  const double lifetime_s = config.area.lifetime_years * 365.25 * 86400.0;
  const double usd_per_s = die.usd * chips / lifetime_s + watts * config.area.usd_per_kwh / 3.6e6;
  const double tops = seconds > 0 ? ops / seconds / 1e12 : 0.0;
  json e = {{"tops", tops},
            {"tops_per_mm2", tops / mm2},
            {"tops_per_w", watts > 0 ? tops / watts : 0.0},
            {"die_cost_usd", die.usd},
            {"dies_per_wafer", die.dies_per_wafer},
            {"yield", die.yield},
            {"tokens", nullptr},
            {"tokens_per_s", nullptr},
            {"tokens_per_s_per_mm2", nullptr},
            {"tokens_per_s_per_w", nullptr},
            {"energy_per_token_j", nullptr},
            {"usd_per_million_tokens", nullptr}};
  if (tokens > 0 && seconds > 0) {
    const double n = static_cast<double>(tokens), rate = n / seconds;
    e["tokens"] = tokens;
    e["tokens_per_s"] = rate;
    e["tokens_per_s_per_mm2"] = rate / mm2;
    e["tokens_per_s_per_w"] = watts > 0 ? rate / watts : 0.0;
    e["energy_per_token_j"] = joules / n;
    e["usd_per_million_tokens"] = usd_per_s * seconds / n * 1e6;
  }
  return e;
}

}  // namespace systolic
