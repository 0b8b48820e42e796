#include "models/mxu/mxu_engine.hpp"

#include "models/common/clock.hpp"

namespace systolic {

MxuEngine::MxuEngine(const sc_core::sc_module_name& name, int index, std::vector<Instruction> stream,
                     SemaphoreBank& semaphores, std::unique_ptr<MxuCore> core, uint64_t seed)
    : Engine(name, {EngineKind::mxu, index}, std::move(stream), semaphores),
      core_(std::move(core)),
      seed_(seed) {}

void MxuEngine::execute(const Instruction& instruction) {
  const auto& op = std::get<MatmulOp>(instruction.op);
  // One seed per layer: deterministic whatever order the engines run in.
  const uint64_t layer_seed = seed_ * 1000003u + static_cast<uint64_t>(instruction.layer);
  const uint64_t cycles = core_->execute(op, layer_seed);
  macs_issued_ += static_cast<uint64_t>(op.m) * op.k * op.n;
  sc_core::wait(cycles_to_time(cycles));
}

}  // namespace systolic
