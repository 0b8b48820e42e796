// report.json of a multi-chip run (docs/report.md, "Multi-chip runs"): the system, each
// chip's own report, every link, every collective with its exposed time.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "sim/report.hpp"

namespace systolic {
namespace {

using Interval = std::pair<uint64_t, uint64_t>;

// Merged, sorted intervals in which any MXU of the chip was computing.
std::vector<Interval> mxu_busy(const SimResult& chip) {
  std::vector<Interval> v;
  for (const auto& e : chip.engines)
    if (e.id.kind == EngineKind::mxu)
      for (const auto& r : e.records)
        if (r.end > r.start) v.emplace_back(r.start, r.end);
  std::sort(v.begin(), v.end());
  std::vector<Interval> merged;
  for (const auto& i : v)
    if (!merged.empty() && i.first <= merged.back().second) merged.back().second = std::max(merged.back().second, i.second);
    else merged.push_back(i);
  return merged;
}

uint64_t overlap(const std::vector<Interval>& busy, Interval span) {
  uint64_t o = 0;
  for (auto it = std::lower_bound(busy.begin(), busy.end(), Interval{0, span.first},
                                  [](const Interval& a, const Interval& b) { return a.second < b.second; });
       it != busy.end() && it->first < span.second; ++it)
    o += std::min(it->second, span.second) - std::max(it->first, span.first);
  return o;
}

}  // namespace

nlohmann::ordered_json make_system_report(const ChipConfig& config, const std::vector<Workload>& workloads,
                                          const std::vector<Program>& programs, const SystemResult& result) {
  using json = nlohmann::ordered_json;
  json report;
  report["schema_version"] = kReportSchemaVersion;
  report["generator"] = fmt::format("systolic {}", SYSTOLIC_VERSION);
  report["config"] = config_to_json(config);
  report["memory_timing"] = memory_timing(config);
  report["workload"] = {{"name", workloads.front().name}, {"path", workloads.front().path}};
  const double hz = config.clock_mhz * 1e6;
  const uint64_t total = result.total_cycles;
  report["system"] = {{"chips", result.chips.size()},
                      {"topology", kIciTopologyNames.name(config.ici.topology)},
                      {"dims", dims_text(config.ici.dims)},
                      {"link_gbps", config.ici.link_gbps},
                      {"link_latency_ns", config.ici.link_latency_ns},
                      {"algorithm", config.ici.algorithm}};

  // Collectives: on each chip, from its first message or addition to its last; exposed is the
  // part of that span in which none of the chip's MXUs computed. The slowest chip is reported.
  // The occurrences of one collective (one per layer) merge into the row of its name, their
  // times summed; bytes are one occurrence's, on the chip that sends the most.
  const Program& p0 = programs.front();
  std::vector<bool> is_collective;
  for (const auto& l : p0.layers) is_collective.push_back(l.kind == "collective");
  std::vector<std::vector<Interval>> spans;  // per chip, per program layer
  std::vector<std::vector<Interval>> busy;
  for (const auto& chip : result.chips) {
    busy.push_back(mxu_busy(chip));
    std::vector<Interval>& s = spans.emplace_back(p0.layers.size(), Interval{std::numeric_limits<uint64_t>::max(), 0});
    for (const auto& e : chip.engines)
      for (const auto& r : e.records)
        if (r.layer >= 0 && static_cast<size_t>(r.layer) < s.size() && is_collective[static_cast<size_t>(r.layer)]) {
          Interval& span = s[static_cast<size_t>(r.layer)];
          span = {std::min(span.first, r.start), std::max(span.second, r.end)};
        }
  }
  json collectives = json::array();
  std::map<std::string, size_t> row_of;
  uint64_t comm = 0, exposed_total = 0;
  size_t ordinal = 0;
  for (size_t layer = 0; layer < p0.layers.size(); ++layer) {
    if (!is_collective[layer]) continue;
    const CollectiveWork* c = ordinal < workloads.front().collectives.size() ? &workloads.front().collectives[ordinal] : nullptr;
    ++ordinal;
    uint64_t cycles = 0, exposed = 0, bytes = 0;
    for (size_t i = 0; i < result.chips.size(); ++i) {
      bytes = std::max(bytes, static_cast<uint64_t>(programs[i].layers[layer].m));
      const Interval span = spans[i][layer];
      if (span.second <= span.first) continue;
      cycles = std::max(cycles, span.second - span.first);
      exposed = std::max(exposed, span.second - span.first - overlap(busy[i], span));
    }
    comm += cycles;
    exposed_total += exposed;
    const std::string& name = p0.layers[layer].name;
    const auto [it, added] = row_of.emplace(name, collectives.size());
    if (!added) {
      json& row = collectives[it->second];
      row["occurrences"] = row["occurrences"].get<uint64_t>() + 1;
      row["bytes"] = std::max(row["bytes"].get<uint64_t>(), bytes);
      row["cycles"] = row["cycles"].get<uint64_t>() + cycles;
      row["exposed_cycles"] = row["exposed_cycles"].get<uint64_t>() + exposed;
      continue;
    }
    const std::string kind = c ? std::string(kCollectiveKindNames.name(c->kind)) : "?";
    collectives.push_back({{"name", name},
                           {"kind", kind},
                           {"algorithm", kind == "all_to_all" ? "direct" : config.ici.algorithm},
                           {"occurrences", uint64_t{1}},
                           {"bytes", bytes},
                           {"cycles", cycles},
                           {"exposed_cycles", exposed}});
  }

  json links = json::array();
  uint64_t link_bytes = 0;
  for (const auto& l : result.links) {
    const double busy_cycles = static_cast<double>(l.busy_ps) / 1000.0;
    link_bytes += l.bytes;
    links.push_back({{"name", l.name},
                     {"from", l.from},
                     {"to", l.to},
                     {"bytes", l.bytes},
                     {"busy_cycles", busy_cycles},
                     {"utilization", total ? busy_cycles / static_cast<double>(total) : 0.0}});
  }

  json chips = json::array();
  uint64_t macs = 0, ici_sent = 0;
  double chip_energy = 0;
  for (size_t i = 0; i < result.chips.size(); ++i) {
    json r = make_report(config, workloads[i], programs[i], result.chips[i]);
    uint64_t sent = 0;
    for (const auto& e : result.chips[i].engines)
      if (e.id.kind == EngineKind::ici) sent += e.ici.bytes_sent;
    ici_sent += sent;
    macs += r["totals"]["macs"].get<uint64_t>();
    chip_energy += r["energy_pj"]["total"].get<double>();
    json chip;
    chip["chip"] = i;
    chip["ici_bytes_sent"] = sent;
    for (const char* key : {"totals", "layers", "op_kinds", "engines", "memory", "energy_pj"}) chip[key] = r[key];
    chips.push_back(std::move(chip));
  }
  const double pes = static_cast<double>(config.mxu.rows * config.mxu.cols * config.mxu.count) *
                     static_cast<double>(result.chips.size());
  // ICI energy per byte per link crossed, counted by the chip that drives the link (docs/energy.md).
  double ici_pj = 0;
  for (const auto& c : chips) ici_pj += c["energy_pj"]["by_component"]["ici"].get<double>();
  report["totals"] = {{"cycles", total},
                      {"seconds", static_cast<double>(total) / hz},
                      {"macs", macs},
                      {"utilization", total ? static_cast<double>(macs) / (pes * static_cast<double>(total)) : 0.0},
                      {"ici_bytes_sent", ici_sent},
                      {"ici_link_bytes", link_bytes},
                      {"comm_cycles", comm},
                      {"exposed_comm_cycles", exposed_total},
                      {"overlapped_comm_cycles", comm - exposed_total}};
  report["energy_pj"] = {{"total", chip_energy}, {"chips", chip_energy - ici_pj}, {"ici", ici_pj}};
  report["collectives"] = std::move(collectives);
  report["links"] = std::move(links);
  report["chips"] = std::move(chips);
  return report;
}

std::string format_system_summary(const nlohmann::ordered_json& r) {
  const auto& s = r["system"];
  const auto& t = r["totals"];
  std::string out = fmt::format("{} | {} chips, {} {} | {} GB/s links, {} | workload {}\n",
                                r["config"]["name"].get<std::string>(), s["chips"].get<size_t>(),
                                s["topology"].get<std::string>(), s["dims"].get<std::string>(),
                                s["link_gbps"].get<double>(), s["algorithm"].get<std::string>(),
                                r["workload"]["name"].get<std::string>());
  out += memory_timing_line(r["config"]);
  out += fmt::format("{:<6} {:>14} {:>8} {:>16}\n", "chip", "cycles busy", "util", "ICI bytes sent");
  for (const auto& c : r["chips"]) {
    uint64_t mxu_busy = 0;
    for (const auto& e : c["engines"])
      if (e["name"].get<std::string>().rfind("mxu", 0) == 0) mxu_busy = std::max(mxu_busy, e["busy_cycles"].get<uint64_t>());
    out += fmt::format("{:<6} {:>14} {:>7.1f}% {:>16}\n", c["chip"].get<size_t>(), mxu_busy,
                       100 * c["totals"]["utilization"].get<double>(), c["ici_bytes_sent"].get<uint64_t>());
  }
  if (!r["collectives"].empty()) {
    out += fmt::format("{:<34} {:<15} {:<11} {:>12} {:>12} {:>12}\n", "collective", "kind", "algorithm", "bytes",
                       "cycles", "exposed");
    for (const auto& c : r["collectives"])
      out += fmt::format("{:<34} {:<15} {:<11} {:>12} {:>12} {:>12}\n", c["name"].get<std::string>(),
                         c["kind"].get<std::string>(), c["algorithm"].get<std::string>(), c["bytes"].get<int64_t>(),
                         c["cycles"].get<uint64_t>(), c["exposed_cycles"].get<uint64_t>());
  }
  out += fmt::format("total {} cycles ({:.6g} s), utilization {:.1f}%, communication {} cycles of which {} exposed\n",
                     t["cycles"].get<uint64_t>(), t["seconds"].get<double>(), 100 * t["utilization"].get<double>(),
                     t["comm_cycles"].get<uint64_t>(), t["exposed_comm_cycles"].get<uint64_t>());
  return out;
}

}  // namespace systolic
