#include "models/common/numeric.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace systolic {
namespace {

struct FloatFormat {
  int mantissa_bits;  // explicit fraction bits
  int min_exponent;   // exponent of the smallest normal value (1 - bias)
  double max_finite;
  bool saturate;      // overflow and inf go to +-max_finite instead of +-inf
};

// Rounds the non-negative integer-or-fraction y to an integer, ties to even. y < 2^53, and
// its fractional part is exact, so the comparison with 0.5 is exact.
double round_half_even(double y) {
  const double lo = std::floor(y);
  const double frac = y - lo;
  if (frac > 0.5) return lo + 1;
  if (frac < 0.5) return lo;
  return std::fmod(lo, 2.0) == 0 ? lo : lo + 1;
}

float round_float(const FloatFormat& f, float x) {
  if (std::isnan(x)) return std::numeric_limits<float>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const double overflow = f.saturate ? f.max_finite : inf;
  const double a = std::fabs(static_cast<double>(x));
  double r;
  if (std::isinf(a)) {
    r = overflow;
  } else if (a == 0) {
    r = 0;
  } else {
    int e;
    std::frexp(a, &e);  // a = frac * 2^e, frac in [0.5, 1): a's exponent is e - 1
    // Spacing of representable values around a; below the normal range it stays at the
    // subnormal spacing. a / q and r * q are exact scalings by powers of two.
    const int exponent = std::max(e - 1, f.min_exponent);
    const double q = std::ldexp(1.0, exponent - f.mantissa_bits);
    r = round_half_even(a / q) * q;
    // A carry into the next binade is representable unless it lands above max_finite.
    if (r > f.max_finite) r = overflow;
  }
  return static_cast<float>(std::copysign(r, static_cast<double>(x)));
}

// Round half to even, saturating to the signed integer range [lo, hi].
float round_int(float x, float lo, float hi) {
  if (std::isnan(x)) return 0.0f;
  if (x >= hi) return hi;
  if (x <= lo) return lo;
  const double a = std::fabs(static_cast<double>(x));
  return static_cast<float>(std::copysign(round_half_even(a), static_cast<double>(x)));
}

// max_finite = (2 - 2^-m) * 2^emax for the IEEE-like formats.
constexpr FloatFormat kBf16{7, -126, 0x1.fep127, false};
constexpr FloatFormat kFp16{10, -14, 65504.0, false};
constexpr FloatFormat kE5m2{2, -14, 57344.0, false};
constexpr FloatFormat kE4m3{3, -6, 448.0, true};

}  // namespace

float round_to(DType type, float x) {
  switch (type) {
    case DType::int8: return round_int(x, -128.0f, 127.0f);
    case DType::int4: return round_int(x, -8.0f, 7.0f);
    case DType::fp8_e4m3: return round_float(kE4m3, x);
    case DType::fp8_e5m2: return round_float(kE5m2, x);
    case DType::bf16: return round_float(kBf16, x);
    case DType::fp16: return round_float(kFp16, x);
    case DType::fp32: return x;
  }
  return x;
}

int8_t saturate_int8(int x) { return static_cast<int8_t>(std::clamp(x, -128, 127)); }

}  // namespace systolic
