// The SystemC run: engines follow their streams and semaphores, MXUs split column folds,
// deadlocks are reported instead of hanging, and a process can simulate many times.
#include <catch2/catch.hpp>

#include "models/common/error.hpp"
#include "sim/compile/compile.hpp"
#include "sim/simulate/simulate.hpp"
#include "tests/unit/fixtures.hpp"

namespace test_simulate {

using namespace systolic;

namespace {
// Ideal memory: the compiled program's transfers take no time, so only the MXU schedule shows
// (these layers are small enough to be one weight tile each).
ChipConfig tiny(int64_t count, MxuModel model, Convention conv = Convention::tpu) {
  ChipConfig c = testing::tiny_chip(count, model, conv);
  c.memory.ideal = true;
  return c;
}
}  // namespace

TEST_CASE("one MXU runs layers back to back", "[simulate]") {
  // 4x4 tpu: L1 M=6,K=8,N=4: F=2 -> 4 + 1*max(6,4) + (6+4+4-2) = 22.
  //          L2 M=2,K=3,N=9: F=3 -> 4 + 2*max(2,4) + (2+4+4-2) = 20.
  const auto w = testing::gemm_workload({{"l1", 6, 8, 4, {}, 1, "t:1"}, {"l2", 2, 3, 9, {}, 1, "t:2"}});
  for (MxuModel model : {MxuModel::fast, MxuModel::exact}) {
    const auto cfg = tiny(1, model);
    const SimResult r = simulate(cfg, compile(cfg, w));
    CHECK(r.total_cycles == 42);
    REQUIRE(r.engines[0].name == "mxu0");
    CHECK(r.engines[0].busy_cycles == 42);
    CHECK(r.engines[0].records[1].start == 22);
    CHECK(r.engines[0].macs_issued == 6 * 8 * 4 + 2 * 3 * 9);
  }
}

TEST_CASE("MXUs split a layer's column folds and wait for each other between layers", "[simulate]") {
  // N=10 on 4 columns: 3 column folds; mxu0 takes folds 0-1 (N=8), mxu1 fold 2 (N=2).
  // L1 M=5,K=4: mxu0 F=2 -> 4 + max(5,4) + (5+4+4-2) = 20; mxu1 F=1 -> 4 + 11 = 15.
  // L2 M=1,K=4,N=4: one fold, only mxu0 works: 4 + (1+4+4-2) = 11, starting at 20.
  const auto w = testing::gemm_workload({{"l1", 5, 4, 10, {}, 1, "t:1"}, {"l2", 1, 4, 4, {}, 1, "t:2"}});
  const auto cfg = tiny(2, MxuModel::fast);
  const SimResult r = simulate(cfg, compile(cfg, w));
  CHECK(r.total_cycles == 31);
  CHECK(r.engines[0].busy_cycles == 31);
  CHECK(r.engines[1].busy_cycles == 15);
  CHECK(r.engines[1].idle_cycles == 16);
  CHECK(r.engines[0].records[1].ready == 20);
  CHECK(r.engines[0].records[1].start == 20);
  // Conservation: every MAC of the workload is issued exactly once across the MXUs.
  CHECK(r.engines[0].macs_issued + r.engines[1].macs_issued == 5 * 4 * 10 + 1 * 4 * 4);
}

TEST_CASE("a semaphore nobody signals is reported as a deadlock", "[simulate]") {
  Program p;
  p.semaphores = {"never"};
  p.layers.push_back({"l", 1, 1, 1, DType::int8, 1, 1, "t:1"});
  p.streams.push_back({{EngineKind::mxu, 0}, {Instruction{MatmulOp{1, 1, 1, 0, DType::int8}, 0, {{0, 1}}, {}}}});
  try {
    simulate(tiny(1, MxuModel::fast), p);
    FAIL("expected a deadlock error");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("deadlock") && Catch::Contains("mxu0") &&
                             Catch::Contains("instruction 0 waits for semaphore 0 >= 1"));
  }
}

TEST_CASE("a program for more MXUs than the chip has is rejected", "[simulate]") {
  const auto w = testing::gemm_workload({{"l1", 4, 4, 16, {}, 1, "t:1"}});
  const Program p = compile(tiny(4, MxuModel::fast), w);
  CHECK_THROWS_WITH(simulate(tiny(2, MxuModel::fast), p), Catch::Contains("mxu.count = 2"));
}

TEST_CASE("many simulations in one process give the same answers", "[simulate]") {
  const auto w = testing::gemm_workload({{"l1", 7, 9, 5, {}, 3, "t:1"}});
  const auto a = tiny(1, MxuModel::fast), b = tiny(1, MxuModel::fast, Convention::scalesim);
  const uint64_t first_a = simulate(a, compile(a, w)).total_cycles;
  const uint64_t first_b = simulate(b, compile(b, w)).total_cycles;
  for (int i = 0; i < 5; ++i) {
    CHECK(simulate(a, compile(a, w)).total_cycles == first_a);
    CHECK(simulate(b, compile(b, w)).total_cycles == first_b);
  }
  // scalesim, F = ceil(9/4)*ceil(5/4) = 6 folds of 2*4 + 4 + 7 - 2 = 17 cycles, three times.
  CHECK(first_b == 3 * 6 * 17);
}

TEST_CASE("a layer whose work overflows 64 bits is rejected with its source", "[simulate]") {
  // int8 [2^30, 2^30] x [2^30, 2^30]: its operands (3 x 2^60 B) fit an HBM that large, its
  // 2^90 MACs do not fit 64 bits.
  const int64_t big = int64_t(1) << 30;
  const auto w = testing::gemm_workload({{"huge", big, big, big, DType::int8, 1, "w.yaml:7"}});
  ChipConfig cfg = tiny(1, MxuModel::fast);
  cfg.hbm.capacity_bytes = UINT64_MAX;
  // (Its cycles overflow first: 2^60 per fold.)
  CHECK_THROWS_WITH(compile(cfg, w), Catch::StartsWith("w.yaml:7: layer 'huge': ") && Catch::Contains("overflows 64 bits"));
}

}  // namespace test_simulate
