#include "models/mxu/mxu_timing.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace systolic {

uint64_t checked_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw std::overflow_error("cycle count overflows 64 bits");
  return r;
}

uint64_t checked_add(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw std::overflow_error("cycle count overflows 64 bits");
  return r;
}

std::optional<MacRate> mac_rate_of(double per_cycle) {
  if (!(per_cycle > 0)) return std::nullopt;
  const bool fast = per_cycle >= 1;
  const double n = fast ? per_cycle : 1 / per_cycle;
  const double whole = std::round(n);
  // 1/3 is not exact in binary: accept a reciprocal within rounding of an integer.
  if (whole < 1 || whole > kMaxMacRate || std::abs(n - whole) > (fast ? 0 : 1e-9 * whole)) return std::nullopt;
  const auto v = static_cast<int64_t>(whole);
  return fast ? MacRate{v, 1} : MacRate{1, v};
}

uint64_t held_operand_cycles(ArrayShape a, Convention c, uint64_t folds, uint64_t streamed) {
  const uint64_t R = a.rows, C = a.cols, S = streamed, F = folds;
  const uint64_t drain = checked_add(checked_add(S, R), C) - 2;  // last vector enters, crosses R rows, C cols
  if (c == Convention::scalesim) return checked_mul(F, checked_add(R, drain));
  return checked_add(checked_add(R, checked_mul(F - 1, std::max(S, R))), drain);
}

}  // namespace systolic
