#include "sim/serving/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "models/common/error.hpp"

namespace systolic {
namespace {

using json = nlohmann::ordered_json;

// A column of the comparison: its name and where it is in a replay of report.json.
struct Column {
  const char* name;
  json::json_pointer at;
  double scale = 1;  // pJ -> J
};

const std::vector<Column>& columns() {
  static const std::vector<Column> kColumns = {
      {"served", json::json_pointer("/serving/requests/served")},
      {"truncated", json::json_pointer("/serving/requests/truncated")},
      {"rejected", json::json_pointer("/serving/requests/rejected")},
      {"busy_s", json::json_pointer("/tax/busy_s")},
      {"energy_j", json::json_pointer("/tax/energy_pj"), 1e-12},
      {"tax_time", json::json_pointer("/tax/time")},
      {"tax_energy", json::json_pointer("/tax/energy")},
      {"ttft_p50_s", json::json_pointer("/serving/latency_s/ttft/p50")},
      {"ttft_p99_s", json::json_pointer("/serving/latency_s/ttft/p99")},
      {"tbt_p99_s", json::json_pointer("/serving/latency_s/tbt_mean/p99")},
      {"e2e_p99_s", json::json_pointer("/serving/latency_s/e2e/p99")},
      {"tokens_per_s", json::json_pointer("/serving/throughput/tokens_per_s")},
      {"pad_fraction", json::json_pointer("/serving/throughput/pad_fraction")},
      {"slo_attainment", json::json_pointer("/serving/slo/attainment")},
      {"goodput_rps", json::json_pointer("/serving/slo/goodput_rps")},
  };
  return kColumns;
}

// The column's value in `replay`; NaN where it does not exist (null, or no SLO given).
double value(const json& replay, const Column& c) {
  if (!replay.contains(c.at) || !replay.at(c.at).is_number()) return NAN;
  return replay.at(c.at).get<double>() * c.scale;
}

// Each replay of each variant: its scheduler, packer, bucket set and replay.
template <typename Row>
void each_row(const std::vector<PackOutput>& variants, Row&& row) {
  for (const PackOutput& v : variants)
    for (const json& replay : v.report["replays"])
      row(replay["serving"]["scheduler"].get<std::string>(), v.report["policy"]["packer"].get<std::string>(),
          replay["bucket_set"].get<std::string>(), replay);
}

// How the comparison is written: the key cells of a row (scheduler, packer, bucket set), the
// heading of a column and a value's cell (NaN: the replay has none).
struct TableStyle {
  std::string (*keys)(const std::string& scheduler, const std::string& packer, const std::string& set);
  const char* set_heading;
  std::string (*heading)(const Column& c);
  std::string (*cell)(const Column& c, double v);
};

// comparison.csv: 9 significant digits, an empty cell for no value.
const TableStyle kCsv{
    [](const std::string& scheduler, const std::string& packer, const std::string& set) {
      return fmt::format("{},{},{}", scheduler, packer, set);
    },
    "bucket_set", [](const Column& c) { return fmt::format(",{}", c.name); },
    [](const Column&, double v) { return std::isnan(v) ? std::string(",") : fmt::format(",{:.9g}", v); }};

// The terminal's table: aligned columns, 4 significant digits, "-" for no value.
size_t width(const Column& c) { return std::max<size_t>(10, std::string(c.name).size()); }
const TableStyle kAligned{
    [](const std::string& scheduler, const std::string& packer, const std::string& set) {
      return fmt::format("{:<14} {:<21} {:<14}", scheduler, packer, set);
    },
    "bucket set", [](const Column& c) { return fmt::format(" {:>{}}", c.name, width(c)); },
    [](const Column& c, double v) {
      return std::isnan(v) ? fmt::format(" {:>{}}", "-", width(c)) : fmt::format(" {:>{}.4g}", v, width(c));
    }};

// A heading line, then a line per replay of each variant.
std::string comparison_table(const std::vector<PackOutput>& variants, const TableStyle& style) {
  std::string out = style.keys("scheduler", "packer", style.set_heading);
  for (const Column& c : columns()) out += style.heading(c);
  out += "\n";
  each_row(variants, [&](const std::string& scheduler, const std::string& packer, const std::string& set,
                         const json& replay) {
    out += style.keys(scheduler, packer, set);
    for (const Column& c : columns()) out += style.cell(c, value(replay, c));
    out += "\n";
  });
  return out;
}

}  // namespace

std::vector<std::string> name_list(const std::string& value, const std::string& flag) {
  std::vector<std::string> names;
  std::stringstream in(value);
  for (std::string name; std::getline(in, name, ',');) {
    if (name.empty() || std::find(names.begin(), names.end(), name) != names.end())
      throw InputError(fmt::format("{} '{}': expected names separated by commas, each once", flag, value));
    names.push_back(name);
  }
  if (names.empty()) throw InputError(fmt::format("{} '': expected at least one name", flag));
  return names;
}

std::vector<std::string> scheduler_list(const std::string& value) { return name_list(value, "--scheduler"); }

std::vector<PackRequest> pack_variant_requests(const PackRequest& r) {
  std::vector<PackRequest> variants;
  for (const std::string& scheduler : scheduler_list(r.scheduler))
    for (const std::string& packer : name_list(r.packer, "--policy")) {
      variants.push_back(r);
      variants.back().scheduler = scheduler;
      variants.back().packer = packer;
    }
  return variants;
}

std::string comparison_csv(const std::vector<PackOutput>& variants) {
  return comparison_table(variants, kCsv);
}

std::string format_comparison(const std::vector<PackOutput>& variants) {
  return comparison_table(variants, kAligned);
}

}  // namespace systolic
