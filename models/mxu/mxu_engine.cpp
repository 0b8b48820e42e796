#include "models/mxu/mxu_engine.hpp"

#include "models/common/clock.hpp"

namespace systolic {

MatmulSramBytes matmul_sram_bytes(const Dataflow& dataflow, ArrayShape shape, const MatmulOp& op) {
  // How often each operand passes between the scratchpads and the array depends on the
  // dataflow (models/mxu/dataflow/*.cpp); partial sums are 32 bits in the accumulators.
  const OperandTraffic e = dataflow.traffic(shape, {op.m, op.k, op.n});
  // Each operand at the width it is stored in (mixed precision: docs/precision.md).
  return {{dtype_storage_bytes(op.a(), e.a_read), dtype_storage_bytes(op.b(), e.b_read), e.acc_read * 4},
          {0, 0, e.acc_written * 4}};
}

MxuEngine::MxuEngine(const sc_core::sc_module_name& name, int index, InstructionStream stream,
                     SemaphoreBank& semaphores, std::unique_ptr<MxuCore> core, uint64_t seed)
    : Engine(name, {EngineKind::mxu, index}, std::move(stream), semaphores),
      core_(std::move(core)),
      seed_(seed) {}

void MxuEngine::attach_scratchpads(std::vector<Scratchpad*> scratchpads, const MxuSetup& setup) {
  scratchpads_ = std::move(scratchpads);
  setup_ = setup;
  dataflow_ = &dataflow_of(setup.dataflow);
}

void MxuEngine::execute(const Instruction& instruction) {
  const auto& op = std::get<MatmulOp>(instruction.op);
  // One seed per layer: deterministic whatever order the engines run in.
  const uint64_t layer_seed = seed_ * 1000003u + static_cast<uint64_t>(instruction.layer);
  const uint64_t begin = now_cycles();
  const uint64_t cycles = core_->execute(op, layer_seed);
  const uint64_t macs = static_cast<uint64_t>(op.m) * op.k * op.n;
  macs_issued_ += macs;
  macs_by_dtype_[static_cast<size_t>(op.dtype)] += macs;
  if (!scratchpads_.empty()) {
    const MatmulSramBytes bytes = matmul_sram_bytes(*dataflow_, setup_.for_type(op.dtype), op);
    for (size_t i = 0; i < 3; ++i) {
      scratchpads_[i]->count_read(bytes.read[i]);
      scratchpads_[i]->count_write(bytes.written[i]);
      sram_read_[i] += bytes.read[i];
      sram_written_[i] += bytes.written[i];
    }
  }
  // A waveform observer steps the grid in simulated time (it waits one cycle per grid cycle);
  // wait only for what is left.
  const uint64_t elapsed = now_cycles() - begin;
  if (elapsed < cycles) sleep(cycles_to_time(cycles - elapsed).value());
}

}  // namespace systolic
