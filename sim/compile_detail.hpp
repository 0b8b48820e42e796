#pragma once
// Pieces shared by the compiler's two lowerings (compile.cpp: ideal memory; compile_tiled.cpp:
// tiles moved by DMA through the scratchpads).
#include <cstdint>
#include <utility>

#include "sim/config.hpp"
#include "sim/program.hpp"
#include "sim/workload.hpp"

namespace systolic::compile_detail {

// Column folds [first, last) that MXU `i` of `count` computes: a balanced split, the first
// MXUs taking one more fold when they do not divide evenly.
std::pair<int64_t, int64_t> fold_share(int64_t folds, int64_t count, int64_t i);

// The layer table entry of a GEMM; throws InputError when its MAC count overflows.
LayerInfo layer_info(const ChipConfig& config, const Gemm& g);

// The layer table entry of vector work (kind "vector": m = rows, k = 1, n = cols, no MACs).
LayerInfo vector_layer_info(const VectorWork& v);

// Calls emit(vector work) for each entry of `w.vectors` placed after `gemms_done` GEMMs.
template <class Emit>
void for_vectors_after(const Workload& w, size_t gemms_done, Emit&& emit) {
  for (const VectorWork& v : w.vectors)
    if (v.after_gemms == gemms_done) emit(v);
}

// Lowering with a real memory system (memory.ideal = false).
Program compile_tiled(const ChipConfig& config, const Workload& workload);

}  // namespace systolic::compile_detail
