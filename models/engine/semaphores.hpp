#pragma once
// Monotonic counting semaphores shared by a chip's engines: signal() adds one, and
// wait_until() blocks the calling SC_THREAD until the counter reaches a threshold. Counters
// never decrease, so one signal can release any number of waiters (a broadcast barrier).
#include <systemc>

#include <cstdint>
#include <deque>
#include <vector>

namespace systolic {

class SemaphoreBank {
 public:
  explicit SemaphoreBank(size_t count);
  void wait_until(int sem, uint64_t at_least);
  void signal(int sem);
  uint64_t value(int sem) const { return values_.at(static_cast<size_t>(sem)); }
  // Stable for the bank's lifetime (the counters never move), for sc_trace.
  const uint64_t& value_ref(int sem) const { return values_.at(static_cast<size_t>(sem)); }
  size_t size() const { return values_.size(); }

 private:
  std::vector<uint64_t> values_;
  std::deque<sc_core::sc_event> changed_;  // deque: events are not movable
};

}  // namespace systolic
