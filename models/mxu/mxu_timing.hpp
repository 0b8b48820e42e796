#pragma once
// Closed-form MXU timing: the `fast` model, and the reference the `exact` model must match
// cycle for cycle. docs/mxu.md derives every formula; tests/unit/test_mxu_timing.cpp pins
// them with hand-worked 4x4 examples.
#include <cstdint>
#include <string_view>

#include "models/common/names.hpp"

namespace systolic {

enum class Convention { tpu, scalesim };
inline constexpr auto kConventionNames =
    name_table<Convention>({{Convention::tpu, "tpu"}, {Convention::scalesim, "scalesim"}});
std::string_view convention_name(Convention c);

struct ArrayShape {
  int64_t rows = 0;  // R: K maps onto rows
  int64_t cols = 0;  // C: N maps onto columns
};

// The part of a GEMM [M,K]x[K,N] that one MXU computes.
struct MatmulShape {
  int64_t m = 0;
  int64_t k = 0;
  int64_t n = 0;
};

struct Folds {
  int64_t row_folds = 0;  // ceil(K / R): partial sums accumulate across these
  int64_t col_folds = 0;  // ceil(N / C)
  int64_t total() const { return row_folds * col_folds; }
};

Folds fold_count(ArrayShape a, MatmulShape s);

// Cycles from the instruction's issue until the last partial sum has left the array.
//   scalesim: F * (2R + C + M - 2)                       (no overlap; SCALE-Sim prints this - 1)
//   tpu:      R + (F - 1) * max(M, R) + (M + R + C - 2)  (next fold's weights load under the
//                                                          current fold's stream)
// Throws std::overflow_error when the count does not fit in 64 bits.
uint64_t matmul_cycles(ArrayShape a, Convention c, MatmulShape s);

}  // namespace systolic
