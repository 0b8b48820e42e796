#pragma once
// A SystemC thread that feeds an engine a list of work items, one after another, and notes
// what the engine returned for each and when it completed: the harness of the engine tests.
#include <systemc>

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace systolic::testing {

template <class Item>
class Driver : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Driver);
  // `step` runs one item on the engine, blocking until it completes, and returns what the
  // engine reports for it (0 when it reports nothing).
  Driver(const sc_core::sc_module_name& name, std::vector<Item> work, std::function<uint64_t(const Item&)> step)
      : sc_module(name), work_(std::move(work)), step_(std::move(step)) {
    SC_THREAD(run);
  }
  std::vector<uint64_t> returned;
  std::vector<sc_core::sc_time> done;  // the simulated time each item completed

 private:
  void run() {
    for (const Item& item : work_) {
      returned.push_back(step_(item));
      done.push_back(sc_core::sc_time_stamp());
    }
  }
  std::vector<Item> work_;
  std::function<uint64_t(const Item&)> step_;
};

}  // namespace systolic::testing
