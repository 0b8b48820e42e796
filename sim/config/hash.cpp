#include "sim/config/hash.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace systolic {

bool changes_program_or_timing(const ConfigKey& key) {
  // A preset resets its section; the keys it fills are hashed one by one.
  if (key.first) return false;
  if (key.path.rfind("energy.", 0) == 0) return false;  // energy only: no program, no cycle changes
  if (key.path.rfind("area.", 0) == 0) return false;    // a die's area and cost: the same, too
  static const std::set<std::string> kTimingFree = {
      "name",          // a label
      "mxu.model",     // exact and fast give identical cycle counts (docs/mxu.md)
      "mxu.seed",      // the exact model's operand values, not its timing
      "memory.ideal",  // timing only, recorded on its own line: one lowering serves both modes
      // A limit, not a timing: the reader checks the trace's own footprint against the run's
      // capacity (sim/compile/capacity.hpp), so a trace can run on any part it fits.
      "hbm.capacity_bytes",
  };
  return kTimingFree.count(key.path) == 0;
}

std::vector<ConfigLine> timing_config(const ChipConfig& config) {
  std::vector<ConfigLine> lines;
  for (const ConfigKey& k : config_schema()) {
    if (!changes_program_or_timing(k)) continue;
    const nlohmann::ordered_json v = k.get(config);
    lines.push_back({k.path, v.is_string() ? v.get<std::string>() : v.dump()});
  }
  std::sort(lines.begin(), lines.end(), [](const ConfigLine& a, const ConfigLine& b) { return a.key < b.key; });
  return lines;
}

std::string canonical_text(const std::vector<ConfigLine>& lines) {
  std::string text;
  for (const ConfigLine& l : lines) text += l.key + " " + l.value + "\n";
  return text;
}

uint64_t fnv1a_64(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t config_hash(const ChipConfig& config) { return fnv1a_64(canonical_text(timing_config(config))); }

std::string display_config_value(const std::string& key, const std::string& value) {
  for (const ConfigKey& k : config_schema())
    if (k.path == key && k.unit == "bytes" && !value.empty() && value.size() <= 19 &&
        value.find_first_not_of("0123456789") == std::string::npos)
      return format_bytes(std::stoull(value));
  return value;
}

}  // namespace systolic
