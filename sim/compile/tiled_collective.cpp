// The tiled compiler's collectives (tiled.cpp describes the lowering): each lowered by
// sim/compile/collective.cpp through the HBM area the layout keeps for them, and the two
// hooks of a decomposed one (sim/compile/overlap.hpp) into the GEMM beside it.
#include <algorithm>
#include <iterator>

#include "sim/compile/tiled_internal.hpp"

namespace systolic::compile_detail::tiled {

// Collectives move HBM to HBM, through the area the layout keeps past the workload's tensors.
void TiledCompiler::collective(const CollectiveWork& c) {
  CollectiveTarget target{
      program_,         config_,   chip_, [&](const std::string& name) { return emit_.sem(name); },
      hbm_.collectives, &channels_};
  const size_t index = static_cast<size_t>(&c - workload_.collectives.data());
  const bool decomposed = overlap_[index].decomposed;
  const size_t layers = program_.layers.size(), sems = program_.semaphores.size();
  const size_t vpu_before = emit_.stream(EngineKind::vpu, 0).instructions.size();
  const Producer done = emit_collective(target, c, input_, decomposed);
  std::vector<std::pair<size_t, size_t>> adds;
  if (decomposed && c.kind == CollectiveKind::reduce_scatter)
    adds = interleave_adds(vpu_before);
  else
    adds = {{vpu_before, emit_.stream(EngineKind::vpu, 0).instructions.size()}};
  if (observer_)
    observer_->lowered(
        {c, input_, done, hbm_.collectives, program_, layers, sems, std::move(adds), decomposed});
  input_ = joins_.after(c, next_gemm_, input_, done);
}

// A row block of a GEMM before a decomposed reduce-scatter is in HBM once the stores so far
// have landed (one DMA engine stores them, in order): the reduce-scatter adds it then.
void TiledCompiler::block_stored(const GemmTiles& at, Producer& produced) {
  if (!at.feeds_reduce) return;
  produced.chunks.push_back({{stores_done_, emit_.emitted(stores_done_)}});
  block_marks_.push_back(emit_.stream(EngineKind::vpu, 0).instructions.size());
}

// A decomposed reduce-scatter's additions (its VPU instructions from `from` on, step by step)
// move into the VPU stream right after the work of the row block each one adds: the stream
// runs in order, and behind the GEMM's weight dequantisations they would wait for all of them.
// Returns where each step's additions now sit.
std::vector<std::pair<size_t, size_t>> TiledCompiler::interleave_adds(size_t from) {
  InstructionList& stream = emit_.stream(EngineKind::vpu, 0).instructions;
  std::vector<Instruction> v = stream.to_vector();  // the list is shared copy-on-write: edit a copy
  std::vector<Instruction> adds(std::make_move_iterator(v.begin() + static_cast<std::ptrdiff_t>(from)),
                                std::make_move_iterator(v.end()));
  v.resize(from);
  const size_t steps = block_marks_.size() - 1, per = adds.size() / std::max<size_t>(1, steps);
  for (size_t s = steps; s-- > 0;)  // step s adds the received partial sums of block s + 1
    v.insert(v.begin() + static_cast<std::ptrdiff_t>(block_marks_[s + 1]),
             std::make_move_iterator(adds.begin() + static_cast<std::ptrdiff_t>(s * per)),
             std::make_move_iterator(adds.begin() + static_cast<std::ptrdiff_t>((s + 1) * per)));
  stream = std::move(v);
  std::vector<std::pair<size_t, size_t>> runs;  // step s after the s earlier steps' additions
  for (size_t s = 0; s < steps; ++s)
    runs.emplace_back(block_marks_[s + 1] + s * per, block_marks_[s + 1] + (s + 1) * per);
  block_marks_.clear();
  return runs;
}

}  // namespace systolic::compile_detail::tiled
