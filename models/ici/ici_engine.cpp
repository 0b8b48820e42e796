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
  std::vector<Flow> flows;
  for (const IciCopy& c : op->copies)
    flows.push_back({&c, fabric_.network.topology().route(chip_, c.to, c.tie), 0, start, start, start});
  for (;;) {
    // The message whose next chunk is ready first goes next: messages of one instruction
    // leave through their ports side by side.
    Flow* f = nullptr;
    for (Flow& x : flows)
      if (x.sent < x.copy->bytes && (!f || x.ready < f->ready)) f = &x;
    if (!f) break;
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (f->ready > now + quantum_ps_) sc_core::wait(sc_core::sc_time::from_value(f->ready - now));
    send_chunk(*f);
  }
  deliver(flows);
  // The engine's instruction ends on a whole cycle, as every engine's does.
  const uint64_t now = sc_core::sc_time_stamp().value();
  const uint64_t end = (now + kTicksPerCycle - 1) / kTicksPerCycle * kTicksPerCycle;
  if (end > now) sc_core::wait(sc_core::sc_time::from_value(end - now));
}

// Books the next chunk of `f`: read from this chip's HBM, across the network, written to the
// destination's HBM.
void IciEngine::send_chunk(Flow& f) {
  IciNetwork& net = fabric_.network;
  const IciCopy& c = *f.copy;
  const uint64_t bytes = std::min(net.config().chunk_bytes, c.bytes - f.sent);
  uint64_t ready = f.ready;
  if (c.via_hbm) ready = fabric_.hbms[static_cast<size_t>(chip_)]->access(c.src_addr + f.sent, bytes, false, ready);
  const IciNetwork::Booking b = net.book(f.route, bytes, ready, sc_core::sc_time_stamp().value());
  uint64_t landed = b.arrived;
  // The HBM model books in call order, so the destination's write is booked at the time the
  // chunk sets off (booked at its far-off arrival it would hold up that chip's earlier
  // reads); the chunk has landed once it has arrived and that write is done. Mirrored (one
  // chip per class), it is written where the class's messages land, as often as they do.
  if (c.via_hbm)
    fabric_.for_each_landing(chip_, c.to, [&](int at) {
      landed = std::max(
          landed, fabric_.hbms[static_cast<size_t>(at)]->access(c.dst_addr + f.sent, bytes, true, ready));
    });
  f.arrived = std::max(f.arrived, landed);
  // A port buffers two chunks: the next one may be read while this one crosses the link,
  // once the one before this has left.
  f.ready = std::max(ready, f.prev_left);
  f.prev_left = b.sent;
  f.sent += bytes;
  ++stats_.chunks;
}

// Delivers in landing order: each message signals its receiver when its last byte is there.
void IciEngine::deliver(std::vector<Flow>& flows) {
  std::vector<Flow*> order;
  order.reserve(flows.size());
  for (Flow& f : flows) order.push_back(&f);
  std::stable_sort(order.begin(), order.end(), [](const Flow* a, const Flow* b) { return a->arrived < b->arrived; });
  for (Flow* f : order) {
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (f->arrived > now) sc_core::wait(sc_core::sc_time::from_value(f->arrived - now));
    fabric_.for_each_landing(chip_, f->copy->to, [&](int at) {
      fabric_.semaphores[static_cast<size_t>(at)]->signal(fabric_.semaphore_id(at, f->copy->recv_sem));
    });
    ++stats_.messages;
    stats_.bytes_sent += f->copy->bytes;
  }
}

}  // namespace systolic
