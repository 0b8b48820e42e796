// The timeline of a multi-chip run: each chip's timeline (sim/report/timeline.hpp) as its own
// process ("chip 3"), so its engines, the ICI engine among them, are tracks under it and
// compute and communication show side by side.
#include <fmt/format.h>

#include "sim/report/timeline.hpp"

namespace systolic {

nlohmann::ordered_json make_system_timeline(const ChipConfig& config, const std::vector<Program>& programs,
                                            const SystemResult& result) {
  using json = nlohmann::ordered_json;
  // One chip: its own timeline, the engines as tracks of one process.
  if (result.chips.size() == 1) return make_timeline(config, programs.front(), result.chips.front());
  json events = json::array();
  json other;
  for (size_t chip = 0; chip < result.chips.size(); ++chip) {
    json t = make_timeline(config, programs[chip], result.chips[chip]);
    for (json& e : t["traceEvents"]) {
      e["pid"] = chip;
      if (e.contains("id")) e["id"] = e["id"].get<uint64_t>() + (static_cast<uint64_t>(chip) << 40);  // flow ids stay unique
      if (e["ph"] == "M" && e["name"] == "process_name") e["args"]["name"] = fmt::format("chip {}", chip);
      if (e["ph"] == "M" && e["name"] == "process_sort_index") e["args"]["sort_index"] = chip;
      events.push_back(std::move(e));
    }
    if (chip == 0) other = t["otherData"];
  }
  other["chips"] = result.chips.size();
  json out;
  out["traceEvents"] = std::move(events);
  out["otherData"] = std::move(other);
  return out;
}

}  // namespace systolic
