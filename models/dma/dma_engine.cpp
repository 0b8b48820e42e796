#include "models/dma/dma_engine.hpp"

#include <stdexcept>

#include "models/common/clock.hpp"

namespace systolic {

DmaEngine::DmaEngine(const sc_core::sc_module_name& name, EngineId id,
                     InstructionStream stream, SemaphoreBank& semaphores, HbmCore& hbm,
                     std::vector<Scratchpad*> scratchpads, const DmaConfig& config)
    : Engine(name, id, std::move(stream), semaphores),
      core_(hbm, std::move(scratchpads), config),
      quantum_ps_(config.quantum_cycles * kTicksPerCycle) {}

void DmaEngine::transfer(const DmaDescriptor& descriptor) {
  uint64_t now = sc_core::sc_time_stamp().value();
  core_.start(descriptor, now);
  while (!core_.issue_until(now + quantum_ps_)) {
    // Booked a quantum ahead: let the kernel (and the other engines) catch up.
    sleep(core_.next_issue_ps() - now);
    now = sc_core::sc_time_stamp().value();
    ++syncs_;
  }
  const uint64_t done = core_.completion_ps();
  if (done > now) sleep(done - now);
}

void DmaEngine::execute(const Instruction& instruction) {
  const DmaOp* op = std::get_if<DmaOp>(&instruction.op);
  if (!op) throw std::logic_error(std::string(basename()) + ": a DMA engine only executes DMA instructions");
  transfer(op->descriptor);
}

}  // namespace systolic
