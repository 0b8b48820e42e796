// Vector unit: the closed-form cost model worked by hand (models/vpu/vpu_core.hpp), config
// validation, and the SystemC engine advancing time by it (each simulation in a fresh
// simulation context).
#include <catch2/catch.hpp>

#include <systemc>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <variant>
#include <vector>

#include "driver.hpp"
#include "models/common/clock.hpp"
#include "models/common/sim_context.hpp"
#include "models/engine/semaphores.hpp"
#include "models/sram/scratchpad.hpp"
#include "models/vpu/vpu_core.hpp"
#include "models/vpu/vpu_engine.hpp"

namespace test_vpu {

using namespace systolic;

namespace {

// Defaults: 128 lanes x 8 sublanes, 2 ops per cycle, transcendental = 4 ops, latency 8.
const VpuConfig kDefault{};

}  // namespace

TEST_CASE("vector kinds have names that parse back", "[vpu]") {
  for (const auto& name : kVectorKindNames.names()) {
    const auto kind = kVectorKindNames.parse(name);
    REQUIRE(kind);
    CHECK(kVectorKindNames.name(*kind) == name);
  }
  CHECK(kVectorKindNames.names().size() == 10);
  CHECK(!kVectorKindNames.parse("Softmax"));
  CHECK(!kVectorKindNames.parse("tanh"));
  CHECK(kVectorKindNames.choices() == "add, mul, relu, gelu, silu, rmsnorm, layernorm, softmax, rope, dequantize");
}

TEST_CASE("the cost table: ops per element, reductions and row ops", "[vpu]") {
  struct Row {
    VectorKind kind;
    int64_t elem, reductions, row;
  };
  // T = 4.
  for (const Row& r : {Row{VectorKind::add, 1, 0, 0}, Row{VectorKind::mul, 1, 0, 0},
                       Row{VectorKind::relu, 1, 0, 0}, Row{VectorKind::gelu, 12, 0, 0},
                       Row{VectorKind::silu, 11, 0, 0}, Row{VectorKind::rmsnorm, 4, 1, 6},
                       Row{VectorKind::layernorm, 7, 2, 7}, Row{VectorKind::softmax, 8, 2, 4},
                       Row{VectorKind::rope, 4, 0, 0}, Row{VectorKind::dequantize, 1, 0, 0}}) {
    INFO(kVectorKindNames.name(r.kind));
    const VectorCost c = vector_cost(kDefault, r.kind);
    CHECK(c.elem_ops == r.elem);
    CHECK(c.reductions == r.reductions);
    CHECK(c.row_ops == r.row);
  }
  VpuConfig slow_exp;
  slow_exp.transcendental_ops = 10;
  CHECK(vector_cost(slow_exp, VectorKind::gelu).elem_ops == 18);
  CHECK(vector_cost(slow_exp, VectorKind::silu).elem_ops == 23);
  CHECK(vector_cost(slow_exp, VectorKind::softmax).row_ops == 10);
}

TEST_CASE("elementwise cycles by hand", "[vpu]") {
  // One full vreg (8 x 128): 1 op, ceil(1/2) = 1 cycle + 8 latency.
  CHECK(vpu_vreg_ops(kDefault, VectorKind::add, 8, 128) == 1);
  CHECK(vpu_cycles(kDefault, VectorKind::add, 8, 128) == 9);
  // 1024 x 768: 128 row groups x 6 vregs = 768 ops, 384 cycles + 8.
  CHECK(vpu_cycles(kDefault, VectorKind::add, 1024, 768) == 392);
  // Partial vregs cost full ones: 9 x 129 occupies 2 x 2 vregs.
  CHECK(vpu_vreg_ops(kDefault, VectorKind::mul, 9, 129) == 4);
  CHECK(vpu_cycles(kDefault, VectorKind::mul, 9, 129) == 10);
  // GPT-2 GELU at 1024 tokens: 128 x 24 vregs x 12 ops = 36864 ops -> 18432 + 8.
  CHECK(vpu_cycles(kDefault, VectorKind::gelu, 1024, 3072) == 18440);
  // SiLU on one row group of 256 columns: 2 vregs x 11 ops = 22 -> 11 + 8.
  CHECK(vpu_cycles(kDefault, VectorKind::silu, 8, 256) == 19);
  // RoPE on one vreg: 4 ops -> 2 + 8. An odd op count rounds up: 3 vregs of add -> 2 cycles.
  CHECK(vpu_cycles(kDefault, VectorKind::rope, 8, 128) == 10);
  CHECK(vpu_cycles(kDefault, VectorKind::add, 24, 128) == 10);
  // Nothing to do costs nothing (not even the latency).
  CHECK(vpu_cycles(kDefault, VectorKind::softmax, 0, 1024) == 0);
  CHECK(vpu_cycles(kDefault, VectorKind::add, 16, 0) == 0);
}

TEST_CASE("row reductions cycles by hand", "[vpu]") {
  // RMSNorm of one decode token at d = 4096: one row group (7 sublanes idle), 32 vregs x 4
  // ops + one 128-lane reduction (7 steps x 2 ops) + 6 row ops = 148 -> 74 + 8.
  CHECK(vpu_vreg_ops(kDefault, VectorKind::rmsnorm, 1, 4096) == 148);
  CHECK(vpu_cycles(kDefault, VectorKind::rmsnorm, 1, 4096) == 82);
  // LayerNorm 1024 x 768: 128 groups x (6 x 7 + 2 x 14 + 7 = 77) = 9856 -> 4928 + 8.
  CHECK(vpu_cycles(kDefault, VectorKind::layernorm, 1024, 768) == 4936);
  // GPT-2 softmax at S = 1024: 12 heads x 1024 rows of 1024 -> 1536 groups x
  // (8 x 8 + 2 x 14 + 4 = 96) = 147456 -> 73728 + 8.
  CHECK(vpu_cycles(kDefault, VectorKind::softmax, 12 * 1024, 1024) == 73736);
  // A tiny VPU: 4 lanes, 1 sublane, 1 op/cycle, T = 2, no latency. Softmax of 2 rows of 10:
  // per row 3 vregs x (4 + 2) + 2 reductions x 2 x log2(4) + T = 18 + 8 + 2 = 28.
  VpuConfig tiny;
  tiny.lanes = 4;
  tiny.sublanes = 1;
  tiny.ops_per_cycle = 1;
  tiny.transcendental_ops = 2;
  tiny.latency_cycles = 0;
  CHECK(vpu_cycles(tiny, VectorKind::softmax, 2, 10) == 56);
  // Non-power-of-two lanes round the reduction tree up: 5 lanes -> 3 steps.
  tiny.lanes = 5;
  CHECK(vpu_vreg_ops(tiny, VectorKind::rmsnorm, 1, 5) == 4 + 6 + 2 + 2);
}

TEST_CASE("large elementwise ops approach the peak rate", "[vpu]") {
  CHECK(kDefault.elements_per_cycle() == 2048);
  const uint64_t rows = 4096, cols = 8192;
  const double cycles = static_cast<double>(vpu_cycles(kDefault, VectorKind::add, rows, cols));
  CHECK(cycles == Approx(static_cast<double>(rows * cols) / 2048).epsilon(0.001));
  // Cycles per element = elem_ops / 2048 for large, aligned tensors.
  const double gelu = static_cast<double>(vpu_cycles(kDefault, VectorKind::gelu, rows, cols));
  CHECK(gelu / static_cast<double>(rows * cols) == Approx(12.0 / 2048).epsilon(0.001));
}

TEST_CASE("VpuOp overload, traffic and overflow", "[vpu]") {
  const VpuOp op{VectorKind::softmax, 12 * 1024, 1024, DType::bf16};
  CHECK(vpu_cycles(kDefault, op) == 73736);
  const VpuTraffic t = vpu_traffic(op);
  CHECK(t.bytes_read == 12ull * 1024 * 1024 * 2);
  CHECK(t.bytes_written == 12ull * 1024 * 1024 * 2);
  const VpuTraffic add = vpu_traffic({VectorKind::add, 4, 8, DType::fp32});
  CHECK(add.bytes_read == 2 * 4 * 8 * 4);
  CHECK(add.bytes_written == 4 * 8 * 4);
  // Dequantise reads packed integers and writes the float type: int4 [3, 5] is ceil(15 / 2) B
  // in, 15 x 2 B of bf16 out; one scale multiply per value (8 x 128 values: one vreg op).
  VpuOp deq{VectorKind::dequantize, 3, 5, DType::int4};
  deq.to_dtype = DType::bf16;
  CHECK(vpu_traffic(deq).bytes_read == 8);
  CHECK(vpu_traffic(deq).bytes_written == 30);
  CHECK(vpu_vreg_ops(kDefault, VectorKind::dequantize, 8, 128) == 1);
  CHECK_THROWS_AS(vpu_cycles(kDefault, VpuOp{VectorKind::add, -1, 4, DType::bf16}),
                  std::invalid_argument);
  CHECK_THROWS_AS(vpu_cycles(kDefault, VectorKind::gelu, UINT64_MAX, UINT64_MAX),
                  std::overflow_error);
}

TEST_CASE("VPU config validation names the key", "[vpu]") {
  CHECK(!kDefault.validate());
  auto bad = kDefault;
  bad.lanes = 0;
  REQUIRE(bad.validate());
  CHECK(bad.validate()->message() == "vpu.lanes: expected an integer in [1, 65536], got 0");
  bad = kDefault;
  bad.sublanes = 2000;
  CHECK(bad.validate()->field == "vpu.sublanes");
  bad = kDefault;
  bad.ops_per_cycle = 0;
  CHECK(bad.validate()->field == "vpu.ops_per_cycle");
  bad = kDefault;
  bad.transcendental_ops = 0;
  CHECK(bad.validate()->field == "vpu.transcendental_ops");
  bad = kDefault;
  bad.latency_cycles = -1;
  CHECK(bad.validate()->field == "vpu.latency_cycles");
  CHECK_THROWS_WITH(vpu_cycles(bad, VectorKind::add, 1, 1), Catch::Contains("vpu.latency_cycles"));
}

TEST_CASE("the VPU engine advances SystemC time by the closed form", "[vpu]") {
  FreshContext context;
  SemaphoreBank semaphores(0);
  Scratchpad vmem({"vmem", 16ull << 20, 32, 1024, 2});
  Scratchpad weights({"weights", 16ull << 20, 32, 1024, 2});
  VpuEngine engine("vpu", EngineId{}, {}, semaphores, kDefault);
  engine.attach_scratchpads(&vmem, &weights);
  VpuOp dequantize{VectorKind::dequantize, 256, 256, DType::int8};
  dequantize.to_dtype = DType::bf16;
  const std::vector<VpuOp> work{{VectorKind::add, 1024, 768, DType::bf16},
                                {VectorKind::softmax, 12 * 1024, 1024, DType::bf16},
                                {VectorKind::rmsnorm, 0, 4096, DType::bf16},
                                {VectorKind::rmsnorm, 1, 4096, DType::bf16},
                                dequantize};
  testing::Driver<VpuOp> driver("driver", work, [&engine](const VpuOp& op) { return engine.run_op(op); });
  sc_core::sc_start();
  REQUIRE(driver.done.size() == 5);
  std::vector<uint64_t> done;
  for (const sc_core::sc_time& t : driver.done) done.push_back(time_to_cycles(t));
  // Dequantise [256, 256]: 32 x 2 vregs, one multiply each: 8 + 64 / 2 cycles.
  CHECK(driver.returned == std::vector<uint64_t>{392, 73736, 0, 82, 40});
  CHECK(done == std::vector<uint64_t>{392, 392 + 73736, 392 + 73736, 392 + 73736 + 82, 392 + 73736 + 82 + 40});
  const VpuStats& s = engine.stats();
  CHECK(s.instructions == 5);
  CHECK(s.elements == 1024ull * 768 + 12ull * 1024 * 1024 + 4096 + 65536);
  CHECK(s.busy_cycles == 392 + 73736 + 82 + 40);
  CHECK(s.vreg_ops == 768 + 147456 + 148 + 64);
  CHECK(s.bytes_read == (2ull * 1024 * 768 + 12ull * 1024 * 1024 + 4096) * 2);
  CHECK(vmem.bytes_read() == s.bytes_read);
  CHECK(vmem.bytes_written() == s.bytes_written);
  // The dequantise works in the weight buffer: int8 in, bf16 out.
  CHECK(weights.bytes_read() == 65536);
  CHECK(weights.bytes_written() == 2 * 65536);
  CHECK(s.weights_bytes_read == 65536);
  CHECK(s.weights_bytes_written == 2 * 65536);
}

TEST_CASE("the VPU engine rejects a bad config and a bad op", "[vpu]") {
  FreshContext context;
  SemaphoreBank semaphores(0);
  VpuConfig bad;
  bad.ops_per_cycle = 0;
  CHECK_THROWS_WITH(VpuEngine("vpu_bad", EngineId{}, {}, semaphores, bad),
                    Catch::Contains("vpu.ops_per_cycle"));
  VpuEngine engine("vpu", EngineId{}, {}, semaphores, kDefault);
  CHECK(!engine.check({VectorKind::add, 4, 4, DType::bf16}));
  REQUIRE(engine.check({VectorKind::add, -4, 4, DType::bf16}));
  CHECK_THAT(*engine.check({VectorKind::add, -4, 4, DType::bf16}), Catch::Contains("negative"));
}

}  // namespace test_vpu
