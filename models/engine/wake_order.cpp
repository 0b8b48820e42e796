#include "models/engine/wake_order.hpp"

#include <stdexcept>

namespace systolic {

WakeOrder::WakeOrder(const sc_core::sc_module_name& name) : sc_module(name) {
  SC_METHOD(wake);
  sensitive << due_;
  dont_initialize();
}

void WakeOrder::wait_until(uint64_t at_ps, int rank, sc_core::sc_event& event) {
  const uint64_t now = sc_core::sc_time_stamp().value();
  if (at_ps <= now) throw std::logic_error("wake order: a wait must end after now");
  sleeping_.emplace(at_ps, rank, &event);
  due_.notify(sc_core::sc_time::from_value(at_ps - now));  // an event keeps its earliest notification
  sc_core::wait(event);
}

// Immediate notifications from a method: the threads run in this delta, in this order.
void WakeOrder::wake() {
  const uint64_t now = sc_core::sc_time_stamp().value();
  while (!sleeping_.empty() && std::get<0>(sleeping_.top()) <= now) {
    std::get<2>(sleeping_.top())->notify();
    sleeping_.pop();
  }
  if (!sleeping_.empty()) due_.notify(sc_core::sc_time::from_value(std::get<0>(sleeping_.top()) - now));
}

}  // namespace systolic
