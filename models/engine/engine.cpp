#include "models/engine/engine.hpp"

#include <fmt/format.h>

#include "models/common/clock.hpp"

namespace systolic {

Engine::Engine(const sc_core::sc_module_name& name, EngineId id, InstructionStream stream,
               SemaphoreBank& semaphores)
    : sc_module(name), id_(id), stream_(std::move(stream)), semaphores_(semaphores) {
  SC_THREAD(run);
}

void Engine::run() {
  records_.reserve(stream().size());
  for (size_t i = 0; i < stream().size(); ++i) {
    const Instruction& instr = stream()[i];
    InstrRecord rec;
    rec.index = static_cast<int>(i);
    rec.layer = instr.layer;
    rec.ready = now_cycles();
    stalled_ = true;
    for (const auto& w : instr.waits) semaphores_.wait_until(w.sem, w.at_least);
    stalled_ = false;
    rec.start = now_cycles();
    busy_ = true;
    execute(instr);
    busy_ = false;
    rec.end = now_cycles();
    records_.push_back(rec);
    for (int s : instr.signals) semaphores_.signal(s);
  }
}

void Engine::sleep(uint64_t ps) {
  if (ps == 0) return;
  if (!order_) return sc_core::wait(sc_core::sc_time::from_value(ps));
  order_->wait_until(sc_core::sc_time_stamp().value() + ps, rank_, woken_);
}

std::string Engine::blocked_reason() const {
  if (finished()) return "finished";
  const size_t i = records_.size();
  for (const auto& w : stream()[i].waits)
    if (semaphores_.value(w.sem) < w.at_least)
      return fmt::format("instruction {} waits for semaphore {} >= {}, which stays at {}", i, w.sem,
                         w.at_least, semaphores_.value(w.sem));
  return fmt::format("instruction {} did not complete", i);
}

}  // namespace systolic
