#pragma once
// A chip's receiving side of the ICI: the chunks other chips send it are written into its HBM
// here, by a process of its own, when they arrive, and each message signals its semaphore once
// its last byte is written (the remote signal of docs/interconnect.md, section 4).
//
// Why the receiver, not the sender, books the write: the HBM model books in call order
// (models/hbm/hbm_core.hpp), so who calls when decides the timing. Booked by the sending
// chip's engine, the write would fall between the receiver's own DMA requests in the order the
// kernel happens to run the two chips, which differs between chips that otherwise run alike
// (and between simulating every chip and one per class, models/system/symmetry.hpp). Here the
// chip books its incoming writes itself, at their arrival times, in an order fixed by the
// chunks (arrival, address, size, semaphore), and an SC_METHOD runs before every engine (the
// engines are SC_THREADs, and SystemC runs a delta's methods first), so at any time the same
// writes come first whichever chips run beside it.
#include <systemc>

#include <cstdint>
#include <queue>
#include <vector>

#include "models/engine/semaphores.hpp"
#include "models/hbm/hbm_core.hpp"

namespace systolic {

// What a sending engine waits on: its messages not yet landed, and when the last one landed.
struct SendReceipt {
  uint64_t pending = 0;
  uint64_t landed = 0;
  sc_core::sc_event done;  // notified (immediately) when pending reaches 0
};

class IciPort : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(IciPort);
  IciPort(const sc_core::sc_module_name& name, HbmCore& hbm, SemaphoreBank& semaphores);

  // A message of `chunks` chunks that adds one to semaphore `sem` once its last chunk is written
  // (`via_hbm` false: once it has arrived, no HBM write), and then reports to `receipt` (counted
  // in its `pending` here). Called by the sender's engine at its time, before the message's
  // chunks arrive; a message of no chunks lands now. Returns its handle for arrive().
  uint32_t expect(int sem, uint64_t chunks, bool via_hbm, SendReceipt& receipt);
  // A chunk of message `message`: [addr, addr + bytes) of this chip's HBM, arriving at
  // `at_ps`, which is after the caller's time.
  void arrive(uint32_t message, uint64_t at_ps, uint64_t addr, uint64_t bytes);

 private:
  struct Message {
    int sem = 0;
    uint64_t chunks_left = 0;
    uint64_t written = 0;  // the last byte written so far
    bool via_hbm = true;
    SendReceipt* receipt = nullptr;
  };
  // A chunk to write, or (signal) a message's semaphore to add one to, at `time`.
  struct Item {
    uint64_t time = 0;
    bool signal = false;
    uint64_t addr = 0, bytes = 0;
    uint32_t message = 0;
  };
  struct Later {  // the priority queue's order: the latest last
    const std::vector<Message>* messages;
    bool operator()(const Item& a, const Item& b) const;
  };

  void land();  // the SC_METHOD: everything due now, in Later's order
  void schedule(Item item);
  void landed(uint32_t message);  // its last chunk is booked: signal when written, report

  HbmCore& hbm_;
  SemaphoreBank& semaphores_;
  std::vector<Message> messages_;
  std::vector<uint32_t> free_;  // handles of messages done
  std::priority_queue<Item, std::vector<Item>, Later> due_;
  sc_core::sc_event wake_;
};

}  // namespace systolic
