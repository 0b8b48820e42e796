// The MXU's MAC rate per type (mxu.rate.<type>, docs/mxu.md "MAC rate"): closed forms worked
// by hand on a 4x4 array at 2 products a cycle and at one product every 2 cycles; the exact grid
// of every dataflow equals its closed form and a reference GEMM on randomized shapes at rates
// 2, 3 and 1/2; the MACs are conserved and no PE does more than its rate allows; the config key
// accepts n and 1/n only.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>

#include "models/mxu/dataflow.hpp"
#include "models/mxu/mxu_core.hpp"
#include "tests/unit/fixtures.hpp"

namespace test_mac_rate {

using namespace systolic;

namespace {

const Dataflow& df(DataflowKind k) { return dataflow_of(k); }

ArrayShape at(int64_t r, int64_t c, MacRate rate) { return {r, c, rate}; }

constexpr MacRate kTwo{2, 1};   // two products a cycle (int8 on TPU v5e)
constexpr MacRate kHalf{1, 2};  // one product every two cycles

// Counts the PE-cycles in which a PE did real work, and the cycles the observer saw.
class Activity : public GridObserver {
 public:
  void on_cycle(uint64_t cycle, const std::vector<PeState>& pes) override {
    for (const PeState& p : pes) active += p.active;
    last = cycle;
    ++calls;
  }
  uint64_t active = 0, last = 0, calls = 0;
};

}  // namespace

TEST_CASE("mac_rate_of accepts n and 1/n for integers n in [1, 16], nothing else", "[mxu][rate]") {
  CHECK(mac_rate_of(1) == MacRate{1, 1});
  CHECK(mac_rate_of(2) == MacRate{2, 1});
  CHECK(mac_rate_of(16) == MacRate{16, 1});
  CHECK(mac_rate_of(0.5) == MacRate{1, 2});
  CHECK(mac_rate_of(0.25) == MacRate{1, 4});
  CHECK(mac_rate_of(1.0 / 3) == MacRate{1, 3});
  for (double bad : {0.0, -1.0, 1.5, 0.3, 17.0, 1.0 / 17, 0.4})
    CHECK_FALSE(mac_rate_of(bad).has_value());
  CHECK(MacRate{2, 1}.per_cycle() == 2.0);
  CHECK(MacRate{1, 4}.per_cycle() == 0.25);
}

TEST_CASE("rate 2 on a 4x4 array: closed forms worked by hand", "[mxu][rate]") {
  const ArrayShape a = at(4, 4, kTwo);
  // ws, M = 6, K = 8, N = 4. Each PE packs 2 products of K, so a fold covers 4 x 2 = 8 rows of
  // K: RF = ceil(8 / 8) = 1, CF = 1, F = 1. tpu: R + (F - 1) max(M, R) + (M + R + C - 2)
  // = 4 + 0 + (6 + 4 + 4 - 2) = 16 (docs/mxu.md's worked example takes 22 at rate 1: F = 2).
  CHECK(df(DataflowKind::ws).folds(a, {6, 8, 4}).total() == 1);
  CHECK(df(DataflowKind::ws).cycles(a, Convention::tpu, {6, 8, 4}) == 16);
  CHECK(df(DataflowKind::ws).cycles({4, 4}, Convention::tpu, {6, 8, 4}) == 22);
  // scalesim: F (2R + C + M - 2) = 1 x (8 + 4 + 6 - 2) = 16.
  CHECK(df(DataflowKind::ws).cycles(a, Convention::scalesim, {6, 8, 4}) == 16);
  // ws, M = 6, K = 16, N = 8: RF = ceil(16 / 8) = 2, CF = 2, F = 4;
  // tpu = 4 + 3 x max(6, 4) + 12 = 34 (at rate 1: RF = 4, F = 8, 4 + 7 x 6 + 12 = 58).
  CHECK(df(DataflowKind::ws).cycles(a, Convention::tpu, {6, 16, 8}) == 34);
  CHECK(df(DataflowKind::ws).cycles({4, 4}, Convention::tpu, {6, 16, 8}) == 58);
  // os, M = 4, K = 8, N = 4: M on rows, K streams in ceil(8 / 2) = 4 steps; F = 1;
  // K + R + C - 2 with K read as 4: 4 + 4 + 4 - 2 = 10 (rate 1: 8 + 6 = 14).
  CHECK(df(DataflowKind::os).cycles(a, Convention::tpu, {4, 8, 4}) == 10);
  CHECK(df(DataflowKind::os).cycles({4, 4}, Convention::tpu, {4, 8, 4}) == 14);
  // os, M = 8, K = 3, N = 4: 2 steps, F = 2; tpu: (F - 1) max(2, R) + (2 + 4 + 4 - 2) = 4 + 8 = 12;
  // scalesim: F (2 + 6) = 16 (rate 1: 13 and 18, test_dataflow.cpp).
  CHECK(df(DataflowKind::os).cycles(a, Convention::tpu, {8, 3, 4}) == 12);
  CHECK(df(DataflowKind::os).cycles(a, Convention::scalesim, {8, 3, 4}) == 16);
  // is on 2x2, M = 5, K = 3, N = 7: K rows per fold 2 x 2 = 4, RF = 1, CF = ceil(5 / 2) = 3,
  // F = 3; tpu: 2 + 2 x max(7, 2) + (7 + 2 + 2 - 2) = 2 + 14 + 9 = 25 (rate 1: 46).
  CHECK(df(DataflowKind::is).cycles(at(2, 2, kTwo), Convention::tpu, {5, 3, 7}) == 25);
  CHECK(df(DataflowKind::is).cycles({2, 2}, Convention::tpu, {5, 3, 7}) == 46);
}

TEST_CASE("rate 1/2 on a 4x4 array: every step takes two cycles", "[mxu][rate]") {
  // The pipeline steps once every 2 cycles: 2 x the rate-1 count (22, 32, 14 above and in
  // docs/mxu.md).
  CHECK(df(DataflowKind::ws).cycles(at(4, 4, kHalf), Convention::tpu, {6, 8, 4}) == 44);
  CHECK(df(DataflowKind::ws).cycles(at(4, 4, kHalf), Convention::scalesim, {6, 8, 4}) == 64);
  CHECK(df(DataflowKind::os).cycles(at(4, 4, kHalf), Convention::tpu, {4, 8, 4}) == 28);
  // Folds are those of rate 1: a slow PE packs nothing.
  CHECK(df(DataflowKind::ws).folds(at(4, 4, kHalf), {6, 8, 4}).total() == 2);
}

TEST_CASE("every dataflow at rates 2, 3 and 1/2: exact grid == closed form == reference GEMM", "[mxu][rate]") {
  const ArrayShape shapes[] = {{1, 1}, {1, 4}, {4, 1}, {3, 5}, {4, 4}, {8, 6}};
  std::mt19937_64 rng(20261125);
  auto uniform = [&](int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)); };
  int64_t cycles_wrong = 0, values_wrong = 0, over_peak = 0, under_macs = 0, runs = 0;
  for (const Dataflow* d : dataflows())
    for (ArrayShape a : shapes)
      for (MacRate rate : {kTwo, MacRate{3, 1}, kHalf})
        for (Convention conv : {Convention::tpu, Convention::scalesim}) {
          a.rate = rate;
          PeGrid grid(a, conv, d->kind());
          for (int i = 0; i < 8; ++i, ++runs) {
            const int64_t M = uniform(1, 3 * a.rows + 2), K = uniform(1, 7 * a.rows + 2), N = uniform(1, 3 * a.cols + 2);
            Activity seen;
            uint64_t got;
            if (i % 2 == 0) {  // int8: bit-exact, int32 wrap-around
              Matrix<int8_t> A = int8_operand(M, K, rng()), B = int8_operand(K, N, rng());
              Matrix<int32_t> C;
              got = grid.run(A, B, C, &seen);
              const Matrix<int64_t> want = testing::reference_gemm(A, B);
              for (size_t j = 0; j < C.data.size(); ++j)
                values_wrong += C.data[j] != static_cast<int32_t>(static_cast<uint32_t>(want.data[j]));
            } else {  // small integers as floats: exact in fp32 whatever the order
              const Matrix<float> A = testing::random_small_float(M, K, rng), B = testing::random_small_float(K, N, rng);
              Matrix<float> C;
              got = grid.run(A, B, C, &seen);
              const Matrix<int64_t> want = testing::reference_gemm(A, B);
              for (size_t j = 0; j < C.data.size(); ++j) values_wrong += C.data[j] != static_cast<float>(want.data[j]);
            }
            cycles_wrong += got != d->cycles(a, conv, {M, K, N});
            cycles_wrong += seen.calls != got || seen.last + 1 != got;  // one view per cycle, stretched too
            // A PE-cycle holds at most `products` MACs (and a slow PE's MAC spans `cycles` of
            // them), so the work seen bounds the MACs both ways.
            const auto macs = static_cast<uint64_t>(M * K * N);
            under_macs += seen.active * static_cast<uint64_t>(rate.products) < macs * static_cast<uint64_t>(rate.cycles);
            over_peak += macs * static_cast<uint64_t>(rate.cycles) >
                         static_cast<uint64_t>(a.rows * a.cols * rate.products) * got;
          }
        }
  CHECK(runs == 3 * 6 * 3 * 2 * 8);
  CHECK(cycles_wrong == 0);
  CHECK(values_wrong == 0);
  CHECK(under_macs == 0);
  CHECK(over_peak == 0);
}

TEST_CASE("the fast and exact MXU cores time each matmul at its compute type's rate", "[mxu][rate]") {
  MxuSetup setup{{4, 4}, {}, Convention::tpu, DataflowKind::ws};
  setup.rates[static_cast<size_t>(DType::int8)] = kTwo;
  setup.rates[static_cast<size_t>(DType::fp32)] = kHalf;
  auto fast = make_fast_mxu(setup);
  auto exact = make_exact_mxu(setup);
  MatmulOp op{6, 16, 8};
  for (auto [type, want] : {std::pair{DType::int8, 34}, {DType::bf16, 58}, {DType::fp32, 116}}) {
    op.dtype = type;
    INFO(kDTypeNames.name(type));
    CHECK(fast->execute(op, 7) == static_cast<uint64_t>(want));
    CHECK(exact->execute(op, 7) == static_cast<uint64_t>(want));
  }
  // W8A16: int8 weights dequantised to bf16 compute at the bf16 rate.
  op.dtype = DType::bf16;
  op.b_dtype = DType::int8;
  CHECK(fast->execute(op, 7) == 58);
  CHECK(exact->execute(op, 7) == 58);
}

}  // namespace test_mac_rate
