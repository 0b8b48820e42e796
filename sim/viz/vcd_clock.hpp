#pragma once
// The VCD as GTKWave should show it (docs/watch-it-compute.md, "Waveforms in GTKWave"):
// SystemC writes times in kernel ticks (1 ps, 1000 per cycle: models/common/clock.hpp); this
// rewrites them in picoseconds of the chip's clock (cycle c starts at c x the clock period,
// rounded to the picosecond) and adds a clock signal `SystemC.clk`, high for the first half of
// each cycle. gtkw_save_file() writes the GTKWave save file that opens it with the grid grouped.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace systolic {

// Copies the VCD `from` to `to` with its times in picoseconds of a `clock_mhz` clock and the
// clock signal added; returns the last time written (ps). InputError when a file cannot be
// read or written.
uint64_t retime_vcd(const std::string& from, const std::string& to, double clock_mhz);

// One group of traces: a label and the signals' full names as GTKWave spells them
// ("SystemC.chip.mxu0.pe_00_01.psum_00_01[31:0]"); 1-bit signals show as bits, wider ones as
// signed decimals.
struct GtkwGroup {
  std::string label;
  std::vector<std::pair<std::string, int>> signals;  // (name, width in bits; 0 for a real)
};

// The text of a .gtkw file that opens `vcd` (its file name, beside it) zoomed to the whole run.
std::string gtkw_save_file(const std::string& vcd, const std::vector<GtkwGroup>& groups, uint64_t end_ps);

}  // namespace systolic
