#pragma once
// Runs a program on a chip in SystemC and returns what every engine did. Each call builds the
// chip in a fresh simulation context, so a process (the Python module, a sweep worker) can
// simulate any number of times.
#include <cstdint>
#include <string>
#include <vector>

#include "models/chip/engine.hpp"
#include "models/mxu/pe_grid.hpp"
#include "sim/config.hpp"
#include "sim/program.hpp"

namespace systolic {

struct EngineResult {
  std::string name;  // "mxu0"
  EngineId id;
  std::vector<InstrRecord> records;
  uint64_t busy_cycles = 0;     // executing instructions
  uint64_t stalled_cycles = 0;  // waiting on semaphores (data not ready)
  uint64_t idle_cycles = 0;     // stream finished or empty, until the run ends
  uint64_t macs_issued = 0;
};

struct SimResult {
  uint64_t total_cycles = 0;
  std::vector<EngineResult> engines;
};

// Throws InputError for a program that deadlocks (naming each blocked engine and instruction)
// or does not fit the chip.
SimResult simulate(const ChipConfig& config, const Program& program,
                   GridObserver* observer = nullptr);

}  // namespace systolic
