#pragma once
// The MXU as a SystemC engine: a thin wrapper that hands each matmul instruction to its core
// and advances simulated time by the returned duration, so the kernel stays out of the
// per-cycle loop even in the exact model.
#include <array>
#include <memory>

#include "models/engine/engine.hpp"
#include "models/mxu/mxu_core.hpp"
#include "models/sram/scratchpad.hpp"

namespace systolic {

// The operand bytes one matmul moves between the array and each scratchpad (indexed by
// ScratchpadId: A from vmem, B from weights, partial sums read from and written to the
// accumulators), on an array of `shape` (at the op's compute type) with dataflow `dataflow`.
// The engine counts these; the report attributes them to layers (sim/report/operands.hpp).
struct MatmulSramBytes {
  std::array<uint64_t, 3> read{}, written{};
};
MatmulSramBytes matmul_sram_bytes(const Dataflow& dataflow, ArrayShape shape, const MatmulOp& op);

class MxuEngine : public Engine {
 public:
  MxuEngine(const sc_core::sc_module_name& name, int index, InstructionStream stream,
            SemaphoreBank& semaphores, std::unique_ptr<MxuCore> core, uint64_t seed);

  uint64_t macs_issued() const { return macs_issued_; }
  // For the energy model: issued MACs per operand type (indexed by DType), and the operand
  // bytes this MXU read and wrote per scratchpad (indexed by ScratchpadId).
  const std::array<uint64_t, kMxuDTypes>& macs_by_dtype() const { return macs_by_dtype_; }
  const std::array<uint64_t, 3>& sram_read() const { return sram_read_; }
  const std::array<uint64_t, 3>& sram_written() const { return sram_written_; }

  // With a real memory system: count the operand bytes each matmul moves through the
  // scratchpads (indexed by ScratchpadId), for traffic and energy reports.
  void attach_scratchpads(std::vector<Scratchpad*> scratchpads, const MxuSetup& setup);

 protected:
  void execute(const Instruction& instruction) override;

 private:
  std::unique_ptr<MxuCore> core_;
  uint64_t seed_;
  uint64_t macs_issued_ = 0;
  std::array<uint64_t, kMxuDTypes> macs_by_dtype_{};
  std::array<uint64_t, 3> sram_read_{}, sram_written_{};
  std::vector<Scratchpad*> scratchpads_;
  MxuSetup setup_;
  const Dataflow* dataflow_ = nullptr;
};

}  // namespace systolic
