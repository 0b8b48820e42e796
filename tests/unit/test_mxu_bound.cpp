// The compiler's count of MXU cycles without a compile (sim/compile/mxu_bound.hpp): the same
// cycles the simulated MXUs are then busy, instruction by instruction, so that a run lasts at
// least the bound. Checked against the simulator's own busy counters, on GEMMs tiled every way
// (tiles cut at the edges, weights outer in panels, row blocks beside a decomposed
// collective) and on a transformer's fused attention.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "fixtures.hpp"
#include "sim/compile/mxu_bound.hpp"
#include "sim/compile/overlap.hpp"
#include "sim/compile/tiled_internal.hpp"

namespace test_mxu_bound {

using namespace systolic;

namespace {

Gemm matmul(const std::string& name, int64_t m, int64_t k, int64_t n, int64_t repeat = 1) {
  Gemm g;
  g.name = name;
  g.m = m, g.k = k, g.n = n, g.repeat = repeat;
  g.dtype = DType::bf16;
  g.source = "test:1";
  return g;
}

uint64_t mxu_busy(const SimResult& r) {
  uint64_t busy = 0;
  for (const EngineResult& e : r.engines)
    if (e.id.kind == EngineKind::mxu) busy += e.busy_cycles;
  return busy;
}

// The count against one chip's simulated run; the run lasts at least the bound.
void check_chip(const ChipConfig& c, const Workload& w, const SimResult& run, int chip = 0) {
  const uint64_t busy = mxu_busy(run);
  REQUIRE(busy > 0);
  CHECK(mxu_instruction_cycles(c, w, chip) == busy);
  CHECK(mxu_cycles_lower_bound(c, w, chip) == busy / static_cast<uint64_t>(c.mxu.count));
  CHECK(run.total_cycles >= mxu_cycles_lower_bound(c, w, chip));
}

}  // namespace

TEST_CASE("mxu bound: the count of a GEMM's MXU cycles is what its simulated MXUs are busy", "[mxu_bound]") {
  // A small scratchpad (8 KiB per buffer copy) forces many tiles, partial ones at the edges,
  // and weights outer where re-reading activations is cheaper; two MXUs share each tile.
  const ChipConfig c = testing::config_preset(
      "tiny-4x4",
      {"mxu.count=2", "sram.vmem_bytes=16384", "sram.weights_bytes=16384", "sram.accumulators_bytes=16384"});
  int panels = 0;
  for (const Gemm& g :
       {matmul("square", 64, 64, 64), matmul("ragged", 37, 45, 29, 3), matmul("tall", 1000, 24, 8),
        matmul("wide", 8, 24, 1000), matmul("deep", 16, 1500, 12)}) {
    Workload w;
    w.name = g.name;
    w.gemms = {g};
    INFO(g.name);
    check_chip(c, w, simulate(c, compile(c, w)));
    panels += compile_detail::tiled::plan_entries(c, w, true)[0].tiling.panel > 0;
  }
  CHECK(panels > 0);
}

TEST_CASE("mxu bound: a transformer's fused attention and matmuls, prefill and decode", "[mxu_bound]") {
  const ChipConfig c = testing::config_preset("tpu-v5e");
  for (const auto& [phase, bucket] : std::vector<std::pair<std::string, std::string>>{
           {"prefill", "2x256"}, {"prefill", "1x1024"}, {"decode", "4x512"}}) {
    WorkloadOptions o;
    o.bucket = bucket;
    o.phase = phase;
    const Workload w = load_workload(testing::kRepo + "/traces/models/gpt2.yaml", o);
    INFO(phase << " " << bucket);
    check_chip(c, w, simulate(c, compile(c, w)));
  }
}

TEST_CASE("mxu bound: the row blocks of a matmul beside a decomposed all-gather", "[mxu_bound]") {
  const ChipConfig c = testing::config_preset(
      "tpu-v5e-8",
      {"memory.ideal=true", "ici.topology=ring", "ici.dims=4", "ici.wraparound=true", "ici.ports=2"});
  Workload w;
  w.gemms = {matmul("mm", 2048, 4096, 2048)};
  CollectiveWork all_gather;
  all_gather.name = "x";
  all_gather.kind = CollectiveKind::all_gather;
  all_gather.bytes = uint64_t{2048} * 4096 * 2;
  all_gather.decompose = Decompose::next_gemm;
  all_gather.source = "test:1";
  w.collectives = {all_gather};
  REQUIRE(compile_detail::plan_overlap(c, w, 0)[0].decomposed);
  const SystemResult run = testing::run_on_every_chip(c, w);
  for (int chip = 0; chip < 4; ++chip) {
    INFO("chip " << chip);
    check_chip(c, w, run.chip(chip), chip);
  }
}

}  // namespace test_mxu_bound
