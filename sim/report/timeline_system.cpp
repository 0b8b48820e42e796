// The timeline of a multi-chip run: each chip's timeline (sim/report/timeline.hpp) as its own
// process ("chip 3"), so its engines, the ICI engine among them, are tracks under it and
// compute and communication show side by side.
#include <fmt/format.h>

#include "sim/report/timeline.hpp"

namespace systolic {
namespace {

using json = nlohmann::ordered_json;

// Forwards one chip's events as process `chip` of the system.
class ChipSink final : public TimelineSink {
 public:
  ChipSink(TimelineSink& out, size_t chip) : out_(out), chip_(chip) {}
  void event(json e) override {
    e["pid"] = chip_;
    if (e.contains("id")) e["id"] = e["id"].get<uint64_t>() + (static_cast<uint64_t>(chip_) << 40);  // flow ids stay unique
    if (e["ph"] == "M" && e["name"] == "process_name") e["args"]["name"] = fmt::format("chip {}", chip_);
    if (e["ph"] == "M" && e["name"] == "process_sort_index") e["args"]["sort_index"] = chip_;
    out_.event(std::move(e));
  }

 private:
  TimelineSink& out_;
  size_t chip_;
};

}  // namespace

json stream_system_timeline(const ChipConfig& config, const std::vector<SharedProgram>& programs,
                            const SystemResult& result, TimelineSink& sink) {
  // One chip: its own timeline, the engines as tracks of one process.
  if (result.chip_count() == 1) return stream_timeline(config, *programs.front(), result.chip(0), sink);
  json other;
  for (size_t chip = 0; chip < result.chip_count(); ++chip) {
    ChipSink chip_sink(sink, chip);
    json o = stream_timeline(config, *programs[chip], result.chip(chip), chip_sink);
    if (chip == 0) other = std::move(o);
  }
  other["chips"] = result.chip_count();
  return other;
}

json make_system_timeline(const ChipConfig& config, const std::vector<SharedProgram>& programs,
                          const SystemResult& result) {
  CollectingSink sink;
  json other = stream_system_timeline(config, programs, result, sink);
  json out;
  out["traceEvents"] = std::move(sink.events);
  out["otherData"] = std::move(other);
  return out;
}

}  // namespace systolic
