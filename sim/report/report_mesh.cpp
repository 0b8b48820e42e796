// report.json's `mesh` and `pipeline` sections (docs/report.md) and their summary lines: which
// torus axes each parallelism group spans and the ring its collectives take, and a pipeline's
// bubble against the GPipe closed form.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

#include "models/ici/topology.hpp"
#include "sim/report/detail.hpp"

namespace systolic::report_detail {

using json = nlohmann::ordered_json;

namespace {

using Interval = std::pair<uint64_t, uint64_t>;

std::string torus_axes(const std::vector<int64_t>& factors) {
  std::string out;
  for (size_t d = 0; d < factors.size() && d < 3; ++d)
    if (factors[d] > 1) out += "xyz"[d];
  return out;
}

// The order a group's chips talk in and the most hops a message between two of them crosses:
// tp and dp, their grid's ring order (the ring and bidir_ring algorithms' ring; its closing
// pair too); pp, the stages in order, each to the next; ep, its members, every pair (the
// all-to-all sends directly).
json ring_json(const MeshAxisPlace& axis, const Topology& system) {
  std::vector<int> ring = axis.group.members;
  std::vector<std::pair<int, int>> pairs;
  if (axis.name == "ep") {
    for (int a : ring)
      for (int b : ring)
        if (a != b) pairs.emplace_back(a, b);
  } else {
    if (axis.name != "pp") {
      const Topology grid(axis.group.dims, axis.group.wraps ? Topology::Wrap::torus : Topology::Wrap::mesh);
      ring.clear();
      for (int p : grid.ring_order()) ring.push_back(axis.group.members[static_cast<size_t>(p)]);
      if (ring.size() > 1) pairs.emplace_back(ring.back(), ring.front());
    }
    for (size_t i = 0; i + 1 < ring.size(); ++i) pairs.emplace_back(ring[i], ring[i + 1]);
  }
  size_t hops = 0;
  for (const auto& [a, b] : pairs) hops = std::max(hops, system.route(a, b).size());
  return {{"chips", ring}, {"max_hops", hops}};
}

}  // namespace

json mesh_json(const ChipConfig& config, const SharedWorkloads& workloads) {
  if (workloads.empty() || !workloads.front()->mesh) return nullptr;
  const MeshPlace& place = *workloads.front()->mesh;  // chip 0's groups
  const Topology system = config.ici.build_topology();
  json axes = json::array();
  for (const MeshAxisPlace& a : place.axes) {
    json axis = {{"name", a.name}, {"degree", a.degree}};
    if (a.name != "ep") {
      axis["dims"] = dims_text(a.factors);
      axis["torus_axes"] = torus_axes(a.factors);
      axis["wraps"] = a.group.wraps;
    }
    axis["ring_of_chip0"] = ring_json(a, system);
    axes.push_back(std::move(axis));
  }
  return {{"text", place.text}, {"micro_batches", place.micro_batches}, {"axes", std::move(axes)}};
}

namespace {

// Per layer of a chip's program: the span of its instructions.
std::vector<Interval> layer_spans(const Program& p, const SimResult& chip) {
  std::vector<Interval> s(p.layers.size(), Interval{std::numeric_limits<uint64_t>::max(), 0});
  for (const auto& e : chip.engines)
    for (const auto& r : e.records)
      if (r.layer >= 0 && static_cast<size_t>(r.layer) < s.size()) {
        Interval& at = s[static_cast<size_t>(r.layer)];
        at = {std::min(at.first, r.start), std::max(at.second, r.end)};
      }
  return s;
}

bool is_boundary(const LayerInfo& l, const char* which) {
  return l.kind == LayerKind::collective && l.name == std::string("pipeline.") + which;
}

// When each micro-batch a chip passed on had landed: the ends of its "pipeline.send"s.
std::vector<uint64_t> sends_landed(const Program& p, const SimResult& chip) {
  const auto spans = layer_spans(p, chip);
  std::vector<uint64_t> out;
  for (size_t i = 0; i < p.layers.size(); ++i)
    if (is_boundary(p.layers[i], "send")) out.push_back(spans[i].second);
  return out;
}

// Cycles a pipeline stage's chip works: the union of its micro-batches' spans, each from its
// arrival (`arrivals`, the stage before's sends landing; the program's start on the first
// stage) or its first instruction if later, to its last instruction before it is sent on.
// (A micro-batch's weight loads may start before its activations arrive: that is not work.)
uint64_t stage_work(const Program& p, const SimResult& chip, const std::vector<uint64_t>& arrivals) {
  const auto spans = layer_spans(p, chip);
  std::vector<Interval> work;
  Interval mb{std::numeric_limits<uint64_t>::max(), 0};
  uint64_t arrived = 0;
  size_t received = 0;
  const auto close = [&] {
    if (mb.second > std::max(mb.first, arrived)) work.emplace_back(std::max(mb.first, arrived), mb.second);
    mb = {std::numeric_limits<uint64_t>::max(), 0};
  };
  for (size_t i = 0; i < p.layers.size(); ++i) {
    if (is_boundary(p.layers[i], "recv") || is_boundary(p.layers[i], "send")) {
      close();
      if (is_boundary(p.layers[i], "recv")) arrived = received < arrivals.size() ? arrivals[received++] : 0;
      continue;
    }
    if (spans[i].second > spans[i].first)
      mb = {std::min(mb.first, spans[i].first), std::max(mb.second, spans[i].second)};
  }
  close();
  std::sort(work.begin(), work.end());
  uint64_t total = 0, until = 0;
  for (const Interval& w : work) {
    const uint64_t from = std::max(w.first, until);
    if (w.second > from) total += w.second - from;
    until = std::max(until, w.second);
  }
  return total;
}

const MeshAxisPlace* pp_axis(const Workload& w) {
  for (const auto& a : w.mesh->axes)
    if (a.name == "pp") return &a;
  return nullptr;
}

}  // namespace

json pipeline_json(const SharedWorkloads& workloads, const std::vector<SharedProgram>& programs,
                   const SystemResult& result) {
  if (workloads.empty() || !workloads.front()->mesh) return nullptr;
  const MeshPlace& place = *workloads.front()->mesh;
  const int64_t stages = pp_axis(*workloads.front())->degree;
  if (stages < 2) return nullptr;
  const int64_t m = place.micro_batches;
  std::vector<double> bubble(static_cast<size_t>(stages), 0.0), work(static_cast<size_t>(stages), 0.0);
  std::vector<std::vector<size_t>> chips(static_cast<size_t>(stages));
  for (size_t i = 0; i < result.chip_count(); ++i) {
    const MeshAxisPlace& pp = *pp_axis(*workloads[i]);
    const int64_t stage = pp.rank;
    std::vector<uint64_t> arrivals;
    if (stage > 0) {
      const auto before = static_cast<size_t>(pp.group.members[static_cast<size_t>(stage - 1)]);
      arrivals = sends_landed(*programs[before], result.chip(before));
    }
    const double worked = static_cast<double>(stage_work(*programs[i], result.chip(i), arrivals));
    work[static_cast<size_t>(stage)] += worked;
    bubble[static_cast<size_t>(stage)] +=
        1.0 - worked / static_cast<double>(std::max<uint64_t>(1, result.total_cycles));
    chips[static_cast<size_t>(stage)].push_back(i);
  }
  json per_stage = json::array();
  double mean = 0;
  for (size_t s = 0; s < bubble.size(); ++s) {
    const double n = static_cast<double>(std::max<size_t>(1, chips[s].size()));
    bubble[s] /= n;
    mean += bubble[s] / static_cast<double>(stages);
    per_stage.push_back({{"stage", s},
                         {"chips", chips[s]},
                         {"bubble_fraction", bubble[s]},
                         {"work_cycles", static_cast<uint64_t>(work[s] / n + 0.5)}});
  }
  return {{"stages", stages},
          {"micro_batches", m},
          {"bubble_fraction", mean},
          {"gpipe_bubble_fraction", static_cast<double>(stages - 1) / static_cast<double>(m + stages - 1)},
          {"per_stage", std::move(per_stage)}};
}

std::string format_mesh_summary(const json& report) {
  std::string out;
  if (report.contains("mesh")) {
    const json& mesh = report["mesh"];
    out += fmt::format("mesh {}", mesh["text"].get<std::string>());
    for (const auto& a : mesh["axes"]) {
      if (a["degree"].get<int64_t>() < 2) continue;
      std::vector<int> ring = a["ring_of_chip0"]["chips"].get<std::vector<int>>();
      out += fmt::format(" | {}={}", a["name"].get<std::string>(), a["degree"].get<int64_t>());
      if (a.contains("torus_axes"))
        out += fmt::format(" on {} ({}{})", a["torus_axes"].get<std::string>(), a["dims"].get<std::string>(),
                           a["wraps"].get<bool>() ? ", wraps" : "");
      out += fmt::format(", chip 0's {} {} ({} hop{} at most)", a["name"] == "pp" ? "stages" : "ring",
                         fmt::join(ring, "-"), a["ring_of_chip0"]["max_hops"].get<size_t>(),
                         a["ring_of_chip0"]["max_hops"].get<size_t>() == 1 ? "" : "s");
    }
    out += "\n";
  }
  if (report.contains("pipeline")) {
    const json& p = report["pipeline"];
    out += fmt::format(
        "pipeline {} stages x {} micro-batches: bubble {:.1f}% of the run (GPipe (p-1)/(m+p-1) = {:.1f}%)\n",
        p["stages"].get<int64_t>(), p["micro_batches"].get<int64_t>(),
        100 * p["bubble_fraction"].get<double>(), 100 * p["gpipe_bubble_fraction"].get<double>());
  }
  return out;
}

}  // namespace systolic::report_detail
