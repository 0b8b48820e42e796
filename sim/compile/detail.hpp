#pragma once
// Pieces of the compiler (compile.cpp: the entry point; tiled*.cpp: the lowering, tiles moved
// by DMA through the scratchpads; collective.cpp: ICI collectives).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "models/chip/chip_config.hpp"
#include "models/isa/program.hpp"
#include "models/mxu/operands.hpp"
#include "sim/compile/budget.hpp"
#include "sim/workload/workload.hpp"

namespace systolic::compile_detail {

// Column folds [first, last) that MXU `i` of `count` computes: a balanced split, the first
// MXUs taking one more fold when they do not divide evenly.
std::pair<int64_t, int64_t> fold_share(int64_t folds, int64_t count, int64_t i);

// A GEMM's operand types on this chip (models/mxu/operands.hpp); throws InputError naming the
// entry when the MXU cannot multiply the pair.
MxuOperands operands_of(const ChipConfig& config, const Gemm& g);

// The layer table entry of a GEMM (dtype: what the MXU computes in); throws InputError when
// its MAC count overflows.
LayerInfo layer_info(const ChipConfig& config, const Gemm& g);

// The layer table entry of vector work (kind "vector": m = rows, k = 1, n = cols, no MACs).
LayerInfo vector_layer_info(const VectorWork& v);

// Calls emit(vector work) for each entry of `w.vectors` placed after `gemms_done` GEMMs.
template <class Emit>
void for_vectors_after(const Workload& w, size_t gemms_done, Emit&& emit) {
  for (const VectorWork& v : w.vectors)
    if (v.after_gemms == gemms_done) emit(v);
}

// What the instances of a workload entry wait for: the entry before it (its input). When both
// entries have the same number of instances (attention heads, decode slots), instance i needs
// only instance i of the one before, so the engines pipeline across instances (softmax of head
// i on the VPU while the MXUs compute head i+1); otherwise it needs all of it.
struct Producer {
  int sem = -1;               // counts the producing entry's completion signals; -1: none
  uint64_t base = 0;          // the count before that entry
  uint64_t per_instance = 0;  // signals one of its instances gives
  int64_t instances = 0;
  std::vector<SemWait> also;  // further conditions on all of it (a collective's receipts)
  // Rows that come in blocks (a decomposed collective, sim/compile/overlap.hpp): block j of
  // chunks.size() nearly equal row blocks is ready once chunks[j] hold. Empty: all at once.
  std::vector<std::vector<SemWait>> chunks;
  void add_wait(Instruction& instr, int64_t instance, int64_t of) const {
    instr.waits.insert(instr.waits.end(), also.begin(), also.end());
    if (sem < 0) return;
    const uint64_t upto = of == instances ? static_cast<uint64_t>(instance) + 1 : static_cast<uint64_t>(instances);
    if (base + upto * per_instance > 0) instr.waits.push_back({sem, base + upto * per_instance});
  }
  // Rows [first, end) of `rows` (a single instance): the blocks they fall in, when the rows
  // come in blocks; else all of it.
  void add_row_wait(Instruction& instr, int64_t rows, int64_t first, int64_t end) const {
    if (chunks.empty()) return add_wait(instr, 0, instances);
    instr.waits.insert(instr.waits.end(), also.begin(), also.end());
    const int64_t n = static_cast<int64_t>(chunks.size());
    for (int64_t j = 0; j < n; ++j) {
      const int64_t lo = j * (rows / n) + std::min(j, rows % n), hi = lo + rows / n + (j < rows % n ? 1 : 0);
      if (lo < end && hi > first) instr.waits.insert(instr.waits.end(), chunks[j].begin(), chunks[j].end());
    }
  }
};

// Collectives joined later than the next entry (CollectiveWork::joined_by_gemm): the entries
// up to the joining GEMM keep the collective's own input, the joining GEMM waits for it too.
class CollectiveJoins {
 public:
  // The input of the entries after collective `c` (which completes with `done`), `next_gemm`
  // the index of the GEMM after it.
  Producer after(const CollectiveWork& c, size_t next_gemm, const Producer& input, const Producer& done) {
    if (!c.joined_by_gemm || *c.joined_by_gemm <= next_gemm) return done;
    std::vector<SemWait>& waits = pending_[*c.joined_by_gemm];
    waits.insert(waits.end(), done.also.begin(), done.also.end());
    return input;
  }
  // Before GEMM `index`: its input also waits for the collectives it joins.
  void before_gemm(size_t index, Producer& input) {
    const auto it = pending_.find(index);
    if (it == pending_.end()) return;
    input.also.insert(input.also.end(), it->second.begin(), it->second.end());
    pending_.erase(it);
  }

 private:
  std::map<size_t, std::vector<SemWait>> pending_;
};

// Emits, after `gemms_done` GEMMs, the vector work and collectives placed there, in workload
// order (a collective goes before the vector entries its after_vectors count excludes). A
// workload lists both in order of after_gemms (every reader appends them as it goes), so the
// entries placed there are found by binary search: a scan from the start for each GEMM made a
// 65,536-layer model's compile quadratic (minutes).
template <class EmitVector, class EmitCollective>
void for_side_work_after(const Workload& w, size_t gemms_done, EmitVector&& emit_vector,
                         EmitCollective&& emit_collective) {
  auto v = std::partition_point(w.vectors.begin(), w.vectors.end(),
                                [&](const VectorWork& x) { return x.after_gemms < gemms_done; });
  size_t vectors_before = static_cast<size_t>(v - w.vectors.begin());
  auto c = std::partition_point(w.collectives.begin(), w.collectives.end(),
                                [&](const CollectiveWork& x) { return x.after_gemms < gemms_done; });
  const auto collectives_up_to = [&](size_t vectors) {
    for (; c != w.collectives.end(); ++c) {
      if (c->after_gemms > gemms_done || c->after_vectors > vectors) break;
      emit_collective(*c);
    }
  };
  for (; v != w.vectors.end() && v->after_gemms == gemms_done; ++v) {
    collectives_up_to(vectors_before);
    emit_vector(*v);
    ++vectors_before;
  }
  collectives_up_to(SIZE_MAX);
}

// A collective as the tiled lowering has just emitted it (for compile_system, which lowers it
// again for the other chips of the same workload: only collectives depend on the chip).
struct LoweredCollective {
  const CollectiveWork& work;
  const Producer& input;   // what its first messages waited for
  const Producer& done;    // what it returned (what its readers wait for)
  uint64_t hbm_base = 0;   // its buffers' HBM address
  const Program& program;  // with it emitted
  size_t layers_before = 0, semaphores_before = 0;
  // Where its VPU additions sit in the program's VPU stream, [begin, end) each, in the order
  // it emitted them: one run right after the work before it, or, decomposed, one per ring step,
  // each after the row block of its matmul that step adds (TiledCompiler::interleave_adds).
  std::vector<std::pair<size_t, size_t>> adds;
  bool decomposed = false;  // cut into steps beside its matmul (sim/compile/overlap.hpp)
};
class CollectiveObserver {
 public:
  virtual ~CollectiveObserver() = default;
  virtual void lowered(const LoweredCollective& c) = 0;
};

// The lowering (both memory modes: memory.ideal only changes how the chip times it). The
// observer, if any, sees each collective as it is emitted.
Program compile_tiled(const ChipConfig& config, const Workload& workload, int chip = 0,
                      CollectiveObserver* observer = nullptr);
// compile() with an observer: the checks, then the lowering.
Program compile_checked(const ChipConfig& config, const Workload& workload, int chip, const Budget& budget,
                        CollectiveObserver* observer);

constexpr uint64_t kHbmAlign = 4096;  // every region of the HBM layout starts at a multiple of this

// The HBM the tiled lowering lays a workload out in (docs/memory.md, "HBM layout and footprint").
struct HbmFootprint {
  uint64_t weights = 0;      // every instance of every matmul's B operand: the parameters
  uint64_t kv_cache = 0;     // every instance of every attention entry's B operand: keys, values
  uint64_t activations = 0;  // two transient regions the entries read and write in turn, and
                             // the area collectives send from and receive into
  uint64_t total() const { return weights + kv_cache + activations; }
};
HbmFootprint hbm_footprint(const ChipConfig& config, const Workload& workload);

}  // namespace systolic::compile_detail
