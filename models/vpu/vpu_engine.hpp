#pragma once
// The VPU as a SystemC engine: a thin wrapper that prices each vector instruction with the
// closed form of models/vpu/vpu_core.hpp and advances simulated time by it. One VPU per chip;
// it runs concurrently with the MXUs and DMA engines, ordered only by semaphores, so vector
// work overlaps matmuls wherever the compiler's dependencies allow.
#include <optional>
#include <string>
#include <vector>

#include "models/engine/engine.hpp"
#include "models/sram/scratchpad.hpp"
#include "models/vpu/vpu_core.hpp"

namespace systolic {

struct VpuStats {
  uint64_t instructions = 0;
  uint64_t elements = 0;     // sum of rows * cols
  uint64_t vreg_ops = 0;     // sum of vpu_vreg_ops
  uint64_t busy_cycles = 0;  // sum of vpu_cycles
  uint64_t bytes_read = 0;   // VMEM operand traffic (vpu_traffic)
  uint64_t bytes_written = 0;
  // Dequantise ops work in place in the weight buffer (docs/precision.md): their traffic.
  uint64_t weights_bytes_read = 0;
  uint64_t weights_bytes_written = 0;
};

class VpuEngine : public Engine {
 public:
  // `id` is the engine's name in the program (EngineKind::vpu once the IR has it).
  // Throws std::invalid_argument for an invalid config.
  VpuEngine(const sc_core::sc_module_name& name, EngineId id, InstructionStream stream,
            SemaphoreBank& semaphores, const VpuConfig& config);

  // With a real memory system: count operand traffic on VMEM, and the dequantise ops' on the
  // weight buffer (both must outlive the engine).
  void attach_scratchpads(Scratchpad* vmem, Scratchpad* weights) {
    vmem_ = vmem;
    weights_ = weights;
  }

  // Performs one vector op from the calling SC_THREAD (execute() calls it; tests call it
  // from their own thread). Returns its duration in cycles.
  uint64_t run_op(const VpuOp& op);

  // nullopt when the engine can run the op, else what is wrong: for checking a program
  // before sc_start instead of failing inside a thread.
  std::optional<std::string> check(const VpuOp& op) const;

  const VpuConfig& config() const { return config_; }
  const VpuStats& stats() const { return stats_; }

 protected:
  void execute(const Instruction& instruction) override;

 private:
  VpuConfig config_;
  VpuStats stats_;
  Scratchpad* vmem_ = nullptr;
  Scratchpad* weights_ = nullptr;
};

}  // namespace systolic
