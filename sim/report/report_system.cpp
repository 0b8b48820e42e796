// report.json's top level (docs/report.md): the system (one chip: a one-chip system), its
// totals and energy summed from each chip's section (sim/report/report.cpp), every collective with its
// exposed time, every link, the chips.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <tuple>

#include "sim/compile/overlap.hpp"
#include "sim/config/config.hpp"
#include "sim/report/cost.hpp"
#include "sim/report/detail.hpp"
#include "sim/report/report.hpp"

namespace systolic {

using json = nlohmann::ordered_json;

namespace {

using Interval = std::pair<uint64_t, uint64_t>;

// Merged, sorted intervals in which any MXU of the chip was computing.
std::vector<Interval> mxu_busy(const SimResult& chip) {
  std::vector<Interval> v;
  for (const auto& e : chip.engines) {
    if (e.id.kind != EngineKind::mxu) continue;
    const size_t before = v.size();
    for (const auto& r : e.records)
      if (r.end > r.start) v.emplace_back(r.start, r.end);
    // An engine's records come in time order (one instruction after another): merged into the
    // others', the whole is sorted in O(n log engines), not sorted afresh.
    const auto mine = v.begin() + static_cast<std::ptrdiff_t>(before);
    if (!std::is_sorted(mine, v.end())) std::sort(mine, v.end());
    std::inplace_merge(v.begin(), mine, v.end());
  }
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

json system_json(const ChipConfig& config, size_t chips) {
  return {{"chips", chips},
          {"topology", kIciTopologyNames.name(config.ici.topology)},
          {"dims", dims_text(config.ici.dims)},
          {"wraparound", config.ici.wraparound},
          {"link_gbps", config.ici.link_gbps},
          {"link_latency_ns", config.ici.link_latency_ns},
          {"algorithm", config.ici.algorithm}};
}

// Per layer of a chip's program: the span of the collective layers' instructions.
std::vector<Interval> collective_spans(const Program& p, const SimResult& chip) {
  std::vector<Interval> s(p.layers.size(), Interval{std::numeric_limits<uint64_t>::max(), 0});
  for (const auto& e : chip.engines)
    for (const auto& r : e.records) {
      const auto layer = static_cast<size_t>(r.layer);
      if (r.layer < 0 || layer >= s.size() || p.layers[layer].kind != LayerKind::collective) continue;
      s[layer] = {std::min(s[layer].first, r.start), std::max(s[layer].second, r.end)};
    }
  return s;
}

// One occurrence of a collective: its bytes, its time and exposed time on the slowest chip.
struct Occurrence {
  uint64_t bytes = 0, cycles = 0, exposed = 0;
  const CollectiveWork* work = nullptr;  // as the first chip that runs it has it
  size_t chip = 0;
};

struct CommSums {
  uint64_t cycles = 0, exposed = 0;
};

// Every occurrence of every collective, keyed by its name and how many of that name came
// before it on the chip, in the order chip 0 meets them, then any that only later chips run (the
// stages of a pipeline run different layers). Each chip's span is from its first message or
// addition to its last; exposed is the part of it in which none of the chip's MXUs computed.
std::vector<std::pair<std::string, Occurrence>> occurrences(const SharedWorkloads& workloads,
                                                            const std::vector<SharedProgram>& programs,
                                                            const SystemResult& result) {
  std::vector<std::pair<std::string, Occurrence>> out;
  std::map<std::pair<std::string, size_t>, size_t> index;
  // Spans and busy time follow from a program and its simulated chip's records: chips of one
  // class that share a program (compile_system) share them.
  std::map<std::pair<const Program*, size_t>, std::pair<std::vector<Interval>, std::vector<Interval>>> of;
  for (size_t i = 0; i < result.chip_count(); ++i) {
    const Program& p = *programs[i];
    // A chip without collectives has none to add (and sorting its MXUs' busy intervals, one
    // per matmul, was a few percent of a large single-chip run).
    if (std::none_of(p.layers.begin(), p.layers.end(),
                     [](const LayerInfo& l) { return l.kind == LayerKind::collective; }))
      continue;
    auto [at, fresh] = of.try_emplace({&p, result.result_of[i]});
    if (fresh) at->second = {collective_spans(p, result.chip(i)), mxu_busy(result.chip(i))};
    const auto& [spans, busy] = at->second;
    std::map<std::string, size_t> seen;
    size_t ordinal = 0;
    for (size_t layer = 0; layer < p.layers.size(); ++layer) {
      if (p.layers[layer].kind != LayerKind::collective) continue;
      const std::string& name = p.layers[layer].name;
      const auto [it, added] = index.try_emplace({name, seen[name]++}, out.size());
      if (added) out.push_back({name, {}});
      Occurrence& o = out[it->second].second;
      if (!o.work && ordinal < workloads[i]->collectives.size())
        o = {0, 0, 0, &workloads[i]->collectives[ordinal], i};
      ++ordinal;
      o.bytes = std::max(o.bytes, static_cast<uint64_t>(p.layers[layer].m));
      const Interval span = spans[layer];
      if (span.second <= span.first) continue;
      o.cycles = std::max(o.cycles, span.second - span.first);
      o.exposed = std::max(o.exposed, span.second - span.first - overlap(busy, span));
    }
  }
  return out;
}

// A collective the sharder asked to decompose: whether the compiler did, beside which matmul
// (sim/compile/overlap.hpp), or why not.
json overlap_json(const ChipConfig& config, const SharedWorkloads& workloads, const Occurrence& o) {
  const Workload& w = *workloads[o.chip];
  const auto plans = compile_detail::plan_overlap(config, w, static_cast<int>(o.chip));
  const compile_detail::OverlapPlan& plan = plans[static_cast<size_t>(o.work - w.collectives.data())];
  if (!plan.decomposed) return {{"decomposed", false}, {"reason", plan.why_not}};
  return {{"decomposed", true}, {"steps", plan.blocks - 1}, {"matmul", w.gemms[plan.gemm].name}};
}

// Collectives: the occurrences of one collective (one per layer, per micro-batch) merge into
// the row of its name, their times summed; bytes are one occurrence's, on the chip that sends
// the most. A row the sharder asked to decompose says whether it was and how much was hidden.
json collectives_json(const ChipConfig& config, const SharedWorkloads& workloads,
                      const std::vector<SharedProgram>& programs, const SystemResult& result, CommSums& comm) {
  json collectives = json::array();
  std::map<std::string, size_t> row_of;
  for (const auto& [name, o] : occurrences(workloads, programs, result)) {
    comm.cycles += o.cycles;
    comm.exposed += o.exposed;
    const auto [it, added] = row_of.emplace(name, collectives.size());
    if (!added) {
      json& row = collectives[it->second];
      row["occurrences"] = row["occurrences"].get<uint64_t>() + 1;
      row["bytes"] = std::max(row["bytes"].get<uint64_t>(), o.bytes);
      row["cycles"] = row["cycles"].get<uint64_t>() + o.cycles;
      row["exposed_cycles"] = row["exposed_cycles"].get<uint64_t>() + o.exposed;
      if (row.contains("hidden_cycles"))
        row["hidden_cycles"] = row["cycles"].get<uint64_t>() - row["exposed_cycles"].get<uint64_t>();
      continue;
    }
    const CollectiveWork* c = o.work;
    // all-to-all: each chip sends to each, no algorithm; permute: to one neighbour.
    const bool direct = c && (c->kind == CollectiveKind::all_to_all || c->kind == CollectiveKind::permute);
    collectives.push_back({{"name", name},
                           {"kind", c ? std::string(kCollectiveKindNames.name(c->kind)) : "?"},
                           {"algorithm", direct ? "direct" : config.ici.algorithm},
                           {"occurrences", uint64_t{1}},
                           {"bytes", o.bytes},
                           {"cycles", o.cycles},
                           {"exposed_cycles", o.exposed}});
    if (c && c->decompose != Decompose::none) {
      collectives.back()["hidden_cycles"] = o.cycles - o.exposed;
      collectives.back()["overlap"] = overlap_json(config, workloads, o);
    }
  }
  return collectives;
}

json links_json(const SystemResult& result, uint64_t& link_bytes) {
  json links = json::array();
  for (const auto& l : result.links) {
    const double busy_cycles = static_cast<double>(l.busy_ps) / 1000.0;
    link_bytes += l.bytes;
    links.push_back({{"name", l.name},
                     {"from", l.from},
                     {"to", l.to},
                     {"bytes", l.bytes},
                     {"busy_cycles", busy_cycles},
                     {"utilization", result.total_cycles ? busy_cycles / static_cast<double>(result.total_cycles) : 0.0}});
  }
  return links;
}

// The chips' energies added up, field by field (joules add): the same fields as a chip's.
void add_energy(json& sum, const json& chip) {
  if (sum.is_null()) {
    sum = chip;
    return;
  }
  for (auto& [key, value] : sum.items())
    if (value.is_object()) add_energy(value, chip[key]);
    else value = value.get<double>() + chip[key].get<double>();
}

uint64_t ici_bytes_sent(const SimResult& chip) {
  uint64_t sent = 0;
  for (const auto& e : chip.engines)
    if (e.id.kind == EngineKind::ici) sent += e.ici.bytes_sent;
  return sent;
}

// How the system was simulated: the chips simulated, one per class of chips that evolve
// alike (models/system/symmetry.hpp), the symmetries that showed it, and what kept chips apart.
json simulation_json(const SystemResult& result) {
  const SimulationPlan& plan = result.plan;
  json classes = json::array();
  std::map<int, size_t> row;
  for (size_t i = 0; i < plan.representative.size(); ++i) {
    const auto [it, added] = row.emplace(plan.representative[i], classes.size());
    if (added) classes.push_back({{"simulated", plan.representative[i]}, {"chips", json::array()}});
    classes[it->second]["chips"].push_back(i);
  }
  return {{"chips_simulated", plan.simulated()},
          {"every_chip", plan.every_chip},
          {"symmetries", plan.symmetries},
          {"limit", plan.limit.empty() ? json(nullptr) : json(plan.limit)},
          {"classes", std::move(classes)}};
}

}  // namespace

nlohmann::ordered_json make_report(const ChipConfig& config, const SharedWorkloads& workloads,
                                   const std::vector<SharedProgram>& programs, const SystemResult& result,
                                   int64_t tokens) {
  json report;
  report["schema_version"] = kReportSchemaVersion;
  report["generator"] = fmt::format("systolic {}", SYSTOLIC_VERSION);
  report["config"] = config_to_json(config);
  report["memory_timing"] = memory_timing(config);
  report["workload"] = {{"name", workloads.front()->name}, {"path", workloads.front()->path}};
  report["system"] = system_json(config, result.chip_count());
  // A single chip's report stays as it was: there is nothing to merge.
  if (result.chip_count() > 1) report["simulation"] = simulation_json(result);

  CommSums comm;
  json collectives = collectives_json(config, workloads, programs, result, comm);
  uint64_t link_bytes = 0;
  json links = links_json(result, link_bytes);
  json chips = json::array();
  json energy;
  report_detail::RunSums sums;
  uint64_t ici_sent = 0;
  // A chip's section follows from its workload, program and results: chips that share all three
  // (a class whose programs are one object) share one.
  std::map<std::tuple<const Workload*, const Program*, size_t>, report_detail::ChipReport> made;
  for (size_t i = 0; i < result.chip_count(); ++i) {
    const auto key = std::make_tuple(workloads[i].get(), programs[i].get(), result.result_of[i]);
    auto it = made.find(key);
    if (it == made.end())
      it = made.emplace(key,
                        report_detail::make_chip_report(config, *workloads[i], *programs[i], result.chip(i)))
               .first;
    const report_detail::ChipReport& r = it->second;
    sums.add(r.sums);
    add_energy(energy, r.json["energy_pj"]);
    json chip;
    chip["chip"] = i;
    chip["ici_bytes_sent"] = ici_bytes_sent(result.chip(i));
    ici_sent += chip["ici_bytes_sent"].get<uint64_t>();
    for (const auto& [k, value] : r.json.items()) chip[k] = value;
    chips.push_back(std::move(chip));
  }
  json& totals = report["totals"] =
      report_detail::totals_json(config, result.chip_count(), result.total_cycles, sums);
  totals["ici_bytes_sent"] = ici_sent;
  totals["ici_link_bytes"] = link_bytes;
  totals["comm_cycles"] = comm.cycles;
  totals["exposed_comm_cycles"] = comm.exposed;
  totals["overlapped_comm_cycles"] = comm.cycles - comm.exposed;
  report["energy_pj"] = std::move(energy);
  report["area_mm2"] = area_json(config, result.chip_count());
  report["power_w"] = power_json(report);
  report["efficiency"] = efficiency_json(config, report, tokens);
  report["collectives"] = std::move(collectives);
  if (json mesh = report_detail::mesh_json(config, workloads); !mesh.is_null())
    report["mesh"] = std::move(mesh);
  if (json p = report_detail::pipeline_json(workloads, programs, result); !p.is_null())
    report["pipeline"] = std::move(p);
  report["links"] = std::move(links);
  report["chips"] = std::move(chips);
  return report;
}

namespace {

std::string format_system_summary(const nlohmann::ordered_json& r) {
  const auto& s = r["system"];
  const auto& t = r["totals"];
  std::string out = fmt::format("{} | {} chips, {} {}{} | {} GB/s links, {} | workload {}\n",
                                r["config"]["name"].get<std::string>(), s["chips"].get<size_t>(),
                                s["topology"].get<std::string>(), s["dims"].get<std::string>(),
                                s["wraparound"].get<bool>() ? "" : " mesh (no wraparound)",
                                s["link_gbps"].get<double>(), s["algorithm"].get<std::string>(),
                                r["workload"]["name"].get<std::string>());
  out += memory_timing_line(r["config"]);
  out += report_detail::format_mesh_summary(r);
  out += fmt::format("{:<6} {:>14} {:>8} {:>16}\n", "chip", "cycles busy", "util", "ICI bytes sent");
  for (const auto& c : r["chips"]) {
    uint64_t mxu_busy = 0;
    for (const auto& e : c["engines"])
      if (e["name"].get<std::string>().rfind("mxu", 0) == 0) mxu_busy = std::max(mxu_busy, e["busy_cycles"].get<uint64_t>());
    out += fmt::format("{:<6} {:>14} {:>7.1f}% {:>16}\n", c["chip"].get<size_t>(), mxu_busy,
                       100 * c["totals"]["utilization"].get<double>(), c["ici_bytes_sent"].get<uint64_t>());
  }
  // Runs that asked to overlap collectives with their matmuls add what was hidden under compute
  // and whether each was decomposed; the others keep the table as it was.
  bool overlap = false;
  for (const auto& c : r["collectives"]) overlap |= c.contains("overlap");
  if (!r["collectives"].empty()) {
    out += fmt::format("{:<34} {:<15} {:<11} {:>12} {:>12} {:>12}{}\n", "collective", "kind", "algorithm",
                       "bytes", "cycles", "exposed",
                       overlap ? fmt::format(" {:>12}  decomposed", "hidden") : "");
    for (const auto& c : r["collectives"]) {
      const uint64_t cycles = c["cycles"].get<uint64_t>(), exposed = c["exposed_cycles"].get<uint64_t>();
      const std::string decomposed = !c.contains("overlap") ? "-"
                                     : c["overlap"]["decomposed"].get<bool>()
                                         ? fmt::format("{} steps", c["overlap"]["steps"].get<int64_t>())
                                         : "no";
      out += fmt::format("{:<34} {:<15} {:<11} {:>12} {:>12} {:>12}{}\n", c["name"].get<std::string>(),
                         c["kind"].get<std::string>(), c["algorithm"].get<std::string>(),
                         c["bytes"].get<int64_t>(), cycles, exposed,
                         overlap ? fmt::format(" {:>12}  {}", cycles - exposed, decomposed) : "");
    }
  }
  out += fmt::format(
      "total {} cycles ({:.6g} s), utilization {:.1f}%, communication {} cycles of which {} exposed{}\n",
      t["cycles"].get<uint64_t>(), t["seconds"].get<double>(), 100 * t["utilization"].get<double>(),
      t["comm_cycles"].get<uint64_t>(), t["exposed_comm_cycles"].get<uint64_t>(),
      overlap ? fmt::format(", {} hidden", t["overlapped_comm_cycles"].get<uint64_t>()) : "");
  return out;
}

}  // namespace

std::string format_summary(const nlohmann::ordered_json& report) {
  return report["chips"].size() == 1 ? report_detail::format_chip_summary(report) : format_system_summary(report);
}

}  // namespace systolic
