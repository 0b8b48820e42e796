// The `exact` MXU model (PeGrid) and operand numerics (numeric.hpp).
//
// Every expected value here comes from a reference written in this file: naive GEMMs, an
// fp32 re-enactment of the documented accumulation order, closed-form cycle counts typed in
// from DESIGN.md section 4, a brute-force table of each small float format, and schedules
// worked by hand in comments.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "models/common/numeric.hpp"
#include "models/mxu/dataflow.hpp"
#include "models/mxu/mxu_timing.hpp"
#include "models/mxu/pe_grid.hpp"

namespace test_pe_grid {

using namespace systolic;

namespace {

constexpr double kU = 0x1.0p-24;  // fp32 unit roundoff

// ---- references -------------------------------------------------------------------------

// DESIGN.md section 4, typed in independently of mxu_timing.cpp.
uint64_t reference_cycles(int64_t R, int64_t C, Convention conv, int64_t M, int64_t K,
                          int64_t N) {
  const int64_t F = ((K + R - 1) / R) * ((N + C - 1) / C);
  if (conv == Convention::scalesim) return static_cast<uint64_t>(F * (2 * R + C + M - 2));
  return static_cast<uint64_t>(R + (F - 1) * std::max(M, R) + (M + R + C - 2));
}

// Naive int64 GEMM reduced modulo 2^32, i.e. what int32 two's-complement accumulation gives.
Matrix<int32_t> reference_int8(const Matrix<int8_t>& a, const Matrix<int8_t>& b) {
  Matrix<int32_t> c(a.rows, b.cols);
  for (int64_t m = 0; m < a.rows; ++m)
    for (int64_t n = 0; n < b.cols; ++n) {
      int64_t s = 0;
      for (int64_t k = 0; k < a.cols; ++k) s += int64_t{a(m, k)} * int64_t{b(k, n)};
      c(m, n) = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(s)));
    }
  return c;
}

// The documented fp32 order: within a fold, psum = psum_from_above + a*w row by row, starting
// from +0; the psum leaving the array is added to the output accumulator (starting at +0),
// fold by fold in K order. Padded rows add a*w = 0*0 = +0, which never changes the psum, so
// they are skipped here.
Matrix<float> reference_fp32_order(const Matrix<float>& a, const Matrix<float>& b, int64_t R) {
  Matrix<float> c(a.rows, b.cols);
  for (int64_t m = 0; m < a.rows; ++m)
    for (int64_t n = 0; n < b.cols; ++n) {
      float acc = 0.0f;
      for (int64_t k0 = 0; k0 < a.cols; k0 += R) {
        float psum = 0.0f;
        for (int64_t k = k0; k < std::min(a.cols, k0 + R); ++k) {
          const float prod = a(m, k) * b(k, n);
          psum = psum + prod;
        }
        acc = acc + psum;
      }
      c(m, n) = acc;
    }
  return c;
}

// Accuracy check against a double-precision GEMM. Each of the K terms a*b passes through at
// most 1 product rounding (exact for every format but fp32, whose 24-bit significands can
// need 48 bits), at most K additions down the psum chain and at most ceil(K/R) <= K additions
// into the output accumulator, each a relative error <= u = 2^-24. The standard summation
// bound then gives |computed - exact| <= gamma_n * sum_k |a_k b_k| with n <= 2K + 1 and
// gamma_n = n u / (1 - n u); we allow (2K + 2) u sum|a b| (> gamma_{2K+1} for K <= 70), plus
// 1e-30 so that an exact zero is not compared with a zero tolerance.
size_t count_outside_bound(const Matrix<float>& a, const Matrix<float>& b,
                           const Matrix<float>& c) {
  size_t bad = 0;
  for (int64_t m = 0; m < a.rows; ++m)
    for (int64_t n = 0; n < b.cols; ++n) {
      double exact = 0, magnitude = 0;
      for (int64_t k = 0; k < a.cols; ++k) {
        const double t = double{a(m, k)} * double{b(k, n)};
        exact += t;
        magnitude += std::fabs(t);
      }
      const double tol = double(2 * a.cols + 2) * kU * magnitude + 1e-30;
      if (!(std::fabs(double{c(m, n)} - exact) <= tol)) ++bad;
    }
  return bad;
}

template <class T>
size_t count_mismatches(const Matrix<T>& x, const Matrix<T>& y) {
  if (x.rows != y.rows || x.cols != y.cols) return static_cast<size_t>(-1);
  size_t bad = 0;
  for (size_t i = 0; i < x.data.size(); ++i)
    if (!(x.data[i] == y.data[i])) ++bad;
  return bad;
}

Matrix<int8_t> random_int8(int64_t rows, int64_t cols, std::mt19937_64& rng) {
  Matrix<int8_t> m(rows, cols);
  for (auto& v : m.data) v = static_cast<int8_t>(static_cast<int>(rng() & 0xff) - 128);
  return m;
}

// Uniform in [-2, 2) from raw bits (same on every standard library), rounded to `t`.
Matrix<float> random_float(int64_t rows, int64_t cols, DType t, std::mt19937_64& rng) {
  Matrix<float> m(rows, cols);
  for (auto& v : m.data)
    v = round_to(t, static_cast<float>(static_cast<double>(rng() >> 11) * 0x1.0p-53 * 4.0 - 2.0));
  return m;
}

// ---- observer ---------------------------------------------------------------------------

struct Recorder : GridObserver {
  std::map<uint64_t, std::vector<PeState>> states;
  std::vector<uint64_t> cycles;
  int64_t cols = 0;
  void on_cycle(uint64_t cycle, const std::vector<PeState>& pes) override {
    cycles.push_back(cycle);
    states[cycle] = pes;
  }
  const PeState& at(uint64_t cycle, int64_t r, int64_t c) const {
    return states.at(cycle)[static_cast<size_t>(r * cols + c)];
  }
  // What PE (r, c) holds at `cycle`: fold, weight, activation, psum, shadow.
  std::array<double, 5> held(uint64_t cycle, int64_t r, int64_t c) const {
    const PeState& p = at(cycle, r, c);
    return {static_cast<double>(p.fold), p.weight, p.activation, p.psum, p.shadow};
  }
};

// [m, k] x [k, n] int8 (row-major values) on a 2x2 tpu grid, every cycle recorded.
struct Recorded2x2 {
  Recorder rec;
  Matrix<int32_t> c;
  uint64_t cycles = 0;
};
Recorded2x2 run_2x2(int64_t m, int64_t k, int64_t n, std::vector<int8_t> a_values, std::vector<int8_t> b_values) {
  Matrix<int8_t> a(m, k), b(k, n);
  a.data = std::move(a_values);
  b.data = std::move(b_values);
  Recorded2x2 out;
  out.rec.cols = 2;
  out.cycles = PeGrid({2, 2}, Convention::tpu).run(a, b, out.c, &out.rec);
  return out;
}

// ---- brute-force float formats ----------------------------------------------------------

// All non-negative finite values of a small binary format, in code order (= value order),
// decoded straight from the bit fields. The index's parity is the mantissa's last bit.
std::vector<double> format_values(int exp_bits, int man_bits, bool e4m3fn) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  std::vector<double> v;
  for (int e = 0; e < (1 << exp_bits); ++e)
    for (int f = 0; f < (1 << man_bits); ++f) {
      if (!e4m3fn && e == (1 << exp_bits) - 1) continue;           // inf / NaN codes
      if (e4m3fn && e == 15 && f == 7) continue;                     // the only NaN code
      const double frac = double(f) / double(1 << man_bits);
      v.push_back(e == 0 ? std::ldexp(frac, 1 - bias) : std::ldexp(1 + frac, e - bias));
    }
  return v;
}

// Nearest entry of `values` to x >= 0 within range, ties to the even code.
double nearest_even(const std::vector<double>& values, double x) {
  const auto hi = std::lower_bound(values.begin(), values.end(), x);
  if (hi == values.end()) return values.back();
  if (*hi == x || hi == values.begin()) return *hi;
  const auto lo = hi - 1;
  const double dl = x - *lo, dh = *hi - x;
  if (dl < dh) return *lo;
  if (dh < dl) return *hi;
  return ((lo - values.begin()) % 2 == 0) ? *lo : *hi;
}

void check_against_table(DType t, int exp_bits, int man_bits, bool e4m3fn) {
  const std::vector<double> values = format_values(exp_bits, man_bits, e4m3fn);
  std::mt19937_64 rng(7);
  size_t bad = 0, checked = 0;
  for (size_t i = 0; i + 1 < values.size(); ++i) {
    const double lo = values[i], hi = values[i + 1];
    // Both neighbours, the midpoint (a tie), just either side of it, and random points.
    std::vector<double> xs = {lo, hi, (lo + hi) / 2, std::nextafter(float((lo + hi) / 2), 0.0f),
                              std::nextafter(float((lo + hi) / 2), 1e30f)};
    for (int j = 0; j < 4; ++j)
      xs.push_back(lo + (hi - lo) * (static_cast<double>(rng() >> 11) * 0x1.0p-53));
    for (double x : xs) {
      const float xf = static_cast<float>(x);  // the neighbours and midpoints are exact
      const double want = nearest_even(values, double{xf});
      ++checked;
      if (double{round_to(t, xf)} != want) ++bad;
      if (double{round_to(t, -xf)} != -want) ++bad;
    }
  }
  INFO(kDTypeNames.name(t) << ": " << checked << " points");
  CHECK(bad == 0);
}

}  // namespace

// ================================ numeric.hpp =============================================

TEST_CASE("numeric: bf16 rounds to nearest even", "[numeric]") {
  // bf16 keeps 7 fraction bits: ulp(1) = 2^-7.
  CHECK(round_to(DType::bf16, 1.0f + 0x1.0p-8f) == 1.0f);                  // half ulp: tie -> even 1
  CHECK(round_to(DType::bf16, 1.0f + 3 * 0x1.0p-8f) == 1.0f + 0x1.0p-6f);  // 1.5 ulp: tie -> even
  CHECK(round_to(DType::bf16, 1.0f + 0x1.0p-8f + 0x1.0p-20f) == 1.0f + 0x1.0p-7f);  // above half
  CHECK(round_to(DType::bf16, -(1.0f + 0x1.0p-8f)) == -1.0f);
  CHECK(round_to(DType::bf16, 3.14159265f) == 3.140625f);  // 1.1001001 * 2 (0x4049)
  // Range: the largest bf16 is (2 - 2^-7) * 2^127; halfway to 2^128 is a tie that rounds to
  // the even 2^128, i.e. overflows to inf; FLT_MAX is above the tie.
  CHECK(round_to(DType::bf16, 0x1.fep127f) == 0x1.fep127f);
  CHECK(round_to(DType::bf16, 0x1.fefffep127f) == 0x1.fep127f);
  CHECK(std::isinf(round_to(DType::bf16, 0x1.ffp127f)));
  CHECK(round_to(DType::bf16, std::numeric_limits<float>::max()) ==
        std::numeric_limits<float>::infinity());
  CHECK(round_to(DType::bf16, -std::numeric_limits<float>::max()) ==
        -std::numeric_limits<float>::infinity());
  // Subnormals: the smallest bf16 is 2^-126 * 2^-7 = 2^-133.
  CHECK(round_to(DType::bf16, 0x1.0p-133f) == 0x1.0p-133f);
  CHECK(round_to(DType::bf16, 0x1.0p-134f) == 0.0f);                  // tie -> even 0
  CHECK(round_to(DType::bf16, 0x1.8p-133f) == 0x1.0p-132f);           // tie 1|2 -> 2
  CHECK(round_to(DType::bf16, 0x1.0p-149f) == 0.0f);                  // smallest fp32
  // Specials.
  CHECK(std::isnan(round_to(DType::bf16, std::numeric_limits<float>::quiet_NaN())));
  CHECK(round_to(DType::bf16, std::numeric_limits<float>::infinity()) ==
        std::numeric_limits<float>::infinity());
  CHECK(std::signbit(round_to(DType::bf16, -0.0f)));
  CHECK(std::signbit(round_to(DType::bf16, -0x1.0p-140f)));  // underflow keeps the sign
}

TEST_CASE("numeric: fp16 range, ties and subnormals", "[numeric]") {
  // fp16: 10 fraction bits, max (2 - 2^-10) * 2^15 = 65504, ulp there 32.
  CHECK(round_to(DType::fp16, 65504.0f) == 65504.0f);
  CHECK(round_to(DType::fp16, 65519.0f) == 65504.0f);  // below 65504 + 16
  CHECK(std::isinf(round_to(DType::fp16, 65520.0f)));  // tie with 65536 (even) -> overflow
  CHECK(round_to(DType::fp16, -65520.0f) == -std::numeric_limits<float>::infinity());
  CHECK(std::isinf(round_to(DType::fp16, 1e6f)));
  CHECK(round_to(DType::fp16, 1.0f + 0x1.0p-11f) == 1.0f);                    // tie -> even
  CHECK(round_to(DType::fp16, 1.0f + 3 * 0x1.0p-11f) == 1.0f + 0x1.0p-9f);   // tie -> even
  CHECK(round_to(DType::fp16, 0.1f) == 0.0999755859375f);                    // 0x2E66
  // Subnormals: spacing 2^-24 below the smallest normal 2^-14.
  CHECK(round_to(DType::fp16, 0x1.0p-14f) == 0x1.0p-14f);
  CHECK(round_to(DType::fp16, 0x1.0p-24f) == 0x1.0p-24f);
  CHECK(round_to(DType::fp16, 0x1.0p-25f) == 0.0f);             // tie 0|1 -> 0
  CHECK(round_to(DType::fp16, 0x1.8p-25f) == 0x1.0p-24f);       // 0.75 -> 1
  CHECK(round_to(DType::fp16, 0x1.8p-24f) == 0x1.0p-23f);       // tie 1|2 -> 2
  CHECK(round_to(DType::fp16, 0x1.4p-23f) == 0x1.0p-23f);       // tie 2|3 -> 2
  CHECK(round_to(DType::fp16, 0x1.ff8p-15f) == 0x1.ff8p-15f);   // 1023 x 2^-24, the largest subnormal
  CHECK(round_to(DType::fp16, 0x1.ffcp-15f) == 0x1.0p-14f);     // tie 1023|1024 -> up into the normals
  CHECK(std::isnan(round_to(DType::fp16, std::numeric_limits<float>::quiet_NaN())));
  CHECK(round_to(DType::fp16, -std::numeric_limits<float>::infinity()) ==
        -std::numeric_limits<float>::infinity());
}

TEST_CASE("numeric: fp8_e4m3 (E4M3FN, saturating)", "[numeric]") {
  // 3 fraction bits, bias 7, no inf; S.1111.111 is NaN so the max is 1.75 * 2^8 = 448.
  CHECK(round_to(DType::fp8_e4m3, 448.0f) == 448.0f);
  CHECK(round_to(DType::fp8_e4m3, 464.0f) == 448.0f);   // tie 448 (even) | 480
  CHECK(round_to(DType::fp8_e4m3, 470.0f) == 448.0f);   // would round to 480: saturates
  CHECK(round_to(DType::fp8_e4m3, 1e9f) == 448.0f);
  CHECK(round_to(DType::fp8_e4m3, -1e9f) == -448.0f);
  CHECK(round_to(DType::fp8_e4m3, std::numeric_limits<float>::infinity()) == 448.0f);
  CHECK(round_to(DType::fp8_e4m3, -std::numeric_limits<float>::infinity()) == -448.0f);
  CHECK(std::isnan(round_to(DType::fp8_e4m3, std::numeric_limits<float>::quiet_NaN())));
  CHECK(round_to(DType::fp8_e4m3, 1.0625f) == 1.0f);    // tie 1 | 1.125 -> 1
  CHECK(round_to(DType::fp8_e4m3, 1.1875f) == 1.25f);   // tie 1.125 | 1.25 -> 1.25
  CHECK(round_to(DType::fp8_e4m3, 0.3f) == 0.3125f);    // 1.2 * 2^-2 -> 1.25 * 2^-2
  CHECK(round_to(DType::fp8_e4m3, 240.0f) == 240.0f);   // 1.875 * 2^7
  // Subnormals: smallest normal 2^-6, spacing 2^-9 below it.
  CHECK(round_to(DType::fp8_e4m3, 0x1.0p-6f) == 0x1.0p-6f);
  CHECK(round_to(DType::fp8_e4m3, 0x1.0p-9f) == 0x1.0p-9f);
  CHECK(round_to(DType::fp8_e4m3, 0x1.0p-10f) == 0.0f);         // tie -> 0
  CHECK(round_to(DType::fp8_e4m3, 0x1.8p-10f) == 0x1.0p-9f);    // 0.75 -> 1
  CHECK(round_to(DType::fp8_e4m3, 0x1.8p-9f) == 0x1.0p-8f);     // tie 1|2 -> 2
  CHECK(std::signbit(round_to(DType::fp8_e4m3, -0x1.0p-12f)));
}

TEST_CASE("numeric: fp8_e5m2 (IEEE-like)", "[numeric]") {
  // 2 fraction bits, bias 15, max 1.75 * 2^15 = 57344, ulp there 8192.
  CHECK(round_to(DType::fp8_e5m2, 57344.0f) == 57344.0f);
  CHECK(round_to(DType::fp8_e5m2, 61439.0f) == 57344.0f);
  CHECK(std::isinf(round_to(DType::fp8_e5m2, 61440.0f)));  // tie with 65536 (even): overflow
  CHECK(round_to(DType::fp8_e5m2, -1e6f) == -std::numeric_limits<float>::infinity());
  CHECK(round_to(DType::fp8_e5m2, std::numeric_limits<float>::infinity()) ==
        std::numeric_limits<float>::infinity());
  CHECK(std::isnan(round_to(DType::fp8_e5m2, std::numeric_limits<float>::quiet_NaN())));
  CHECK(round_to(DType::fp8_e5m2, 1.125f) == 1.0f);   // tie 1 | 1.25 -> 1
  CHECK(round_to(DType::fp8_e5m2, 1.375f) == 1.5f);   // tie 1.25 | 1.5 -> 1.5
  // Subnormals: smallest normal 2^-14, spacing 2^-16.
  CHECK(round_to(DType::fp8_e5m2, 0x1.0p-16f) == 0x1.0p-16f);
  CHECK(round_to(DType::fp8_e5m2, 0x1.0p-17f) == 0.0f);
  CHECK(round_to(DType::fp8_e5m2, 0x1.8p-17f) == 0x1.0p-16f);
  CHECK(round_to(DType::fp8_e5m2, 0x1.8p-15f) == 0x1.8p-15f);   // 3 x 2^-16, exact
  CHECK(round_to(DType::fp8_e5m2, 0x1.4p-15f) == 0x1.0p-15f);   // tie 2|3 (x 2^-16) -> 2
  CHECK(round_to(DType::fp8_e5m2, 0x1.cp-15f) == 0x1.0p-14f);   // tie 3|4 -> 4 = 2^-14
}

TEST_CASE("numeric: fp32 identity, int8 rounding and saturation", "[numeric]") {
  CHECK(round_to(DType::fp32, 0.1f) == 0.1f);
  CHECK(round_to(DType::fp32, 0x1.0p-149f) == 0x1.0p-149f);
  CHECK(std::isnan(round_to(DType::fp32, std::numeric_limits<float>::quiet_NaN())));
  CHECK(round_to(DType::int8, 2.5f) == 2.0f);
  CHECK(round_to(DType::int8, 3.5f) == 4.0f);
  CHECK(round_to(DType::int8, -2.5f) == -2.0f);
  CHECK(round_to(DType::int8, 2.6f) == 3.0f);
  CHECK(round_to(DType::int8, 300.0f) == 127.0f);
  CHECK(round_to(DType::int8, -300.0f) == -128.0f);
  CHECK(round_to(DType::int8, std::numeric_limits<float>::quiet_NaN()) == 0.0f);
  CHECK(saturate_int8(5) == 5);
  CHECK(saturate_int8(127) == 127);
  CHECK(saturate_int8(128) == 127);
  CHECK(saturate_int8(-128) == -128);
  CHECK(saturate_int8(-129) == -128);
  CHECK(saturate_int8(std::numeric_limits<int>::max()) == 127);
  CHECK(saturate_int8(std::numeric_limits<int>::min()) == -128);
}

TEST_CASE("numeric: every gap of fp8 and fp16 against a decoded table", "[numeric]") {
  check_against_table(DType::fp8_e4m3, 4, 3, true);
  check_against_table(DType::fp8_e5m2, 5, 2, false);
  check_against_table(DType::fp16, 5, 10, false);
}

// ================================ PeGrid values ===========================================

TEST_CASE("PeGrid int8: bit-exact against a naive GEMM", "[mxu][pe_grid]") {
  std::mt19937_64 rng(1);
  struct Case { int64_t R, C, M, K, N; };
  const Case cases[] = {
      {4, 4, 6, 8, 4},   {4, 4, 1, 8, 4},   {4, 4, 5, 3, 2},    {4, 4, 7, 5, 9},
      {1, 1, 3, 5, 2},   {1, 4, 2, 3, 9},   {4, 1, 5, 9, 3},    {3, 5, 11, 7, 13},
      {8, 8, 1, 1, 1},   {16, 8, 33, 40, 17}, {32, 32, 70, 70, 70}, {2, 7, 4, 1, 15},
  };
  for (const Case& cs : cases)
    for (Convention conv : {Convention::tpu, Convention::scalesim}) {
      const auto a = random_int8(cs.M, cs.K, rng);
      const auto b = random_int8(cs.K, cs.N, rng);
      Matrix<int32_t> c;
      PeGrid grid({cs.R, cs.C}, conv);
      const uint64_t cycles = grid.run(a, b, c);
      INFO(cs.R << "x" << cs.C << " " << kConventionNames.name(conv) << " M=" << cs.M << " K=" << cs.K
                << " N=" << cs.N);
      CHECK(cycles == reference_cycles(cs.R, cs.C, conv, cs.M, cs.K, cs.N));
      CHECK(c.rows == cs.M);
      CHECK(c.cols == cs.N);
      CHECK(count_mismatches(c, reference_int8(a, b)) == 0);
    }
}

TEST_CASE("PeGrid int8: int32 accumulation wraps around", "[mxu][pe_grid]") {
  // Row 0 of A and column 0 of B are all -128: C[0][0] = K * 16384 = 140000 * 16384
  // = 2293760000 > 2^31 - 1, which wraps to 2293760000 - 2^32 = -2001207296.
  const int64_t K = 140000;
  std::mt19937_64 rng(2);
  auto a = random_int8(2, K, rng);
  auto b = random_int8(K, 3, rng);
  for (int64_t k = 0; k < K; ++k) a(0, k) = b(k, 0) = -128;
  Matrix<int32_t> c;
  PeGrid grid({4, 4}, Convention::tpu);
  grid.run(a, b, c);
  CHECK(c(0, 0) == -2001207296);
  CHECK(count_mismatches(c, reference_int8(a, b)) == 0);
}

TEST_CASE("PeGrid floats: documented fp32 order and accuracy bound", "[mxu][pe_grid]") {
  std::mt19937_64 rng(3);
  struct Case { int64_t R, C, M, K, N; };
  const Case cases[] = {
      {4, 4, 6, 8, 4}, {4, 4, 1, 70, 3}, {3, 5, 9, 13, 11}, {1, 1, 4, 6, 3},
      {8, 8, 5, 3, 2}, {16, 8, 20, 50, 30}, {32, 32, 40, 70, 45},
  };
  for (DType t : {DType::bf16, DType::fp16, DType::fp8_e4m3, DType::fp8_e5m2, DType::fp32})
    for (const Case& cs : cases)
      for (Convention conv : {Convention::tpu, Convention::scalesim}) {
        const auto a = random_float(cs.M, cs.K, t, rng);
        const auto b = random_float(cs.K, cs.N, t, rng);
        Matrix<float> c;
        PeGrid grid({cs.R, cs.C}, conv);
        const uint64_t cycles = grid.run(a, b, c);
        INFO(kDTypeNames.name(t) << " " << cs.R << "x" << cs.C << " " << kConventionNames.name(conv)
                           << " M=" << cs.M << " K=" << cs.K << " N=" << cs.N);
        CHECK(cycles == reference_cycles(cs.R, cs.C, conv, cs.M, cs.K, cs.N));
        CHECK(count_outside_bound(a, b, c) == 0);
        CHECK(count_mismatches(c, reference_fp32_order(a, b, cs.R)) == 0);
      }
}

TEST_CASE("PeGrid rejects bad shapes", "[mxu][pe_grid]") {
  CHECK_THROWS_AS(PeGrid({0, 4}, Convention::tpu), std::invalid_argument);
  CHECK_THROWS_AS(PeGrid({4, -1}, Convention::tpu), std::invalid_argument);
  PeGrid grid({4, 4}, Convention::tpu);
  Matrix<int32_t> c;
  CHECK_THROWS_AS(grid.run(Matrix<int8_t>(2, 3), Matrix<int8_t>(4, 2), c), std::invalid_argument);
  CHECK_THROWS_AS(grid.run(Matrix<int8_t>(0, 3), Matrix<int8_t>(3, 2), c), std::invalid_argument);
  Matrix<float> cf;
  CHECK_THROWS_AS(grid.run(Matrix<float>(2, 3), Matrix<float>(3, 0), cf), std::invalid_argument);
}

// ================================ PeGrid timing ===========================================

TEST_CASE("PeGrid: randomized GEMMs, exact cycles == closed form", "[mxu][pe_grid]") {
  // 11 shapes x 2 conventions x 64 GEMMs = 1408 runs, values checked on every one.
  const ArrayShape shapes[] = {{1, 1}, {1, 4}, {4, 1}, {3, 5}, {5, 3}, {2, 7},
                               {4, 4}, {8, 8}, {16, 8}, {8, 16}, {32, 32}};
  std::mt19937_64 rng(20240611);
  auto uniform = [&](int64_t lo, int64_t hi) {  // [lo, hi]
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  // K (or N) against the array side S: below S, a multiple of S, or anything.
  auto pick_dim = [&](int64_t side, int64_t max_dim) {
    switch (uniform(0, 3)) {
      case 0: return uniform(1, std::min(side, max_dim));
      case 1: return std::min(max_dim, side * uniform(1, 3)) / side * side;
      default: return uniform(1, max_dim);
    }
  };
  int runs = 0;
  int64_t cycles_wrong = 0, values_wrong = 0;
  bool saw_m1 = false, saw_k_lt_r = false, saw_n_lt_c = false, saw_ragged = false;
  for (const ArrayShape& s : shapes)
    for (Convention conv : {Convention::tpu, Convention::scalesim}) {
      PeGrid grid(s, conv);
      const int64_t max_dim = s.rows * s.cols <= 4 ? 40 : 70;  // keep 1-PE-wide runs short
      for (int i = 0; i < 64; ++i) {
        const int64_t M = uniform(0, 3) == 0 ? 1 : (uniform(0, 2) == 0 ? uniform(1, s.rows) : uniform(1, max_dim));
        const int64_t K = pick_dim(s.rows, max_dim);
        const int64_t N = pick_dim(s.cols, max_dim);
        saw_m1 |= M == 1;
        saw_k_lt_r |= K < s.rows;
        saw_n_lt_c |= N < s.cols;
        saw_ragged |= K > s.rows && K % s.rows != 0 && N > s.cols && N % s.cols != 0;
        const uint64_t want = reference_cycles(s.rows, s.cols, conv, M, K, N);
        REQUIRE(dataflow_of(DataflowKind::ws).cycles(s, conv, {M, K, N}) == want);  // the fast model agrees too
        uint64_t got;
        size_t bad;
        if (i % 2 == 0) {
          const auto a = random_int8(M, K, rng);
          const auto b = random_int8(K, N, rng);
          Matrix<int32_t> c;
          got = grid.run(a, b, c);
          bad = count_mismatches(c, reference_int8(a, b));
        } else {
          const auto a = random_float(M, K, DType::bf16, rng);
          const auto b = random_float(K, N, DType::bf16, rng);
          Matrix<float> c;
          got = grid.run(a, b, c);
          bad = count_mismatches(c, reference_fp32_order(a, b, s.rows));
        }
        if (got != want || bad != 0) {
          UNSCOPED_INFO(s.rows << "x" << s.cols << " " << kConventionNames.name(conv) << " M=" << M
                               << " K=" << K << " N=" << N << ": cycles " << got << " want "
                               << want << ", " << bad << " wrong values");
        }
        cycles_wrong += got != want;
        values_wrong += bad != 0;
        ++runs;
      }
    }
  CHECK(runs >= 1000);
  CHECK(cycles_wrong == 0);
  CHECK(values_wrong == 0);
  CHECK(saw_m1);
  CHECK(saw_k_lt_r);
  CHECK(saw_n_lt_c);
  CHECK(saw_ragged);
}

// ================================ observer ================================================

TEST_CASE("PeGrid observer: 2x2 single fold, worked by hand", "[mxu][pe_grid][observer]") {
  // A = [1 2; 3 4] (M=2, K=2), B = [5 6; 7 8] (K=2, N=2), 2x2 array, tpu: one fold.
  // Weight load L_0 = 0: column c takes weight j at its top at cycle c + j, weight j being
  // B[R-1-j][c] (the bottom row's weight enters first), shifting down one row per cycle:
  //   cycle 0: PE(0,0) shadow = B[1][0] = 7
  //   cycle 1: PE(0,0) = B[0][0] = 5, PE(1,0) = 7;   PE(0,1) = B[1][1] = 8
  //   cycle 2: PE(0,1) = B[0][1] = 6, PE(1,1) = 8
  // Column 0 is full after cycle 1 (weights landed), so S_0 = L_0 + R = 2, and PE(r,c) sees
  // A[m][r] at cycle S_0 + m + r + c = 2 + m + r + c:
  //   cycle 2: PE(0,0) m=0: psum = 0 + 1*5 = 5
  //   cycle 3: PE(0,0) m=1: 0 + 3*5 = 15;  PE(0,1) m=0: 0 + 1*6 = 6
  //            PE(1,0) m=0: 5 + 2*7 = 19 (leaves: C[0][0]);  PE(1,1): empty (diagonal 1 < S_0)
  //   cycle 4: PE(0,0): empty (m=2 = M);  PE(0,1) m=1: 0 + 3*6 = 18
  //            PE(1,0) m=1: 15 + 4*7 = 43 (C[1][0]);  PE(1,1) m=0: 6 + 2*8 = 22 (C[0][1])
  //   cycle 5: PE(1,1) m=1: 18 + 4*8 = 50 (C[1][1]) leaves after cycle 5: 6 cycles
  //   = R + (M + R + C - 2) = 2 + 4.
  const Recorded2x2 run = run_2x2(2, 2, 2, {1, 2, 3, 4}, {5, 6, 7, 8});
  const Recorder& rec = run.rec;
  REQUIRE(run.cycles == 6);
  CHECK(run.c.data == std::vector<int32_t>{19, 22, 43, 50});
  CHECK(rec.cycles == std::vector<uint64_t>{0, 1, 2, 3, 4, 5});

  // Weight shift-in (shadow bank) before any stream.
  CHECK(rec.at(0, 0, 0).shadow == 7);
  CHECK(rec.at(0, 1, 0).shadow == 0);
  CHECK(rec.at(1, 0, 0).shadow == 5);
  CHECK(rec.at(1, 1, 0).shadow == 7);
  CHECK(rec.at(1, 0, 1).shadow == 8);
  CHECK(rec.at(1, 1, 1).shadow == 0);
  CHECK(rec.at(2, 1, 1).shadow == 8);
  CHECK(rec.at(1, 0, 0).fold == -1);
  CHECK_FALSE(rec.at(1, 0, 0).active);

  const PeState& p = rec.at(3, 1, 0);
  CHECK(p.weight == 7);
  CHECK(p.activation == 2);
  CHECK(p.psum == 19);
  CHECK(p.active);
  CHECK(p.fold == 0);
  CHECK(rec.at(3, 0, 0).psum == 15);
  CHECK(rec.at(3, 0, 0).activation == 3);
  CHECK(rec.at(3, 0, 1).psum == 6);
  CHECK(rec.at(3, 1, 1).fold == -1);
  CHECK_FALSE(rec.at(3, 1, 1).active);
  CHECK(rec.at(4, 1, 1).psum == 22);
  CHECK(rec.at(4, 1, 1).weight == 8);
  CHECK(rec.at(4, 1, 0).psum == 43);
  CHECK(rec.at(4, 0, 0).fold == -1);
  CHECK(rec.at(5, 1, 1).psum == 50);
  CHECK(rec.at(5, 1, 1).activation == 4);
}

TEST_CASE("PeGrid observer: 2x2, two folds share the array", "[mxu][pe_grid][observer]") {
  // A = [1 2 3 4; 5 6 7 8] (M=2, K=4), B = [1 2; 3 4; 5 6; 7 8] (K=4, N=2), 2x2, tpu.
  // Two row folds: fold 0 uses B rows 0-1 (bank 0), fold 1 rows 2-3 (bank 1).
  //   L_0 = 0, S_0 = 2 (as in the single-fold example), L_1 = S_0 = 2,
  //   S_1 = max(L_1 + R, S_0 + M) = max(4, 4) = 4.
  // Fold 1's weights shift into bank 1: column 0 gets B[3][0]=7 at cycle 2, B[2][0]=5 at 3;
  // column 1 gets B[3][1]=8 at cycle 3, B[2][1]=6 at 4. At cycle 4 (diagonal d = 4 - r - c):
  //   PE(0,0): d=4 -> fold 1 m=0: w = B[2][0] = 5, a = A[0][2] = 3, psum = 0 + 15 = 15;
  //            its other bank still holds fold 0's B[0][0] = 1
  //   PE(0,1): d=3 -> fold 0 m=1: w = B[0][1] = 2, a = A[1][0] = 5, psum = 10; shadow = 6
  //   PE(1,0): d=3 -> fold 0 m=1: w = B[1][0] = 3, a = A[1][1] = 6,
  //            psum = (PE(0,0) at cycle 3: 5*1 = 5) + 18 = 23; shadow = 7 (shifted down)
  //   PE(1,1): d=2 -> fold 0 m=0: w = B[1][1] = 4, a = A[0][1] = 2,
  //            psum = (PE(0,1) at cycle 3: 1*2 = 2) + 8 = 10; shadow = 8
  // Last output, fold 1 (m=1, c=1), leaves after S_1 + 1 + 1 + 1 = 7: 8 cycles
  //   = R + (F-1)*max(M,R) + (M+R+C-2) = 2 + 2 + 4.
  // C = A*B: [1+6+15+28, 2+8+18+32; 5+18+35+56, 10+24+42+64] = [50 60; 114 140].
  const Recorded2x2 run = run_2x2(2, 4, 2, {1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Recorder& rec = run.rec;
  REQUIRE(run.cycles == 8);
  CHECK(run.c.data == std::vector<int32_t>{50, 60, 114, 140});

  // Cycle 4, (fold, weight, activation, psum, shadow) per PE.
  CHECK(rec.held(4, 0, 0) == std::array<double, 5>{1, 5, 3, 15, 1});
  CHECK(rec.held(4, 0, 1) == std::array<double, 5>{0, 2, 5, 10, 6});
  CHECK(rec.held(4, 1, 0) == std::array<double, 5>{0, 3, 6, 23, 7});
  CHECK(rec.held(4, 1, 1) == std::array<double, 5>{0, 4, 2, 10, 8});
  // Cycle 3: fold 1's first weight (B[3][1] = 8) is at the top of column 1 only. PE(1,1)
  // has not been reached by fold 0 yet (d = 1 < S_0), so it has no active weight and its
  // shadow is fold 0's B[1][1] = 4, loaded and waiting.
  CHECK(rec.at(3, 0, 1).shadow == 8);
  CHECK(rec.at(3, 1, 1).weight == 0);
  CHECK(rec.at(3, 1, 1).shadow == 4);
  CHECK(rec.at(3, 0, 0).shadow == 5);
  CHECK(rec.at(3, 1, 0).shadow == 7);
}

TEST_CASE("PeGrid observer: padding PEs carry data but are not active", "[mxu][pe_grid][observer]") {
  // 2x2, M=K=N=1: only PE(0,0) holds a real weight. S_0 = 2; PE(r,c) sees m=0 at 2 + r + c.
  // PE(1,0) (padded row) and PE(0,1) (padded column) pass fold 0's data at cycle 3 without a
  // useful MAC. Cycles: 2 + (1 + 2 + 2 - 2) = 5.
  Matrix<float> a(1, 1), b(1, 1);
  a.data = {1.5f};
  b.data = {-2.0f};
  Recorder rec;
  rec.cols = 2;
  Matrix<float> c;
  PeGrid grid({2, 2}, Convention::scalesim);
  REQUIRE(grid.run(a, b, c, &rec) == 5);
  CHECK(c.data == std::vector<float>{-3.0f});
  CHECK(rec.at(2, 0, 0).active);
  CHECK(rec.at(2, 0, 0).psum == -3.0);
  CHECK(rec.at(2, 0, 0).activation == 1.5);
  CHECK(rec.at(3, 1, 0).fold == 0);
  CHECK_FALSE(rec.at(3, 1, 0).active);
  CHECK(rec.at(3, 1, 0).psum == -3.0);  // passes the psum down
  CHECK(rec.at(3, 0, 1).fold == 0);
  CHECK_FALSE(rec.at(3, 0, 1).active);
  CHECK(rec.at(3, 0, 1).activation == 1.5);
  CHECK(rec.at(4, 1, 1).fold == 0);
  CHECK(rec.at(4, 0, 0).fold == -1);
}

}  // namespace test_pe_grid
