#pragma once
// Integer ceiling division of sizes and counts (a >= 0, b > 0), written as a / b plus a
// remainder test so that it cannot overflow where (a + b - 1) / b would.
#include <cstdint>

namespace systolic {

constexpr int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }
constexpr uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

// a rounded up to a multiple of b.
constexpr int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

}  // namespace systolic
