#include "models/ici/ici_router.hpp"

#include <algorithm>
#include <tuple>

#include "models/ici/ici_engine.hpp"

namespace systolic {

IciRouter::IciRouter(const sc_core::sc_module_name& name, int chip, IciFabric& fabric)
    : sc_module(name), chip_(chip), fabric_(fabric) {
  SC_METHOD(forward);
  sensitive << wake_;
  dont_initialize();
}

// Chunks due at one time were booked at one time, each by the chip its link leaves: the
// direction they came from orders them, then their heads (one link carries one chunk at a
// time); what follows only makes the order total.
bool IciRouter::Later::operator()(const Item& a, const Item& b) const {
  const auto key = [](const Item& i) {
    return std::make_tuple(i.due, i.from, i.head, i.tail, i.bytes, i.offset, i.hop);
  };
  return key(a) > key(b);
}

void IciRouter::pass_on(IciFabric& fabric, const IciTransit& transit, size_t hop, int link,
                        IciNetwork::Hop booked, uint64_t offset, uint64_t bytes) {
  const IciNetwork& net = fabric.network;
  const uint64_t arrival = booked.end + net.latency_ps();
  if (hop + 1 == transit.route.size()) {
    for (const auto& [port, message] : transit.landings)
      port->arrive(message, arrival, transit.dst_addr + offset, bytes);
    if (SendReceipt* r = transit.receipt) {
      r->landed = std::max(r->landed, arrival);
      if (--r->pending == 0) r->done.notify();
    }
    return;
  }
  const Topology& t = net.topology();
  Item item;
  // A picosecond after whoever booked it (before its head gets there); with no hop latency,
  // when its head gets there, which may be now.
  item.due = std::min<uint64_t>(sc_core::sc_time_stamp().value() + 1, booked.start + net.latency_ps());
  item.head = booked.start + net.latency_ps();
  item.tail = arrival;
  item.from = link % (2 * static_cast<int>(t.dims().size()));
  item.bytes = bytes;
  item.offset = offset;
  item.hop = static_cast<uint32_t>(hop + 1);
  item.transit = &transit;
  fabric.routers[static_cast<size_t>(t.link_target(link))]->arrive(item);
}

void IciRouter::arrive(const Item& item) {
  const uint64_t now = sc_core::sc_time_stamp().value();
  due_.push(item);
  wake_.notify(sc_core::sc_time::from_value(item.due - now));  // an event keeps its earliest
}

// This chip's link in the direction of the route's next hop: under a translation (one chip per
// class) the image of the link the sender's route names.
void IciRouter::forward() {
  const uint64_t now = sc_core::sc_time_stamp().value();
  IciNetwork& net = fabric_.network;
  const Topology& t = net.topology();
  const int dims = static_cast<int>(t.dims().size());
  while (!due_.empty() && due_.top().due <= now) {
    const Item item = due_.top();
    due_.pop();
    const int named = item.transit->route[item.hop];
    const int link = t.link(chip_, static_cast<size_t>(named / 2 % dims), named % 2 ? -1 : +1);
    const IciNetwork::Hop booked = net.book_hop(link, item.bytes, item.head, item.tail, now);
    pass_on(fabric_, *item.transit, item.hop, link, booked, item.offset, item.bytes);
  }
  if (!due_.empty()) wake_.notify(sc_core::sc_time::from_value(due_.top().due - now));
}

}  // namespace systolic
