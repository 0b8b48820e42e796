#pragma once
// Timelines: Chrome trace-event JSON (opens in Perfetto, ui.perfetto.dev, and chrome://tracing).
// docs/timelines.md explains how to read one.
//
// Built from a SimResult generically: one track (thread) per engine in SimResult::engines,
// named after the engine, and one slice per instruction it executed, named after the layer,
// with the operation's fields (from a visitor over the Operation variant: any new kind of
// instruction gets a track and slices without changes here, and its specific arguments as
// soon as describe_operation knows it). When an instruction waited on semaphores, a "stall"
// slice covers the wait and a flow arrow points from the instruction whose signal released it.
// Counters (HBM bandwidth, SRAM occupancy, ...) are passed in as sampled series.
//
// Time axis: 1 cycle = 1 trace microsecond (the format's unit), so timestamps are exact
// integers; the viewers label the axis "us", read it as cycles. otherData.clock_mhz converts.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config.hpp"
#include "sim/program.hpp"
#include "sim/simulate.hpp"

namespace systolic {

// A counter track: the value holds from each point's cycle until the next point.
struct TimelineCounter {
  std::string name;                                  // "hbm bandwidth (GB/s)"
  std::vector<std::pair<uint64_t, double>> points;   // (cycle, value), cycles non-decreasing
};

// The arguments shown for an instruction: {"op": "matmul", "m": ..., "bytes": ...}.
nlohmann::ordered_json describe_operation(const Operation& op, const ChipConfig& config,
                                          const SimResult& result);

nlohmann::ordered_json make_timeline(const ChipConfig& config, const Program& program,
                                     const SimResult& result,
                                     const std::vector<TimelineCounter>& counters = {});

}  // namespace systolic
