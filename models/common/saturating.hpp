#pragma once
// Unsigned counts that saturate at UINT64_MAX instead of wrapping: for estimates and bounds
// of work, where a count past the range only has to stay past every limit.
#include <cstdint>

namespace systolic {

inline uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t s = 0;
  return __builtin_add_overflow(a, b, &s) ? UINT64_MAX : s;
}

inline uint64_t saturating_mul(uint64_t a, uint64_t b) {
  uint64_t p = 0;
  return __builtin_mul_overflow(a, b, &p) ? UINT64_MAX : p;
}

}  // namespace systolic
