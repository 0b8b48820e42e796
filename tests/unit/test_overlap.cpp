// Collectives decomposed and overlapped with their matmuls (sim/compile/overlap.hpp): the time
// against the closed form of the step-by-step schedule, the same bytes on every link as the
// collective run whole, and the cases the hardware or the workload refuse.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "fixtures.hpp"
#include "sim/compile/compile.hpp"
#include "sim/compile/overlap.hpp"
#include "sim/config/config.hpp"
#include "sim/simulate/simulate.hpp"

namespace test_overlap {

using namespace systolic;

namespace {

const std::string kV5e = std::string(SYSTOLIC_SOURCE_DIR) + "/configs/tpu-v5e-8.yaml";

// The v5e chip on a ring of `n` with ideal memory: the MXUs and the links alone. B = 45 GB/s
// at 1.5 GHz = 30 bytes a cycle, a hop 1000 ns = 1500 cycles.
ChipConfig ring(int n, const std::string& algorithm) {
  return load_config(kV5e, {"memory.ideal=true", "ici.topology=ring", fmt::format("ici.dims={}", n),
                            "ici.wraparound=true", "ici.ports=2", "ici.algorithm=" + algorithm});
}

Gemm matmul(const std::string& name, int64_t m, int64_t k, int64_t n) {
  Gemm g;
  g.name = name;
  g.m = m;
  g.k = k;
  g.n = n;
  g.dtype = DType::bf16;
  g.source = "test:1";
  return g;
}

CollectiveWork collective(CollectiveKind kind, uint64_t bytes, Decompose d, size_t after_gemms) {
  CollectiveWork c;
  c.name = "x";
  c.kind = kind;
  c.bytes = bytes;
  c.decompose = d;
  c.after_gemms = after_gemms;
  c.source = "test:1";
  return c;
}


// One row block's matmul alone on one chip.
uint64_t block_cycles(const Gemm& g) {
  const ChipConfig one = load_config(kV5e, {"memory.ideal=true", "ici.topology=none", "ici.dims=1"});
  Workload w;
  w.gemms = {g};
  return simulate(one, compile(one, w)).total_cycles;
}

std::vector<uint64_t> link_bytes(const SystemResult& r) {
  std::vector<uint64_t> out;
  for (const auto& l : r.links) out.push_back(l.bytes);
  return out;
}

}  // namespace

TEST_CASE("A decomposed all-gather hides under its matmul: max(block, step) per step", "[overlap]") {
  // All-gather of A [T, K] (bf16) over N chips, then A x W [K, F]. Decomposed, block s of T/N
  // rows starts once block s - 1 is done and step s - 1's message is in; step s's message
  // leaves when step s - 1's has arrived. So with c the time of one block and m of one step,
  //   end(0) = c,  end(s) = max(end(s - 1), s m) + c,   total = end(N - 1)
  //         = c + (N - 1) max(c, m) when the steps keep up (or fall behind) uniformly.
  const int n = 4;
  const int64_t T = 2048, K = 4096;
  const uint64_t S = uint64_t{T} * K * 2;
  for (const std::string algorithm : {"ring", "bidir_ring"}) {
    const double ways = algorithm == "ring" ? 1 : 2;
    const double m = static_cast<double>(S) / n / ways / 30.0 + 1500;  // a step: S/(N ways) over B, a hop
    for (int64_t F : {2048, 8192}) {  // comm-bound (c < m) and compute-bound (c > m)
      const ChipConfig c = ring(n, algorithm);
      Workload w;
      w.gemms = {matmul("mm", T, K, F)};
      w.collectives = {collective(CollectiveKind::all_gather, S, Decompose::next_gemm, 0)};
      const auto plan = compile_detail::plan_overlap(c, w, 0);
      REQUIRE(plan[0].decomposed);
      CHECK(plan[0].blocks == n);
      const double block = static_cast<double>(block_cycles(matmul("block", T / n, K, F)));
      double end = block;
      for (int s = 1; s < n; ++s) end = std::max(end, s * m) + block;
      const SystemResult overlapped = testing::run_on_every_chip(c, w);
      CHECK(static_cast<double>(overlapped.total_cycles) == Approx(end).epsilon(0.01));
      // Whole, the matmul waits for the whole all-gather: (N - 1) m + N c, longer.
      w.collectives[0].decompose = Decompose::none;
      const SystemResult whole = testing::run_on_every_chip(c, w);
      CHECK(static_cast<double>(whole.total_cycles) == Approx((n - 1) * m + n * block).epsilon(0.03));
      CHECK(overlapped.total_cycles < whole.total_cycles);
      // The same messages: every link carries the same bytes either way, (N - 1)/N S per chip.
      CHECK(link_bytes(overlapped) == link_bytes(whole));
      uint64_t sent = 0;
      for (uint64_t b : link_bytes(whole)) sent += b;
      CHECK(sent == static_cast<uint64_t>(n) * (n - 1) * (S / n));
    }
  }
}

TEST_CASE("A decomposed reduce-scatter adds each row block as its matmul stores it", "[overlap]") {
  // A [T, K] x W [K, F] = partial sums [T, F], then their reduce-scatter over N chips. Block s
  // is the one step s adds (the ring's own order); step s's add waits for block s + 1 and for
  // step s's message, and step s + 1's message waits for that add:
  //   send(0) = c,  add(s) = max((s + 2) c, send(s) + m) + a,  send(s + 1) = add(s),
  //   total = add(N - 2) (a: one add of S/N on the VPU).
  const int n = 4;
  const int64_t T = 2048, F = 4096;
  const uint64_t S = uint64_t{T} * F * 2;
  const ChipConfig c = ring(n, "ring");
  const int64_t K = GENERATE(1024, 8192);  // comm-bound (a block of 1024: c < m + a) and compute-bound
  const double m = static_cast<double>(S) / n / 30.0 + 1500;
  // One add of S/N bf16 values: [S/N/2/1024, 1024] on the v5e VPU (vpu.latency_cycles +
  // rows/sublanes x cols/lanes / ops_per_cycle, docs/interconnect.md "Closed forms").
  const double a = static_cast<double>(c.vpu.latency_cycles) +
                   std::ceil(static_cast<double>(S / n / 2 / 1024) / static_cast<double>(c.vpu.sublanes)) *
                       std::ceil(1024.0 / static_cast<double>(c.vpu.lanes)) /
                       static_cast<double>(c.vpu.ops_per_cycle);
  Workload w;
  w.gemms = {matmul("mm", T, K, F)};
  w.collectives = {collective(CollectiveKind::reduce_scatter, S, Decompose::previous_gemm, 1)};
  REQUIRE(compile_detail::plan_overlap(c, w, 0)[0].decomposed);
  const double block = static_cast<double>(block_cycles(matmul("block", T / n, K, F)));
  double send = block, add = 0;
  for (int s = 0; s + 1 < n; ++s) {
    add = std::max((s + 2) * block, send + m) + a;
    send = add;
  }
  const SystemResult overlapped = testing::run_on_every_chip(c, w);
  CHECK(static_cast<double>(overlapped.total_cycles) == Approx(add).epsilon(0.01));
  w.collectives[0].decompose = Decompose::none;
  const SystemResult whole = testing::run_on_every_chip(c, w);
  CHECK(overlapped.total_cycles < whole.total_cycles);
  CHECK(link_bytes(overlapped) == link_bytes(whole));
}

TEST_CASE("Collectives are decomposed only beside one matmul of their rows, where it pays", "[overlap]") {
  const ChipConfig c = ring(4, "ring");
  Workload w;
  w.gemms = {matmul("mm", 2048, 4096, 4096)};
  // The matmul reads 2048 x 4096 bf16 = 16 MiB: a gather of another size is not its input.
  w.collectives = {collective(CollectiveKind::all_gather, 8 << 20, Decompose::next_gemm, 0)};
  auto p = compile_detail::plan_overlap(c, w, 0);
  CHECK_FALSE(p[0].decomposed);
  CHECK(p[0].why_not == "'mm' is not one matmul over the rows it moves");
  // Decode-like: 64 rows over 4 chips are blocks of 16 rows, shorter than loading a weight fold
  // into the 128-row array, even with weights (1024 x 1024 bf16, 2 MiB) read once.
  w.gemms = {matmul("mm", 64, 1024, 1024)};
  w.collectives = {collective(CollectiveKind::all_gather, 64 * 1024 * 2, Decompose::next_gemm, 0)};
  p = compile_detail::plan_overlap(c, w, 0);
  CHECK_FALSE(p[0].decomposed);
  CHECK(p[0].why_not == "a block of 16 rows is shorter than loading a weight fold into the array (128 rows)");
  // 768 rows over 4 chips are blocks of 192 rows, below the v5e's ridge (65536 MACs a cycle /
  // 546 HBM bytes a cycle x 2 bytes a weight = 241 rows), and the 8192 x 4096 bf16 weights
  // (64 MiB) do not fit a weight-buffer copy (32 MiB).
  w.gemms = {matmul("mm", 768, 8192, 4096)};
  w.collectives = {collective(CollectiveKind::all_gather, 768 * 8192 * 2, Decompose::next_gemm, 0)};
  p = compile_detail::plan_overlap(c, w, 0);
  CHECK_FALSE(p[0].decomposed);
  CHECK(p[0].why_not.find("memory-bound") != std::string::npos);
  // The torus algorithm on a 2x2 group: two ring phases, not one.
  const ChipConfig torus =
      load_config(kV5e, {"memory.ideal=true", "ici.dims=2x2", "ici.wraparound=true", "ici.algorithm=torus"});
  w.gemms = {matmul("mm", 2048, 4096, 4096)};
  w.collectives = {collective(CollectiveKind::all_gather, 2048 * 4096 * 2, Decompose::next_gemm, 0)};
  p = compile_detail::plan_overlap(torus, w, 0);
  CHECK_FALSE(p[0].decomposed);
  CHECK(p[0].why_not == "its algorithm takes more than one ring phase on this group");
  // Not asked: nothing to say.
  w.collectives[0].decompose = Decompose::none;
  p = compile_detail::plan_overlap(c, w, 0);
  CHECK_FALSE(p[0].asked);
}

TEST_CASE("A permute sends each chip's bytes to the next one of the ring in S/B + one hop", "[overlap]") {
  const ChipConfig c = ring(4, "ring");
  Workload w;
  w.collectives = {collective(CollectiveKind::permute, 3 << 20, Decompose::none, 0)};
  const SystemResult r = testing::run_on_every_chip(c, w);
  CHECK(static_cast<double>(r.total_cycles) == Approx((3 << 20) / 30.0 + 1500).epsilon(0.01));
  for (const auto& l : r.links) CHECK(l.bytes == (l.name.back() == '+' ? uint64_t{3} << 20 : 0));
}

}  // namespace test_overlap
