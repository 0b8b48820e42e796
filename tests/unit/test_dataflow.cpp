// The dataflow registry (models/mxu/dataflow.hpp): every registered dataflow's exact grid
// computes the right C and takes exactly its closed-form cycles, on randomized shapes in both
// conventions; the closed forms match hand-worked examples and SCALE-Sim v2's own numbers; the
// SRAM traffic follows what each dataflow holds; MACs are conserved across dataflows.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>

#include "models/mxu/dataflow.hpp"
#include "sim/compile/compile.hpp"
#include "sim/simulate/simulate.hpp"
#include "tests/unit/fixtures.hpp"

namespace test_dataflow {

using namespace systolic;

namespace {

const Dataflow& df(DataflowKind k) { return dataflow_of(k); }

Matrix<int8_t> random_int8(int64_t r, int64_t c, std::mt19937_64& rng) {
  Matrix<int8_t> x(r, c);
  for (auto& v : x.data) v = static_cast<int8_t>(static_cast<int>(rng() & 0xff) - 128);
  return x;
}

// Counts every PE-cycle in which a real MAC happened (PeState::active).
class ActiveCounter : public GridObserver {
 public:
  void on_cycle(uint64_t, const std::vector<PeState>& pes) override {
    for (const PeState& p : pes) active += p.active;
  }
  uint64_t active = 0;
};

}  // namespace

TEST_CASE("the registry holds ws, os and is, in kind order, each with its own mapping", "[mxu][dataflow]") {
  std::vector<std::string> names;
  std::set<std::tuple<GemmDim, GemmDim, GemmDim>> mappings;
  for (const Dataflow* d : dataflows()) {
    names.emplace_back(d->name());
    CHECK(find_dataflow(d->name()) == d);
    CHECK(&dataflow_of(d->kind()) == d);
    mappings.insert({d->mapping().rows, d->mapping().cols, d->mapping().streamed});
    // Each dimension appears exactly once in a mapping.
    CHECK(std::set<GemmDim>{d->mapping().rows, d->mapping().cols, d->mapping().streamed}.size() == 3);
  }
  CHECK(names == std::vector<std::string>{"ws", "os", "is"});
  CHECK(mappings.size() == dataflows().size());
  CHECK(dataflow_choices() == "ws, os, is");
  CHECK(find_dataflow("xs") == nullptr);
}

TEST_CASE("fold counts follow each dataflow's mapping", "[mxu][dataflow]") {
  // M=7, K=5, N=9 on 4x4. ws: K rows, N cols; os: M rows, N cols; is: K rows, M cols.
  const MatmulShape s{7, 5, 9};
  CHECK(df(DataflowKind::ws).folds({4, 4}, s).row_folds == 2);  // ceil(5/4)
  CHECK(df(DataflowKind::ws).folds({4, 4}, s).col_folds == 3);  // ceil(9/4)
  CHECK(df(DataflowKind::os).folds({4, 4}, s).row_folds == 2);  // ceil(7/4)
  CHECK(df(DataflowKind::os).folds({4, 4}, s).col_folds == 3);  // ceil(9/4)
  CHECK(df(DataflowKind::is).folds({4, 4}, s).row_folds == 2);  // ceil(5/4)
  CHECK(df(DataflowKind::is).folds({4, 4}, s).col_folds == 2);  // ceil(7/4)
  CHECK(df(DataflowKind::os).folds({2, 8}, s).total() == 4 * 2);  // ceil(7/2) * ceil(9/8)
}

TEST_CASE("os and is closed forms, worked by hand", "[mxu][dataflow]") {
  const Dataflow& os = df(DataflowKind::os);
  const Dataflow& is = df(DataflowKind::is);
  // os, one fold, M=K=N=4 on 4x4: PE(3,3) does its last MAC (k=3) at cycle 3+3+3 = 9: 10 cycles.
  CHECK(os.cycles({4, 4}, Convention::scalesim, {4, 4, 4}) == 10);
  CHECK(os.cycles({4, 4}, Convention::tpu, {4, 4, 4}) == 10);  // nothing to preload
  // os, M=8 (2 row folds), K=3, N=4: scalesim 2 * (3 + 4 + 4 - 2) = 18; tpu: the second fold
  // starts max(K, R) = 4 cycles after the first (column output buses carry R results a fold):
  // 4 + 9 = 13.
  CHECK(os.cycles({4, 4}, Convention::scalesim, {8, 3, 4}) == 18);
  CHECK(os.cycles({4, 4}, Convention::tpu, {8, 3, 4}) == 13);
  // K longer than R: tpu folds follow each other every K cycles: 20 + 1 * 20 + ... M=8,K=20,N=4:
  // (2 - 1) * 20 + (20 + 4 + 4 - 2) = 46.
  CHECK(os.cycles({4, 4}, Convention::tpu, {8, 20, 4}) == 46);
  // is, M=5, K=3, N=7 on 2x2: F = ceil(3/2) * ceil(5/2) = 6, streaming N = 7 per fold:
  // scalesim 6 * (2*2 + 2 + 7 - 2) = 66; tpu 2 + 5 * max(7, 2) + (7 + 2 + 2 - 2) = 46.
  CHECK(is.cycles({2, 2}, Convention::scalesim, {5, 3, 7}) == 66);
  CHECK(is.cycles({2, 2}, Convention::tpu, {5, 3, 7}) == 46);
  // is is ws with M and N exchanged.
  CHECK(is.cycles({3, 5}, Convention::tpu, {11, 7, 4}) == df(DataflowKind::ws).cycles({3, 5}, Convention::tpu, {4, 7, 11}));
}

TEST_CASE("scalesim convention matches SCALE-Sim v2's compute cycles for ws, os and is", "[mxu][dataflow][scalesim]") {
  // Measured with SCALE-Sim v2 (github.com/scalesim-project/scale-sim-v2 at 22f88b1), Debian's
  // python3 (numpy; tqdm replaced by a pass-through stub), CALC bandwidth, 1 MiB SRAMs (no
  // stalls), GEMM topology "Layer, M, N, K" with the rows below:
  //   python3 scalesim/scale.py -c <cfg: ArrayHeight R, ArrayWidth C, Dataflow ws|os|is>
  //                              -t gemm.csv -p out -i gemm
  // COMPUTE_REPORT.csv "Total Cycles" is the index of the last cycle (docs/mxu.md), so
  // Systolic's count is that + 1. The numbers below are SCALE-Sim's, as printed.
  struct Row {
    int64_t m, n, k;
  };
  const Row rows[] = {{4, 4, 4}, {5, 7, 3}, {13, 9, 6}, {20, 11, 17}, {3, 2, 30}};
  const std::map<std::pair<std::string, int64_t>, std::vector<uint64_t>> scalesim = {
      {{"ws", 4}, {13, 29, 137, 449, 103}}, {{"os", 4}, {9, 35, 143, 344, 35}},
      {{"is", 4}, {13, 33, 151, 524, 95}},  {{"ws", 8}, {23, 49, 65, 239, 91}},
      {{"os", 8}, {15, 29, 71, 173, 41}},   {{"is", 8}, {23, 26, 86, 371, 87}}};
  for (const Dataflow* d : dataflows())
    for (const ArrayShape a : {ArrayShape{4, 4}, ArrayShape{8, 6}}) {
      const auto& want = scalesim.at({std::string(d->name()), a.rows});
      for (size_t i = 0; i < std::size(rows); ++i) {
        INFO(d->name() << " " << a.rows << "x" << a.cols << " row " << i);
        const MatmulShape s{rows[i].m, rows[i].k, rows[i].n};
        CHECK(d->cycles(a, Convention::scalesim, s) == want[i] + 1);
        const Matrix<int8_t> A(s.m, s.k), B(s.k, s.n);
        Matrix<int32_t> C;
        CHECK(PeGrid(a, Convention::scalesim, d->kind()).run(A, B, C) == want[i] + 1);
      }
    }
}

TEST_CASE("every dataflow: exact grid == reference GEMM and == closed form, randomized", "[mxu][dataflow]") {
  const ArrayShape shapes[] = {{1, 1}, {1, 4}, {4, 1}, {3, 5}, {5, 3}, {4, 4}, {8, 6}};
  std::mt19937_64 rng(20261125);
  auto uniform = [&](int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)); };
  int64_t cycles_wrong = 0, values_wrong = 0, macs_wrong = 0;
  bool saw_small = false, saw_large_ragged = false;
  for (const Dataflow* d : dataflows())
    for (const ArrayShape& a : shapes)
      for (Convention conv : {Convention::tpu, Convention::scalesim}) {
        PeGrid grid(a, conv, d->kind());
        for (int i = 0; i < 24; ++i) {
          const int64_t M = uniform(1, 3 * a.rows + 2), K = uniform(1, 3 * a.rows + 2), N = uniform(1, 3 * a.cols + 2);
          saw_small |= M < a.rows && K < a.rows && N < a.cols;
          saw_large_ragged |= M > a.rows && M % a.rows && K > a.rows && K % a.rows && N > a.cols && N % a.cols;
          ActiveCounter active;
          uint64_t got;
          Matrix<int64_t> want;
          std::vector<int64_t> values;
          if (i % 2 == 0) {
            const auto A = random_int8(M, K, rng), B = random_int8(K, N, rng);
            Matrix<int32_t> C;
            got = grid.run(A, B, C, &active);
            want = testing::reference_gemm(A, B);
            for (size_t j = 0; j < C.data.size(); ++j)
              values_wrong += C.data[j] != static_cast<int32_t>(static_cast<uint32_t>(want.data[j]));
          } else {
            const auto A = testing::random_small_float(M, K, rng), B = testing::random_small_float(K, N, rng);
            Matrix<float> C;
            got = grid.run(A, B, C, &active);
            want = testing::reference_gemm(A, B);
            for (size_t j = 0; j < C.data.size(); ++j) values_wrong += C.data[j] != static_cast<float>(want.data[j]);
          }
          cycles_wrong += got != d->cycles(a, conv, {M, K, N});
          macs_wrong += active.active != static_cast<uint64_t>(M * K * N);  // each real MAC seen once
        }
      }
  CHECK(cycles_wrong == 0);
  CHECK(values_wrong == 0);
  CHECK(macs_wrong == 0);
  CHECK(saw_small);
  CHECK(saw_large_ragged);
}

TEST_CASE("SRAM traffic per operand follows what the array holds", "[mxu][dataflow][energy]") {
  // M=10, K=9, N=7 on 4x4. ws: 3 row folds (K), 2 col folds (N); os: 3 (M) x 2 (N);
  // is: 3 (K) x 3 (M).
  const MatmulShape s{10, 9, 7};
  const uint64_t mk = 90, kn = 63, mn = 70;
  const OperandTraffic ws = df(DataflowKind::ws).traffic({4, 4}, s);
  CHECK((ws.a_read == 2 * mk && ws.b_read == kn && ws.acc_read == 2 * mn && ws.acc_written == 3 * mn));
  const OperandTraffic os = df(DataflowKind::os).traffic({4, 4}, s);
  CHECK((os.a_read == 2 * mk && os.b_read == 3 * kn && os.acc_read == 0 && os.acc_written == mn));
  const OperandTraffic is = df(DataflowKind::is).traffic({4, 4}, s);
  CHECK((is.a_read == mk && is.b_read == 3 * kn && is.acc_read == 2 * mn && is.acc_written == 3 * mn));
  // Whatever the dataflow, each operand is read at least once and each output written once.
  for (const Dataflow* d : dataflows()) {
    const OperandTraffic t = d->traffic({4, 4}, s);
    CHECK((t.a_read >= mk && t.b_read >= kn && t.acc_written >= mn && t.acc_written == t.acc_read + mn));
  }
}

TEST_CASE("compiled and simulated, every dataflow issues the same MACs", "[mxu][dataflow][simulate]") {
  // Two MXUs, layers with one column fold (split by row folds) and with many.
  const auto w = testing::gemm_workload({{"l1", 37, 29, 23, {}, 1, "t:1"}, {"l2", 3, 40, 4, {}, 2, "t:2"},
                                         {"l3", 9, 4, 30, {}, 1, "t:3"}});
  const uint64_t macs = 37 * 29 * 23 + 2 * 3 * 40 * 4 + 9 * 4 * 30;
  std::map<std::string, std::array<uint64_t, 3>> reads;
  for (const Dataflow* d : dataflows())
    for (MxuModel model : {MxuModel::fast, MxuModel::exact}) {
      ChipConfig c = testing::tiny_chip(2, model);
      c.mxu.dataflow = d->kind();
      const SimResult r = simulate(c, compile(c, w));
      INFO(d->name());
      CHECK(r.engines[0].macs_issued + r.engines[1].macs_issued == macs);
      std::array<uint64_t, 3> sum{};
      for (const auto& e : r.engines)
        for (size_t p = 0; p < 3; ++p) sum[p] += e.sram_read[p];
      reads[std::string(d->name())] = sum;
    }
  // The held operand is read least: ws reads B (weights) once, is reads A once.
  CHECK(reads["ws"][kWeights] < reads["os"][kWeights]);
  CHECK(reads["is"][kVmem] < reads["ws"][kVmem]);
  CHECK(reads["os"][kAccumulators] == 0);  // outputs never read back
}

}  // namespace test_dataflow
