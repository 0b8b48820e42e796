#include "models/mxu/mxu_timing.hpp"

#include <algorithm>
#include <stdexcept>

namespace systolic {
namespace {
uint64_t mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw std::overflow_error("cycle count overflows 64 bits");
  return r;
}
uint64_t add(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw std::overflow_error("cycle count overflows 64 bits");
  return r;
}
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

std::string_view convention_name(Convention c) {
  return kConventionNames.name(c);
}

Folds fold_count(ArrayShape a, MatmulShape s) {
  return {ceil_div(s.k, a.rows), ceil_div(s.n, a.cols)};
}

uint64_t matmul_cycles(ArrayShape a, Convention c, MatmulShape s) {
  const uint64_t R = a.rows, C = a.cols, M = s.m;
  const uint64_t F = mul(fold_count(a, s).row_folds, fold_count(a, s).col_folds);
  const uint64_t drain = add(add(M, R), C) - 2;  // last row enters, crosses R rows and C cols
  if (c == Convention::scalesim) return mul(F, add(R, drain));
  return add(add(R, mul(F - 1, std::max(M, R))), drain);
}

}  // namespace systolic
