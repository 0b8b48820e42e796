// Closed-form MXU timing (the `fast` model), pinned by examples worked by hand.
//
// With R rows, C columns, F = ceil(K/R) * ceil(N/C) folds:
//   scalesim: F * (2R + C + M - 2)                        each fold: load R, then stream M rows
//                                                           through R rows and C columns
//   tpu:      R + (F - 1) * max(M, R) + (M + R + C - 2)   first load, one fold period per later
//                                                           fold, then the last fold's drain
// docs/mxu.md derives both, with the cycle-by-cycle schedule of the first example below.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>

#include "models/mxu/dataflow.hpp"
#include "models/mxu/mxu_timing.hpp"

namespace test_mxu_timing {

using namespace systolic;

namespace {
constexpr ArrayShape k4x4{4, 4};
// This file pins weight-stationary; test_dataflow.cpp covers the others.
Folds fold_count(ArrayShape a, MatmulShape s) { return dataflow_of(DataflowKind::ws).folds(a, s); }
uint64_t matmul_cycles(ArrayShape a, Convention c, MatmulShape s) {
  return dataflow_of(DataflowKind::ws).cycles(a, c, s);
}
uint64_t scalesim(ArrayShape a, int64_t m, int64_t k, int64_t n) {
  return matmul_cycles(a, Convention::scalesim, {m, k, n});
}
uint64_t tpu(ArrayShape a, int64_t m, int64_t k, int64_t n) {
  return matmul_cycles(a, Convention::tpu, {m, k, n});
}
// Cycles of [m, k] x [k, n] under both conventions: {scalesim, tpu}.
std::pair<uint64_t, uint64_t> both(ArrayShape a, int64_t m, int64_t k, int64_t n) {
  return {scalesim(a, m, k, n), tpu(a, m, k, n)};
}
using Cycles = std::pair<uint64_t, uint64_t>;
}  // namespace

TEST_CASE("fold counts", "[mxu][timing]") {
  // K on rows, N on columns: ceil(K/R) row folds, ceil(N/C) column folds.
  CHECK(fold_count(k4x4, {6, 8, 4}).row_folds == 2);   // 8/4
  CHECK(fold_count(k4x4, {6, 8, 4}).col_folds == 1);   // 4/4
  CHECK(fold_count(k4x4, {6, 8, 4}).total() == 2);
  CHECK(fold_count(k4x4, {1, 1, 1}).total() == 1);     // tiny GEMM still takes one fold
  CHECK(fold_count(k4x4, {7, 5, 9}).row_folds == 2);   // ceil(5/4)
  CHECK(fold_count(k4x4, {7, 5, 9}).col_folds == 3);   // ceil(9/4)
  CHECK(fold_count(k4x4, {7, 5, 9}).total() == 6);
  CHECK(fold_count(k4x4, {3, 4, 4}).total() == 1);     // exact fit
  CHECK(fold_count({2, 8}, {3, 5, 10}).row_folds == 3);  // ceil(5/2), non-square array
  CHECK(fold_count({2, 8}, {3, 5, 10}).col_folds == 2);  // ceil(10/8)
  CHECK(fold_count({1, 1}, {3, 2, 2}).total() == 4);
  // M never folds: it streams.
  CHECK(fold_count(k4x4, {1000, 4, 4}).total() == 1);
}

TEST_CASE("4x4, M=6 K=8 N=4: two row folds", "[mxu][timing]") {
  // folds = ceil(8/4) * ceil(4/4) = 2
  // scalesim: 2 * (2*4 + 4 + 6 - 2) = 2 * 16 = 32   (SCALE-Sim v2 prints 31)
  // tpu:      4 + (2-1)*max(6,4) + (6+4+4-2) = 4 + 6 + 12 = 22
  CHECK(both(k4x4, 6, 8, 4) == Cycles{32, 22});
}

TEST_CASE("4x4, M < R: weight loading bounds the tpu fold period", "[mxu][timing]") {
  // M=2, K=8, N=8: folds = 2 * 2 = 4
  // scalesim: 4 * (8 + 4 + 2 - 2) = 4 * 12 = 48
  // tpu:      4 + 3*max(2,4) + (2+4+4-2) = 4 + 12 + 8 = 24   (max(M,R) = R = 4, not M = 2,
  //           which would give 4 + 6 + 8 = 18)
  CHECK(both(k4x4, 2, 8, 8) == Cycles{48, 24});

  // Decode, M=1, K=16, N=4: folds = 4 * 1 = 4
  // scalesim: 4 * (8 + 4 + 1 - 2) = 4 * 11 = 44
  // tpu:      4 + 3*max(1,4) + (1+4+4-2) = 4 + 12 + 7 = 23
  CHECK(both(k4x4, 1, 16, 4) == Cycles{44, 23});

  // M = R exactly, M=4, K=8, N=4: folds 2
  // scalesim: 2 * (8 + 4 + 4 - 2) = 28;  tpu: 4 + 1*4 + (4+4+4-2) = 4 + 4 + 10 = 18
  CHECK(both(k4x4, 4, 8, 4) == Cycles{28, 18});
}

TEST_CASE("4x4, single fold: both conventions agree", "[mxu][timing]") {
  // With F = 1: scalesim 2R + C + M - 2; tpu R + 0 + (M + R + C - 2): the same number.
  // K < R: M=5, K=3, N=4: 8 + 4 + 5 - 2 = 15
  CHECK(both(k4x4, 5, 3, 4) == Cycles{15, 15});
  // N < C: M=3, K=4, N=2: 8 + 4 + 3 - 2 = 13 (the padded columns still drain)
  CHECK(both(k4x4, 3, 4, 2) == Cycles{13, 13});
  // The smallest GEMM, M=K=N=1: 8 + 4 + 1 - 2 = 11
  CHECK(both(k4x4, 1, 1, 1) == Cycles{11, 11});
}

TEST_CASE("4x4, K and N not multiples of the array", "[mxu][timing]") {
  // M=7, K=5, N=9: folds = ceil(5/4) * ceil(9/4) = 2 * 3 = 6
  // scalesim: 6 * (8 + 4 + 7 - 2) = 6 * 17 = 102
  // tpu:      4 + 5*max(7,4) + (7+4+4-2) = 4 + 35 + 13 = 52
  CHECK(both(k4x4, 7, 5, 9) == Cycles{102, 52});
}

TEST_CASE("non-square and 1x1 arrays", "[mxu][timing]") {
  // 2x8 (R=2, C=8), M=3, K=5, N=10: folds = ceil(5/2) * ceil(10/8) = 3 * 2 = 6
  // scalesim: 6 * (4 + 8 + 3 - 2) = 6 * 13 = 78
  // tpu:      2 + 5*max(3,2) + (3+2+8-2) = 2 + 15 + 11 = 28
  CHECK(both({2, 8}, 3, 5, 10) == Cycles{78, 28});
  // 8x2 (R=8, C=2), same GEMM: folds = 1 * 5 = 5
  // scalesim: 5 * (16 + 2 + 3 - 2) = 5 * 19 = 95
  // tpu:      8 + 4*max(3,8) + (3+8+2-2) = 8 + 32 + 11 = 51
  CHECK(both({8, 2}, 3, 5, 10) == Cycles{95, 51});
  // 1x1, M=3, K=2, N=2: folds 4
  // scalesim: 4 * (2 + 1 + 3 - 2) = 16;  tpu: 1 + 3*max(3,1) + (3+1+1-2) = 1 + 9 + 3 = 13
  CHECK(both({1, 1}, 3, 2, 2) == Cycles{16, 13});
}

TEST_CASE("cycle counts that do not fit in 64 bits throw", "[mxu][timing]") {
  const int64_t big = std::numeric_limits<int64_t>::max();
  // 2 folds * (2^63 - 1 + 14) > 2^64
  CHECK_THROWS_AS(scalesim(k4x4, big, 8, 4), std::overflow_error);
  // 4 + (2^63 - 1) + (2^63 - 1 + 6) > 2^64
  CHECK_THROWS_AS(tpu(k4x4, big, 8, 4), std::overflow_error);
  // 2^40 * 2^40 folds on a 1x1 array
  const int64_t k = int64_t{1} << 40;
  CHECK_THROWS_AS(scalesim({1, 1}, 1, k, k), std::overflow_error);
  CHECK_THROWS_AS(tpu({1, 1}, 1, k, k), std::overflow_error);
  // Large but representable: one fold, M = 2^40: 8 + 4 + 2^40 - 2
  CHECK(scalesim(k4x4, k, 4, 4) == (uint64_t{1} << 40) + 10);
  CHECK(tpu(k4x4, k, 4, 4) == (uint64_t{1} << 40) + 10);
}

TEST_CASE("convention names", "[mxu][timing]") {
  CHECK(kConventionNames.name(Convention::tpu) == "tpu");
  CHECK(kConventionNames.name(Convention::scalesim) == "scalesim");
}

}  // namespace test_mxu_timing
