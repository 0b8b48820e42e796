#include "models/ici/ici_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "models/common/clock.hpp"

namespace systolic {

int IciFabric::semaphore_id(int chip, const std::string& name) const {
  const auto& names = *semaphore_names.at(static_cast<size_t>(chip));
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

IciEngine::IciEngine(const sc_core::sc_module_name& name, int chip, InstructionStream stream,
                     SemaphoreBank& semaphores, IciFabric& fabric, uint64_t quantum_cycles)
    : Engine(name, {EngineKind::ici, 0}, std::move(stream), semaphores),
      chip_(chip),
      fabric_(fabric),
      quantum_ps_(quantum_cycles * kTicksPerCycle) {}

std::optional<std::string> check_ici_op(const IciFabric& fabric, int chip, const IciOp& op) {
  const int chips = fabric.network.topology().chips();
  for (const IciCopy& c : op.copies) {
    if (c.to < 0 || c.to >= chips || c.to == chip)
      return fmt::format("message to chip {}: expected another chip of the system's {}", c.to, chips);
    if (fabric.semaphore_id(c.to, c.recv_sem) < 0)
      return fmt::format("message to chip {} signals semaphore '{}', which chip {}'s program does not declare",
                         c.to, c.recv_sem, c.to);
    const auto fits = [&](int at, uint64_t addr) {
      const uint64_t cap = fabric.hbms[static_cast<size_t>(at)]->config().capacity_bytes;
      return addr <= cap && c.bytes <= cap - addr;
    };
    if (c.via_hbm && !(fits(chip, c.src_addr) && fits(c.to, c.dst_addr)))
      return fmt::format("message to chip {} ({} B) reaches past hbm.capacity_bytes", c.to, c.bytes);
  }
  return std::nullopt;
}

void IciEngine::execute(const Instruction& instruction) {
  const auto* op = std::get_if<IciOp>(&instruction.op);
  if (!op) throw std::logic_error(std::string(basename()) + ": an ICI engine only executes send instructions");
  const uint64_t start = sc_core::sc_time_stamp().value();
  receipt_.landed = start;
  std::vector<Flow> flows;  // not resized once sending starts: the routers hold their transits
  flows.reserve(op->copies.size());
  for (const IciCopy& c : op->copies) flows.push_back(start_flow(c, start));
  uint64_t arrived = start;
  for (;;) {
    // The message whose next chunk is ready first goes next: messages of one instruction
    // leave through their ports side by side.
    Flow* f = nullptr;
    for (Flow& x : flows)
      if (x.sent < x.copy->bytes && (!f || x.ready < f->ready)) f = &x;
    if (!f) break;
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (f->ready > now + quantum_ps_) sleep(f->ready - now);
    send_chunk(*f);
    arrived = std::max(arrived, f->arrived);
  }
  for (const Flow& f : flows) {
    ++stats_.messages;
    stats_.bytes_sent += f.copy->bytes;
  }
  // The ports tell when each message is written, once its last chunk has arrived; the
  // instruction ends when all have landed, on a whole cycle, as every engine's does.
  while (receipt_.pending > 0) sc_core::wait(receipt_.done);
  const uint64_t landed = std::max(arrived, receipt_.landed);
  const uint64_t end = (landed + kTicksPerCycle - 1) / kTicksPerCycle * kTicksPerCycle;
  const uint64_t now = sc_core::sc_time_stamp().value();
  if (end > now) sleep(end - now);
}

// A message about to be sent: its route, and the message announced to each port it lands on.
IciEngine::Flow IciEngine::start_flow(const IciCopy& c, uint64_t now) {
  Flow f{&c, {fabric_.network.topology().route(chip_, c.to, c.tie), {}, c.dst_addr, nullptr}, 0, now, now,
         now};
  if (f.transit.route.size() > 1) f.transit.receipt = &receipt_;
  const uint64_t chunk = fabric_.network.config().chunk_bytes;
  fabric_.for_each_landing(chip_, c.to, [&](int at) {
    IciPort* port = fabric_.ports[static_cast<size_t>(at)];
    f.transit.landings.emplace_back(port, port->expect(fabric_.semaphore_id(at, c.recv_sem),
                                                       (c.bytes + chunk - 1) / chunk, c.via_hbm, receipt_));
  });
  return f;
}

// Books the next chunk of `f`: read from this chip's HBM and onto its first link; the chips it
// crosses book the others (models/ici/ici_router.hpp), and each port it lands on writes it into
// its chip's HBM when it arrives. Mirrored (one chip per class), it lands where the class's
// messages land, as often as they do.
void IciEngine::send_chunk(Flow& f) {
  IciNetwork& net = fabric_.network;
  const IciCopy& c = *f.copy;
  const uint64_t bytes = std::min(net.config().chunk_bytes, c.bytes - f.sent);
  uint64_t ready = f.ready;
  if (c.via_hbm) ready = fabric_.hbms[static_cast<size_t>(chip_)]->access(c.src_addr + f.sent, bytes, false, ready);
  const int link = f.transit.route.front();
  const IciNetwork::Hop first = net.book_hop(link, bytes, ready, 0, sc_core::sc_time_stamp().value());
  if (f.transit.receipt)
    ++receipt_.pending;  // the last chip it crosses reports its arrival
  else
    f.arrived = std::max(f.arrived, first.end + net.latency_ps());
  IciRouter::pass_on(fabric_, f.transit, 0, link, first, f.sent, bytes);
  // A port buffers two chunks: the next one may be read while this one crosses the link,
  // once the one before this has left.
  f.ready = std::max(ready, f.prev_left);
  f.prev_left = first.end;
  f.sent += bytes;
  ++stats_.chunks;
}

}  // namespace systolic
