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
// Counters: engines busy per kind, HBM bandwidth, SRAM occupancy per scratchpad (below), and
// any further series passed in.
//
// Time axis: 1 cycle = 1 trace microsecond (the format's unit), so timestamps are exact
// integers; the viewers label the axis "us", read it as cycles. otherData.clock_mhz converts.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/chip/chip_config.hpp"
#include "models/isa/program.hpp"
#include "sim/simulate/simulate.hpp"

namespace systolic {

// A counter track: the value holds from each point's cycle until the next point.
struct TimelineCounter {
  std::string name;                                  // "hbm bandwidth (GB/s)"
  std::vector<std::pair<uint64_t, double>> points;   // (cycle, value), cycles non-decreasing
};

// SRAM occupancy (docs/timelines.md, "SRAM occupancy"). Instructions do not say which
// scratchpad bytes a matmul reads or writes, so residency is derived from what the program
// and the run records do say:
//  * a DMA load into a scratchpad makes its destination bytes resident when it completes;
//    they stay resident until the last of its consumers has finished: the instructions that
//    wait on a semaphore the load signals at exactly the count its signal brought it to (the
//    pairing compile_tiled makes per buffer copy). A load nobody waits for stays resident to
//    the end of the run;
//  * a DMA drain from the accumulators (a store of an output tile) holds its source bytes,
//    4 per element (the accumulators are 32-bit whatever the element size written out), from
//    the start of the first matmul that wrote the tile until the drain completes. On each
//    MXU, the matmuls after the previous one whose signal a drain waits for, up to one whose
//    signal this drain waits for, accumulate into this drain's tile.
// The occupancy of a scratchpad at a cycle is the number of distinct bytes covered by the
// data resident then (overlapping pieces count once), so it never exceeds the scratchpad's
// size, and it is 0 once the last piece is released.
struct SramResidency {
  int scratchpad = 0;                                  // ScratchpadId
  uint64_t from = 0, to = 0;                           // resident during cycles [from, to)
  std::vector<std::pair<uint64_t, uint64_t>> ranges;   // byte ranges [begin, end), merged
  size_t engine = 0;                                   // the load or drain: SimResult::engines
  size_t record = 0;                                   //   index, and its record there (an on-chip
                                                       //   intermediate: its last reader)
  uint64_t bytes() const;
};
std::vector<SramResidency> sram_residency(const Program& program, const SimResult& result);

struct SramOccupancy {
  std::string scratchpad;  // "vmem", "weights", "accumulators"
  uint64_t capacity_bytes = 0;
  std::vector<std::pair<uint64_t, uint64_t>> points;  // (cycle, bytes); holds until the next
};
// One series per scratchpad, starting at (0, 0) and ending at 0; empty when the program moves
// nothing to or from a scratchpad (memory.ideal: no DMA).
std::vector<SramOccupancy> sram_occupancy(const ChipConfig& config, const Program& program,
                                          const SimResult& result);

// Receives a timeline's events one at a time, so a long run's timeline is written as it is
// made and never held as one JSON tree (sim/report/timeline_file.hpp writes them to a file).
class TimelineSink {
 public:
  virtual ~TimelineSink() = default;
  virtual void event(nlohmann::ordered_json e) = 0;
};

// The arguments shown for an instruction: {"op": "matmul", "m": ..., "bytes": ...}.
nlohmann::ordered_json describe_operation(const Operation& op, const ChipConfig& config,
                                          const SimResult& result);

// One chip's events into `sink` (process 0); returns the timeline's otherData.
nlohmann::ordered_json stream_timeline(const ChipConfig& config, const Program& program, const SimResult& result,
                                       TimelineSink& sink, const std::vector<TimelineCounter>& counters = {});
// The whole timeline as one JSON object ({"traceEvents": [...], "otherData": {...}}).
nlohmann::ordered_json make_timeline(const ChipConfig& config, const Program& program,
                                     const SimResult& result,
                                     const std::vector<TimelineCounter>& counters = {});

// A multi-chip run: one process per chip ("chip 3"), each with its engines' tracks; a one-chip
// run: make_timeline's. The stream form returns otherData.
nlohmann::ordered_json stream_system_timeline(const ChipConfig& config,
                                              const std::vector<SharedProgram>& programs,
                                              const SystemResult& result, TimelineSink& sink);
nlohmann::ordered_json make_system_timeline(const ChipConfig& config,
                                            const std::vector<SharedProgram>& programs,
                                            const SystemResult& result);

// Collects the events of a stream into one array (tests, the Python module's small timelines).
class CollectingSink final : public TimelineSink {
 public:
  void event(nlohmann::ordered_json e) override { events.push_back(std::move(e)); }
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
};

}  // namespace systolic
