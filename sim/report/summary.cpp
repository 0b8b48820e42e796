// The terminal summary of a single-chip report (report.json in, text out): the header line,
// the memory-timing line and one row per layer with the totals. The multi-chip summary is in
// report_system.cpp; format_summary there picks one of the two.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "sim/report/detail.hpp"
#include "sim/report/report.hpp"

namespace systolic {

std::string memory_timing_line(const nlohmann::ordered_json& config) {
  return config["memory"]["ideal"].get<bool>()
             ? "memory: IDEAL what-if (memory.ideal=true): transfers take no time, so every time below is a "
               "lower bound\n"
             : "memory: real (HBM, DMA engines and scratchpads timed)\n";
}

namespace report_detail {

std::string format_chip_summary(const nlohmann::ordered_json& r) {
  const auto& cfg = r["config"];
  std::string out = fmt::format(
      "{} | {} x {}x{} MXU ({}, {}, {}, {}) @ {} MHz | workload {}\n", cfg["name"].get<std::string>(),
      cfg["mxu"]["count"].get<int64_t>(), cfg["mxu"]["rows"].get<int64_t>(),
      cfg["mxu"]["cols"].get<int64_t>(), cfg["mxu"]["model"].get<std::string>(),
      cfg["mxu"]["convention"].get<std::string>(), cfg["mxu"]["dataflow"].get<std::string>(),
      cfg["mxu"]["dtype"].get<std::string>(),
      cfg["clock_mhz"].get<double>(), r["workload"]["name"].get<std::string>());
  out += memory_timing_line(cfg);
  // The name column is as wide as the longest name (never cut: a cut name is ambiguous).
  const auto& layers = r["chips"][0]["layers"];
  const auto shown_name = [](const nlohmann::ordered_json& l) {
    std::string name = l["name"].get<std::string>();
    if (l["repeat"].get<int64_t>() > 1) name += fmt::format(" x{}", l["repeat"].get<int64_t>());
    return name;
  };
  size_t w = 5;
  for (const auto& l : layers) w = std::max(w, shown_name(l).size());
  // With a real memory system two more columns: achieved HBM bandwidth and what bound it.
  const bool memory = !cfg["memory"]["ideal"].get<bool>();
  const auto row = [&](const std::string& name, const std::string& m, const std::string& k,
                       const std::string& n, const std::string& folds, const std::string& cycles,
                       const std::string& util, const std::string& map, const std::string& gbps,
                       const std::string& bound) {
    std::string line = fmt::format("{:<{}}  {:>8} {:>8} {:>8}  {:>7}  {:>14}  {:>6}  {:>7}", name, w, m, k,
                                   n, folds, cycles, util, map);
    if (memory) line += fmt::format("  {:>8}  {:>7}", gbps, bound);
    return line + "\n";
  };
  out += row("layer", "M", "K", "N", "folds", "cycles", "util", "mapeff", "HBM GB/s", "bound");
  const auto pct = [](double v) { return fmt::format("{:.1f}%", 100 * v); };
  const auto gbps = [](const nlohmann::ordered_json& j) { return fmt::format("{:.1f}", j["hbm_gbps"].get<double>()); };
  for (const auto& l : layers) {
    out += row(shown_name(l), std::to_string(l["m"].get<int64_t>()), std::to_string(l["k"].get<int64_t>()),
               std::to_string(l["n"].get<int64_t>()), std::to_string(l["folds"].get<int64_t>()),
               std::to_string(l["cycles"].get<uint64_t>()), pct(l["utilization"].get<double>()),
               pct(l["mapping_efficiency"].get<double>()), gbps(l), l["bound"].get<std::string>());
  }
  const auto& t = r["totals"];
  out += row("total", "", "", "", "", std::to_string(t["cycles"].get<uint64_t>()),
             pct(t["utilization"].get<double>()), pct(t["mapping_efficiency"].get<double>()), gbps(t),
             t["bound"].get<std::string>());
  out += fmt::format("{} MACs in {:.6g} s\n", t["macs"].get<uint64_t>(), t["seconds"].get<double>());
  return out;
}

}  // namespace report_detail

}  // namespace systolic
