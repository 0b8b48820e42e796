#include "models/ici/ici_port.hpp"

#include <algorithm>
#include <tuple>

namespace systolic {

IciPort::IciPort(const sc_core::sc_module_name& name, HbmCore& hbm, SemaphoreBank& semaphores)
    : sc_module(name), hbm_(hbm), semaphores_(semaphores), due_(Later{&messages_}) {
  SC_METHOD(land);
  sensitive << wake_;
  dont_initialize();
}

bool IciPort::Later::operator()(const Item& a, const Item& b) const {
  const auto key = [this](const Item& i) {
    return std::make_tuple(i.time, i.signal, i.addr, i.bytes, (*messages)[i.message].sem);
  };
  return key(a) > key(b);
}

uint32_t IciPort::expect(int sem, uint64_t chunks, bool via_hbm, SendReceipt& receipt) {
  uint32_t m = static_cast<uint32_t>(messages_.size());
  if (free_.empty()) {
    messages_.emplace_back();
  } else {
    m = free_.back();
    free_.pop_back();
  }
  messages_[m] = {sem, chunks, sc_core::sc_time_stamp().value(), via_hbm, &receipt};
  ++receipt.pending;
  if (chunks == 0) landed(m);
  return m;
}

// The message is written by m.written: its semaphore then, and its sender told now (the
// sender, which knows when, waits for that time itself).
void IciPort::landed(uint32_t message) {
  Message& m = messages_[message];
  SendReceipt& r = *m.receipt;
  r.landed = std::max(r.landed, m.written);
  if (--r.pending == 0) r.done.notify();
  schedule({m.written, true, 0, 0, message});
}

void IciPort::arrive(uint32_t message, uint64_t at_ps, uint64_t addr, uint64_t bytes) {
  schedule({at_ps, false, addr, bytes, message});
}

void IciPort::schedule(Item item) {
  const uint64_t now = sc_core::sc_time_stamp().value();
  due_.push(item);
  // An event keeps the earliest of its pending notifications.
  wake_.notify(sc_core::sc_time::from_value(item.time - now));
}

// Writes the chunks that arrive now (a write is booked when its chunk is there, by this chip:
// see the header) and signals the messages written by now.
void IciPort::land() {
  const uint64_t now = sc_core::sc_time_stamp().value();
  while (!due_.empty() && due_.top().time <= now) {
    const Item item = due_.top();
    due_.pop();
    Message& m = messages_[item.message];
    if (item.signal) {
      semaphores_.signal(m.sem);
      free_.push_back(item.message);
      continue;
    }
    m.written = std::max(m.written, m.via_hbm ? hbm_.access(item.addr, item.bytes, true, now) : now);
    if (--m.chunks_left == 0) landed(item.message);
  }
  if (!due_.empty()) wake_.notify(sc_core::sc_time::from_value(due_.top().time - now));
}

}  // namespace systolic
