#pragma once
// Who signalled what and who waited for what in one run, shared by the timeline's tracks
// (timeline.cpp) and the SRAM occupancy derived from it (sram_residency.cpp).
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "models/chip/chip_config.hpp"
#include "models/isa/program.hpp"
#include "sim/report/timeline.hpp"
#include "sim/simulate/simulate.hpp"

namespace systolic::timeline_detail {

// The program's stream of engine `id` (nullptr: none).
const Stream* stream_of(const Program& program, EngineId id);

// Engines and records are indices into SimResult::engines and their records.
struct RunIndex {
  struct Signal {
    uint64_t cycle;
    size_t engine;
    size_t record;
  };
  std::vector<const Stream*> streams;      // per engine (nullptr: not in the program)
  std::map<int, std::vector<Signal>> signals;  // per semaphore, in the order they happened
  // Per engine, per record: (semaphore, the count its signal brought it to), per signal.
  std::vector<std::vector<std::vector<std::pair<int, uint64_t>>>> reached;
  // (semaphore, threshold) -> the records that waited for it.
  std::map<std::pair<int, uint64_t>, std::vector<std::pair<size_t, size_t>>> waiters;

  RunIndex(const Program& program, const SimResult& result);
  const Instruction& instruction(size_t engine, const InstrRecord& rec) const {
    return streams[engine]->instructions[static_cast<size_t>(rec.index)];
  }
};

// sram_occupancy over an index already built.
std::vector<SramOccupancy> occupancy_of(const ChipConfig& config, const Program& program, const SimResult& result,
                                        const RunIndex& index);

}  // namespace systolic::timeline_detail
