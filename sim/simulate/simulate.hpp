#pragma once
// Runs a program on a chip in SystemC and returns what every engine did. Each call builds the
// chip in a fresh simulation context, so a process (the Python module, a sweep worker) can
// simulate any number of times.
#include <array>
#include <functional>
#include <cstdint>
#include <string>
#include <vector>

#include "models/chip/chip_config.hpp"
#include "models/dma/dma_core.hpp"
#include "models/engine/engine.hpp"
#include "models/hbm/hbm_core.hpp"
#include "models/ici/ici_engine.hpp"
#include "models/isa/program.hpp"
#include "models/mxu/pe_grid.hpp"
#include "models/vpu/vpu_engine.hpp"

namespace systolic {

struct EngineResult {
  std::string name;  // "mxu0"
  EngineId id;
  std::vector<InstrRecord> records;
  uint64_t busy_cycles = 0;     // executing instructions
  uint64_t stalled_cycles = 0;  // waiting on semaphores (data not ready)
  uint64_t idle_cycles = 0;     // stream finished or empty, until the run ends
  uint64_t macs_issued = 0;
  std::array<uint64_t, kMxuDTypes> macs_by_dtype{};            // MXUs only, indexed by DType
  std::array<uint64_t, 3> sram_read{}, sram_written{};  // MXUs only, indexed by ScratchpadId
  DmaStats dma;  // DMA engines only
  VpuStats vpu;  // the VPU only
  IciStats ici;  // the ICI engine only (chips of a multi-chip system)
};

struct ScratchpadResult {
  std::string name;
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
};

struct SimResult {
  uint64_t total_cycles = 0;
  std::vector<EngineResult> engines;
  HbmStats hbm;
  std::vector<ScratchpadResult> scratchpads;
  uint64_t ici_link_bytes_out = 0;  // bytes this chip's outgoing ICI links carried (its SerDes energy)
};

// One directed ICI link of a multi-chip run.
struct LinkResult {
  std::string name;  // "chip3.y-"
  int from = 0, to = 0;
  uint64_t bytes = 0;
  uint64_t busy_ps = 0;  // SystemC ps (1000 per cycle)
  uint64_t chunks = 0;
};

// How a system was simulated (report.json `simulation`): which chips were, one per class of
// chips that evolve identically (models/system/symmetry.hpp), and why not fewer.
struct SimulationPlan {
  std::vector<int> representative;      // per chip: the simulated chip it ran as
  std::vector<std::string> symmetries;  // the relabellings that map the system onto itself
  std::string limit;                    // why chips are not merged further ("" when nothing stops it)
  bool every_chip = false;              // RunOptions::every_chip asked for every chip
  size_t simulated() const;             // chips simulated (classes)
};

struct SystemResult {
  uint64_t total_cycles = 0;         // until the last engine of any chip finished
  std::vector<SimResult> simulated;  // per simulated chip, in chip order, each with total_cycles
  std::vector<size_t> result_of;     // per chip: its entry of `simulated` (its class's)
  std::vector<LinkResult> links;     // links that exist (dimensions longer than one chip)
  SimulationPlan plan;

  size_t chip_count() const { return result_of.size(); }
  // What chip i did: its class's representative's results, which chip i's equal.
  const SimResult& chip(size_t i) const { return simulated[result_of[i]]; }
  // A one-chip system.
  static SystemResult one_chip(SimResult chip);
};

class Chip;

// Optional instrumentation of one run (waveforms, sim/viz/vcd_tracer.hpp), inside the run's
// SystemC context: start() sees the elaborated chip before the simulation starts (sc_trace
// files are opened there), stop() is called once it has stopped.
class RunProbe {
 public:
  virtual ~RunProbe() = default;
  virtual void start(const Chip& chip) = 0;
  virtual void stop() = 0;
};

// What a run records beyond the report's counters.
struct RunOptions {
  GridObserver* observer = nullptr;  // the exact model's PE values (sim/viz)
  RunProbe* probe = nullptr;         // waveforms
  bool hbm_activity = false;         // HbmStats::bytes_per_window, channel_busy_per_window (timelines)
  // Called every kProgressSliceCycles simulated cycles with the fraction of the program's
  // instructions finished (0 to 1), for a progress line; the results are the same with or
  // without it (the simulation pauses between time steps, which the model cannot see).
  std::function<void(double)> progress;
  // Multi-chip: simulate every chip, even those a symmetry shows to evolve like another
  // (--every-chip); the reports are the same but for `simulation`.
  bool every_chip = false;
};
constexpr uint64_t kProgressSliceCycles = 1 << 20;

// Throws InputError for a program that deadlocks (naming each blocked engine and instruction)
// or does not fit the chip.
SimResult simulate(const ChipConfig& config, const Program& program, const RunOptions& options = {});

// Runs programs[i] on chip i of the system config.ici describes (topology not none), all in
// one simulation, one chip per class of chips that evolve identically unless
// options.every_chip. Throws InputError as simulate() does, naming the chip.
SystemResult simulate_system(const ChipConfig& config, const std::vector<const Program*>& programs,
                             const RunOptions& options = {});
SystemResult simulate_system(const ChipConfig& config, const std::vector<Program>& programs,
                             const RunOptions& options = {});
SystemResult simulate_system(const ChipConfig& config, const std::vector<SharedProgram>& programs,
                             const RunOptions& options = {});

}  // namespace systolic
