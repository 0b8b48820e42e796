#pragma once
// A DMA engine as a SystemC engine: its instruction stream is its descriptor queue. Each DMA
// instruction's descriptor is handed to a DmaCore, which books requests on the shared HbmCore
// at most a quantum ahead of simulated time; the engine yields between quanta (so engines
// sharing the HBM interleave) and the instruction completes, signalling its semaphores, when
// the last byte has landed. Several engines share one HbmCore and the chip's scratchpads.
#include <optional>
#include <string>
#include <vector>

#include "models/dma/dma_core.hpp"
#include "models/engine/engine.hpp"
#include "models/isa/dma_descriptor.hpp"

namespace systolic {

class DmaEngine : public Engine {
 public:
  // `hbm` and `scratchpads` are shared with the other engines and must outlive this one.
  DmaEngine(const sc_core::sc_module_name& name, EngineId id, InstructionStream stream,
            SemaphoreBank& semaphores, HbmCore& hbm, std::vector<Scratchpad*> scratchpads,
            const DmaConfig& config);

  // Performs one descriptor from the calling SC_THREAD; returns when its last byte has landed.
  // (execute() calls it; tests call it from their own thread.)
  void transfer(const DmaDescriptor& descriptor);

  // nullopt when the engine can run the descriptor (see DmaCore::check): lets the chip reject
  // a bad program before sc_start instead of failing inside a thread.
  std::optional<std::string> check(const DmaDescriptor& descriptor) const {
    return core_.check(descriptor);
  }
  const DmaStats& stats() const { return core_.stats(); }
  uint64_t bytes_transferred() const { return core_.stats().bytes; }
  uint64_t syncs() const { return syncs_; }  // times the engine yielded inside a transfer

 protected:
  void execute(const Instruction& instruction) override;

 private:
  DmaCore core_;
  uint64_t quantum_ps_;
  uint64_t syncs_ = 0;
};

}  // namespace systolic
