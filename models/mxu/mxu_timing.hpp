#pragma once
// Closed-form MXU timing: the `fast` model, and the reference the `exact` model must match
// cycle for cycle. Each dataflow (models/mxu/dataflow.hpp) computes its cycles from the
// pieces here; docs/mxu.md derives every formula; tests/unit/test_mxu_timing.cpp pins them
// with hand-worked 4x4 examples.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "models/common/divide.hpp"
#include "models/common/dtype.hpp"
#include "models/common/names.hpp"

namespace systolic {

enum class Convention { tpu, scalesim };

// Which operand the array holds (models/mxu/dataflow.hpp): weights, outputs or inputs.
enum class DataflowKind { ws, os, is };

inline constexpr auto kConventionNames =
    name_table<Convention>({{Convention::tpu, "tpu"}, {Convention::scalesim, "scalesim"}});

// How fast one PE multiplies in one type (mxu.rate.<dtype>, docs/mxu.md "MAC rate"): either
// `products` products a cycle, packed along K (int8 on TPU v5e: 2; the PE holds that many
// weights and adds that many products into its partial sum each cycle), or one product every
// `cycles` cycles (a reduced-rate type: the whole array steps once every `cycles` cycles).
// At most one of the two is above 1.
struct MacRate {
  int64_t products = 1;
  int64_t cycles = 1;
  double per_cycle() const { return static_cast<double>(products) / static_cast<double>(cycles); }
  bool operator==(const MacRate& o) const { return products == o.products && cycles == o.cycles; }
};
// The largest `products` or `cycles` a rate may have.
inline constexpr int64_t kMaxMacRate = 16;
// n or 1/n for an integer n in [1, kMaxMacRate]; nullopt for anything else (1.5, 0.3, 0).
std::optional<MacRate> mac_rate_of(double per_cycle);
// One rate per type the MXU multiplies, indexed by DType.
using MacRates = std::array<MacRate, kMxuDTypes>;

// The array as one matmul sees it: R x C PEs, each multiplying at the rate of the matmul's
// compute type.
struct ArrayShape {
  int64_t rows = 0;  // R
  int64_t cols = 0;  // C
  MacRate rate{};
};
// The array `a` multiplying type t (one of the MXU's types) at its rate in `rates`.
inline ArrayShape at_rate(ArrayShape a, const MacRates& rates, DType t) {
  a.rate = rates[static_cast<size_t>(t)];
  return a;
}

// The part of a GEMM [M,K]x[K,N] that one MXU computes.
struct MatmulShape {
  int64_t m = 0;
  int64_t k = 0;
  int64_t n = 0;
};

struct Folds {
  int64_t row_folds = 0;  // ceil(rows dimension / R) (ws, is: K; partial sums accumulate)
  int64_t col_folds = 0;  // ceil(cols dimension / C) (ws, os: N; is: M)
  int64_t total() const { return row_folds * col_folds; }
};

// Overflow-checked arithmetic for cycle counts: throws std::overflow_error.
uint64_t checked_mul(uint64_t a, uint64_t b);
uint64_t checked_add(uint64_t a, uint64_t b);

// A dataflow that holds one operand in the array (ws: B, is: A) and streams S vectors per
// fold through it; F folds:
//   scalesim: F * (2R + C + S - 2)                       (no overlap; SCALE-Sim prints this - 1)
//   tpu:      R + (F - 1) * max(S, R) + (S + R + C - 2)  (next fold's operand loads under the
//                                                          current fold's stream)
uint64_t held_operand_cycles(ArrayShape a, Convention c, uint64_t folds, uint64_t streamed);

}  // namespace systolic
