#include "models/vpu/vpu_engine.hpp"

#include <stdexcept>

#include "models/common/clock.hpp"

namespace systolic {

VpuEngine::VpuEngine(const sc_core::sc_module_name& name, EngineId id,
                     InstructionStream stream, SemaphoreBank& semaphores,
                     const VpuConfig& config)
    // Validated before the module registers itself, so a bad config leaves no half-built module.
    : Engine((validated(config), name), id, std::move(stream), semaphores), config_(config) {}

std::optional<std::string> VpuEngine::check(const VpuOp& op) const {
  if (op.rows < 0 || op.cols < 0)
    return "vpu op " + std::string(kVectorKindNames.name(op.kind)) + ": negative size " +
           std::to_string(op.rows) + "x" + std::to_string(op.cols);
  try {
    vpu_cycles(config_, op);
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

uint64_t VpuEngine::run_op(const VpuOp& op) {
  if (auto bad = check(op)) throw std::invalid_argument(std::string(basename()) + ": " + *bad);
  const uint64_t cycles = vpu_cycles(config_, op);
  const VpuTraffic traffic = vpu_traffic(op);
  ++stats_.instructions;
  stats_.elements += static_cast<uint64_t>(op.rows) * static_cast<uint64_t>(op.cols);
  stats_.vreg_ops += vpu_vreg_ops(config_, op.kind, static_cast<uint64_t>(op.rows),
                                  static_cast<uint64_t>(op.cols));
  stats_.busy_cycles += cycles;
  const bool in_weights = op.kind == VectorKind::dequantize;
  (in_weights ? stats_.weights_bytes_read : stats_.bytes_read) += traffic.bytes_read;
  (in_weights ? stats_.weights_bytes_written : stats_.bytes_written) += traffic.bytes_written;
  if (Scratchpad* pad = in_weights ? weights_ : vmem_) {
    pad->count_read(traffic.bytes_read);
    pad->count_write(traffic.bytes_written);
  }
  sleep(cycles_to_time(cycles).value());
  return cycles;
}

void VpuEngine::execute(const Instruction& instruction) {
  const VpuOp* op = std::get_if<VpuOp>(&instruction.op);
  if (!op)
    throw std::logic_error(std::string(basename()) + ": a VPU engine only executes vector instructions");
  run_op(*op);
}

}  // namespace systolic
