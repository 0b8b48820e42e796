#pragma once
// One chip's engines, woken from their timed waits in a fixed order.
//
// Engines that are due at the same time run in the order the kernel wakes them, and that order
// matters: the HBM and the scratchpad ports book requests first come first served in call order
// (models/hbm/hbm_core.hpp), and an engine's semaphore signals wake the engines waiting on them
// in the order they were given. SystemC keeps timed waits in a binary heap, which orders equal
// times by the heap's history, that is by every other process of the simulation: two chips
// running the same program could see their engines woken in different orders, and a chip
// simulated for its class (models/system/symmetry.hpp) in another order than when every chip
// runs. Here the chip's engines wait on an event each, and one SC_METHOD, due at the earliest
// time any of them is, wakes every engine due then in rank order (the order the chip built
// them). A delta's methods run before its threads, so they start in that order, and what they
// signal is signalled in that order too: the chip's processes run in an order of its own.
#include <systemc>

#include <cstdint>
#include <queue>
#include <tuple>
#include <vector>

namespace systolic {

class WakeOrder : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(WakeOrder);
  explicit WakeOrder(const sc_core::sc_module_name& name);

  // Blocks the calling SC_THREAD, of rank `rank` (distinct per engine) waiting on its own
  // `event`, until simulated time `at_ps` (after now).
  void wait_until(uint64_t at_ps, int rank, sc_core::sc_event& event);

 private:
  using Sleeper = std::tuple<uint64_t, int, sc_core::sc_event*>;  // time, rank, event
  void wake();                                                    // the SC_METHOD

  std::priority_queue<Sleeper, std::vector<Sleeper>, std::greater<Sleeper>> sleeping_;
  sc_core::sc_event due_;
};

}  // namespace systolic
