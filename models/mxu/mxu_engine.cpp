#include "models/mxu/mxu_engine.hpp"

#include "models/common/clock.hpp"

namespace systolic {

MxuEngine::MxuEngine(const sc_core::sc_module_name& name, int index, std::vector<Instruction> stream,
                     SemaphoreBank& semaphores, std::unique_ptr<MxuCore> core, uint64_t seed)
    : Engine(name, {EngineKind::mxu, index}, std::move(stream), semaphores),
      core_(std::move(core)),
      seed_(seed) {}

void MxuEngine::attach_scratchpads(std::vector<Scratchpad*> scratchpads, ArrayShape shape) {
  scratchpads_ = std::move(scratchpads);
  shape_ = shape;
}

void MxuEngine::execute(const Instruction& instruction) {
  const auto& op = std::get<MatmulOp>(instruction.op);
  // One seed per layer: deterministic whatever order the engines run in.
  const uint64_t layer_seed = seed_ * 1000003u + static_cast<uint64_t>(instruction.layer);
  const uint64_t begin = now_cycles();
  const uint64_t cycles = core_->execute(op, layer_seed);
  macs_issued_ += static_cast<uint64_t>(op.m) * op.k * op.n;
  if (!scratchpads_.empty()) {
    // Weights are read once into the array; activations once per column fold (each fold
    // streams all M rows of its K slice); partial sums are read and written back once per
    // row fold (accumulation happens in the accumulators, in 32 bits).
    const Folds f = fold_count(shape_, {op.m, op.k, op.n});
    const uint64_t w = static_cast<uint64_t>(dtype_bytes(op.dtype));
    const uint64_t m = op.m, k = op.k, n = op.n;
    scratchpads_[0]->count_read(m * k * w * f.col_folds);
    scratchpads_[1]->count_read(k * n * w);
    scratchpads_[2]->count_read(m * n * 4 * (f.row_folds - 1));
    scratchpads_[2]->count_write(m * n * 4 * f.row_folds);
  }
  // A waveform observer steps the grid in simulated time (it waits one cycle per grid cycle);
  // wait only for what is left.
  const uint64_t elapsed = now_cycles() - begin;
  if (elapsed < cycles) sc_core::wait(cycles_to_time(cycles - elapsed));
}

}  // namespace systolic
