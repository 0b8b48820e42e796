// The header of a compiled trace: what the program was compiled for (docs/trace-format.md).
#include "sim/trace/trace_header.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <utility>

#include "models/common/error.hpp"
#include "sim/trace/trace_tokens.hpp"

namespace systolic {
namespace {

bool is_dtype_key(const std::string& key) {
  return key.size() >= 5 && key.compare(key.size() - 5, 5, "dtype") == 0;
}

}  // namespace

TraceHeader trace_header_for(const ChipConfig& config, int64_t chip) {
  TraceHeader h;
  h.dataflow = config.mxu.dataflow;  // also among the config lines; its own line for readers
  h.memory_ideal = config.memory.ideal;
  h.config = timing_config(config);
  for (const ConfigLine& l : h.config)
    if (is_dtype_key(l.key)) h.dtypes.push_back(l);
  h.chips = config.ici.chips();
  h.chip = chip;
  h.config_hash = fnv1a_64(canonical_text(h.config));
  return h;
}

std::string write_trace_header(const TraceHeader& h) {
  using trace_detail::quote;
  std::string out = fmt::format("systolic-trace {}\n", kTraceFormatVersion);
  out += fmt::format("dataflow {}\n", dataflow_of(h.dataflow).name());
  out += fmt::format("memory ideal={}\n", h.memory_ideal);
  out += "dtypes";
  for (const ConfigLine& d : h.dtypes) out += fmt::format(" {}={}", d.key, quote(d.value));
  out += fmt::format("\nsystem chips={} chip={}\n", h.chips, h.chip);
  out += fmt::format("config_hash {:#018x}  # FNV-1a 64 of the config lines, as \"<key> <value>\\n\"\n",
                     h.config_hash);
  for (const ConfigLine& l : h.config) out += fmt::format("config {} {}\n", l.key, quote(l.value));
  return out;
}

nlohmann::ordered_json trace_report(const TraceHeader& h, const ChipConfig& run_config) {
  nlohmann::ordered_json dtypes = nlohmann::ordered_json::object();
  for (const ConfigLine& d : h.dtypes) dtypes[d.key] = d.value;
  return {{"format_version", kTraceFormatVersion},
          {"compiled_for",
           {{"dataflow", std::string(dataflow_of(h.dataflow).name())},
            {"memory_ideal", h.memory_ideal},
            {"dtypes", std::move(dtypes)},
            {"chips", h.chips},
            {"chip", h.chip},
            {"config_hash", fmt::format("{:#018x}", h.config_hash)}}},
          {"timed_with", {{"memory_ideal", run_config.memory.ideal}}}};
}

namespace trace_detail {
namespace {

// "line N: key = a, but the config has b" for every key the trace and the config disagree on.
std::vector<std::pair<int, std::string>> config_differences(const TraceHeader& h, const HeaderLines& at,
                                                            const ChipConfig& config) {
  const std::vector<ConfigLine> now = timing_config(config);
  std::vector<std::pair<int, std::string>> out;
  const auto show = [](const ConfigLine& l) { return display_config_value(l.key, l.value); };
  size_t i = 0, j = 0;
  while (i < h.config.size() || j < now.size()) {
    const ConfigLine* was = i < h.config.size() ? &h.config[i] : nullptr;
    const ConfigLine* is = j < now.size() ? &now[j] : nullptr;
    if (was && is && was->key == is->key) {
      if (was->value != is->value)
        out.emplace_back(at.config.at(was->key),
                         fmt::format("{} = {}, but the config has {}", was->key, show(*was), show(*is)));
      ++i, ++j;
    } else if (was && (!is || was->key < is->key)) {
      out.emplace_back(at.config.at(was->key), fmt::format("{} = {}, a key this build does not have", was->key, show(*was)));
      ++i;
    } else {
      out.emplace_back(at.hash, fmt::format("{} is not recorded, but the config has {}", is->key, show(*is)));
      ++j;
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace

void check_header(const TraceHeader& h, const HeaderLines& at, const ChipConfig& config, const std::string& file) {
  const auto fail = [&](int line, const std::string& msg) {
    throw InputError(fmt::format("{}:{}: {}", file, line, msg));
  };
  const uint64_t hashed = fnv1a_64(canonical_text(h.config));
  if (hashed != h.config_hash)
    fail(at.hash, fmt::format("config_hash {:#018x} does not match the config lines, which hash to {:#018x}: "
                              "the header was edited; recompile the trace with `systolic compile`",
                              h.config_hash, hashed));
  const auto diffs = config_differences(h, at, config);
  if (!diffs.empty()) {
    std::string msg = fmt::format("{}:{}: compiled for {}", file, diffs[0].first, diffs[0].second);
    for (size_t i = 1; i < diffs.size(); ++i) msg += fmt::format("; line {}: {}", diffs[i].first, diffs[i].second);
    const std::string source = config.source.empty() ? "" : " -c " + config.source;
    throw InputError(msg + fmt::format(". Recompile the trace for this config (`systolic compile{} ...`), or run "
                                       "it with -c the config it was compiled for",
                                       source));
  }
  // The config lines agree, so the lines derived from them must too (else they were edited).
  const TraceHeader expected = trace_header_for(config, h.chip);
  if (h.dataflow != expected.dataflow)
    fail(at.dataflow, fmt::format("dataflow {} disagrees with the config line mxu.dataflow = {}: the header was "
                                  "edited; recompile the trace with `systolic compile`",
                                  dataflow_of(h.dataflow).name(), dataflow_of(expected.dataflow).name()));
  const auto same = [](const ConfigLine& a, const ConfigLine& b) { return a.key == b.key && a.value == b.value; };
  if (!std::equal(h.dtypes.begin(), h.dtypes.end(), expected.dtypes.begin(), expected.dtypes.end(), same)) {
    std::string want;
    for (const ConfigLine& d : expected.dtypes) want += fmt::format(" {}={}", d.key, d.value);
    fail(at.dtypes, fmt::format("expected 'dtypes{}' (the config lines' operand types)", want));
  }
  if (h.chips != expected.chips)
    fail(at.system, fmt::format("compiled for a system of {} chip(s), but ici.dims = {} makes {}", h.chips,
                                dims_text(config.ici.dims), expected.chips));
  if (h.chip >= h.chips) fail(at.system, fmt::format("chip {} is not one of the system's {} chip(s)", h.chip, h.chips));
}

}  // namespace trace_detail
}  // namespace systolic
