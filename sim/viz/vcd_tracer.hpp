#pragma once
// Waveforms: a VCD file written through SystemC's sc_trace (opens in GTKWave), for
// `systolic run --vcd FILE`. It traces
//  * per MXU and per PE (small arrays only): the stationary weight, the activation passing
//    through, the partial sum leaving the PE downwards and whether it did a useful MAC
//    (SystemC.chip.mxu0.pe_RR_CC.{weight,activation,psum,active}_RR_CC);
//  * per engine: busy (executing an instruction) and stalled (waiting on semaphores);
//  * every semaphore's counter (SystemC.chip.semaphores.NAME).
// Times are picoseconds of the chip's clock, with a clock signal SystemC.clk, and a GTKWave
// save file beside the VCD groups the grid by PE row (sim/viz/vcd_clock.hpp). The PE values are the exact model's: as a
// GridObserver the tracer copies each cycle's PeStates into the traced variables and then
// waits one cycle, so the grid advances in simulated time only while a VCD is requested (the
// MXU engine then waits only for what is left of the instruction). PE signals keep their last
// values while the MXU is idle (busy = 0).
#include <systemc>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/chip/chip_config.hpp"
#include "models/isa/program.hpp"
#include "models/mxu/pe_grid.hpp"
#include "sim/simulate/simulate.hpp"
#include "sim/viz/vcd_clock.hpp"

namespace systolic {

class VcdTracer : public GridObserver, public RunProbe {
 public:
  static constexpr int64_t kMaxSide = 32;               // largest traced array: 32 x 32
  static constexpr uint64_t kMaxPeCycles = 1ull << 23;  // PEs x cycles x MXUs

  // Throws InputError when the run cannot be traced: not the exact MXU model, an array
  // larger than kMaxSide, or (given the run's length in cycles, e.g. from a `fast` run)
  // more than kMaxPeCycles of per-PE samples.
  static void check(const ChipConfig& config, uint64_t cycles);

  VcdTracer(std::string path, const ChipConfig& config, const Program& program);
  ~VcdTracer() override;

  void start(const Chip& chip) override;  // opens the file, registers the variables
  void stop() override;                   // flushes the last sample, closes, renames into place
  void on_cycle(uint64_t cycle, const std::vector<PeState>& pes) override;

 private:
  struct Grid;
  void trace_pe(Grid& g, int64_t r, int64_t c, GtkwGroup& row);

  struct Grid {
    const sc_core::sc_object* engine = nullptr;
    std::vector<int32_t> weight_i, activation_i, psum_i;
    std::vector<double> weight_f, activation_f, psum_f;
    std::unique_ptr<bool[]> active;  // not vector<bool>: sc_trace needs a bool&
  };

  std::string path_;
  std::string temp_;  // written during the run, renamed to path_ by stop()
  ArrayShape shape_;
  bool integer_ = true;  // every matmul is int8: integer signals, else real ones
  const Program& program_;
  sc_core::sc_trace_file* file_ = nullptr;
  std::vector<Grid> grids_;
  double clock_mhz_ = 1000;
  std::vector<GtkwGroup> groups_;  // what the .gtkw save file shows, in order
};

// The GTKWave save file written beside a VCD: grid.vcd -> grid.gtkw.
std::string gtkw_path(const std::string& vcd);

// simulate() with waveforms written to `path`: checks (with a quick `fast` run for the
// length) that the run can be traced, then runs it with a VcdTracer. Throws InputError.
SimResult simulate_with_vcd(const ChipConfig& config, const Program& program, const std::string& path,
                            bool hbm_activity = false);

}  // namespace systolic
