#pragma once
// Simulated time: one core cycle is 1 ns of SystemC time at the default 1 ps resolution, so
// blocks with other clocks (HBM) keep sub-cycle precision, and counts up to ~1.8e16 cycles fit.
#include <systemc>

#include <cstdint>
#include <stdexcept>

namespace systolic {

constexpr uint64_t kTicksPerCycle = 1000;
constexpr uint64_t kMaxCycles = UINT64_MAX / kTicksPerCycle;

inline sc_core::sc_time cycles_to_time(uint64_t cycles) {
  if (cycles > kMaxCycles) throw std::overflow_error("cycle count exceeds the simulated-time range");
  return sc_core::sc_time::from_value(cycles * kTicksPerCycle);
}

// Whole cycles elapsed (rounded up: an event inside a cycle occupies that cycle).
inline uint64_t time_to_cycles(const sc_core::sc_time& t) {
  return (t.value() + kTicksPerCycle - 1) / kTicksPerCycle;
}

inline uint64_t now_cycles() { return time_to_cycles(sc_core::sc_time_stamp()); }

}  // namespace systolic
