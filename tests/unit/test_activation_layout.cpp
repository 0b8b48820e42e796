// Activations in HBM, tiled or row-major (sim/compile/activation_layout.cpp, docs/memory.md
// "Activation layout"): a block's DMA touches exactly the bytes XLA's tiled index gives, the
// plan tiles a tensor only where its writer's and reader's blocks cover whole tiles, and a
// program moves the same bytes in fewer, longer runs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/compile/compile.hpp"
#include "sim/compile/tiled_internal.hpp"
#include "sim/config/config.hpp"

namespace test_activation_layout {

namespace {

using namespace systolic;
using namespace systolic::compile_detail::tiled;
using Spans = std::vector<std::pair<uint64_t, uint64_t>>;  // [begin, end) bytes

// Sorted and merged where one span ends where the next begins.
Spans merged(Spans s) {
  std::sort(s.begin(), s.end());
  Spans out;
  for (const auto& x : s)
    if (!out.empty() && out.back().second == x.first)
      out.back().second = x.second;
    else
      out.push_back(x);
  return out;
}

// The bytes of block [rows, cols] at (r0, c0), element by element: row-major, or by the tiled
// index of XLA's tiled layout (openxla.org/xla/tiled_layout), independent of activation_block.
Spans reference(const ActivationTensor& t, int64_t r0, int64_t c0, int64_t rows, int64_t cols) {
  Spans s;
  for (int64_t r = r0; r < r0 + rows; ++r)
    for (int64_t c = c0; c < c0 + cols; ++c) {
      int64_t index = r * t.width + c;
      if (t.tile.tiled()) {
        const int64_t tr = t.tile.rows, tc = t.tile.cols;
        index = ((r / tr) * (t.width / tc) + c / tc) * tr * tc + (r % tr) * tc + c % tc;
      }
      const uint64_t at = t.base + static_cast<uint64_t>(index) * t.w;
      s.push_back({at, at + t.w});
    }
  return merged(s);
}

// What a DMA of the block moves on its HBM side, run by run as the engine cuts it.
Spans moved(const ActivationTensor& t, int64_t r0, int64_t c0, int64_t rows, int64_t cols,
            size_t* runs = nullptr) {
  const HbmBlock b = activation_block(t, r0, c0, rows, cols);
  DmaDescriptor d;
  d.element_bytes = t.w;
  d.shape = b.shape;
  d.src = b.hbm;
  d.dst = DmaEndpoint::sram(0, 0, {1, b.shape[0], 0});
  Spans s;
  for (const DmaRun& r : runs_of(d, d.src)) s.push_back({r.address, r.address + r.bytes});
  if (runs) *runs = s.size();
  REQUIRE(d.total_bytes() == static_cast<uint64_t>(rows * cols) * t.w);
  return merged(s);
}

ChipConfig v4i(const std::string& layout) {
  return load_config(std::string(SYSTOLIC_SOURCE_DIR) + "/configs/tpu-v4i.yaml",
                     {"memory.ideal=false", "memory.activation_layout=" + layout});
}

Gemm gemm(const std::string& name, int64_t m, int64_t k, int64_t n) {
  return {name, m, k, n, DType::bf16, 1, "t:" + name, LayerKind::matmul};
}

}  // namespace

TEST_CASE("an activation block moves the bytes of the tiled index, a run per row of tiles",
          "[compile][layout]") {
  const Tile tile{8, 128};
  struct Case {
    int64_t width, r0, c0, rows, cols;
    uint64_t w;
  };
  // Column blocks, the full width (one run), a single row of tiles, 1- and 4-byte elements.
  const Case cases[] = {{1024, 16, 256, 32, 384, 2},
                        {512, 0, 0, 24, 512, 2},
                        {384, 8, 128, 8, 128, 1},
                        {256, 40, 0, 16, 128, 4},
                        {1408, 0, 0, 64, 1408, 2}};
  for (const Case& c : cases) {
    CAPTURE(c.width, c.r0, c.c0, c.rows, c.cols, c.w);
    const ActivationTensor tiled{1 << 20, c.width, c.w, tile}, rows{1 << 20, c.width, c.w, {}};
    size_t tiled_runs = 0, row_runs = 0;
    CHECK(moved(tiled, c.r0, c.c0, c.rows, c.cols, &tiled_runs) ==
          reference(tiled, c.r0, c.c0, c.rows, c.cols));
    CHECK(moved(rows, c.r0, c.c0, c.rows, c.cols, &row_runs) == reference(rows, c.r0, c.c0, c.rows, c.cols));
    // A run per row of tiles (or one, at full width) against one per row of elements.
    CHECK(tiled_runs == static_cast<size_t>(c.cols == c.width ? 1 : c.rows / tile.rows));
    CHECK(row_runs == static_cast<size_t>(c.cols == c.width ? 1 : c.rows));
  }
  // The plan tiles only tensors whose blocks are whole tiles; any other block is a compiler bug.
  const ActivationTensor t{0, 1024, 2, tile};
  CHECK_THROWS_AS(activation_block(t, 4, 0, 8, 128), std::logic_error);
  CHECK_THROWS_AS(activation_block(t, 0, 64, 8, 128), std::logic_error);
  CHECK_THROWS_AS(activation_block(t, 0, 0, 8, 96), std::logic_error);
}

TEST_CASE("a tensor is tiled where its writer's and reader's blocks cover whole tiles", "[compile][layout]") {
  Workload w;
  w.name = "chain";
  // g0 writes [256, 1024], which g1 reads; g1 writes [256, 1000] (not whole tiles of 128
  // columns), which g2 reads; g2 writes [256, 512].
  w.gemms = {gemm("g0", 256, 512, 1024), gemm("g1", 256, 1024, 1000), gemm("g2", 256, 1000, 512)};
  const ChipConfig tiled = v4i("tiled");
  const auto plans = plan_entries(tiled, w, true);
  const auto layouts = plan_activation_layouts(tiled, w, plans);
  REQUIRE(layouts.size() == 3);
  CHECK(layouts[0].a);
  CHECK(layouts[0].c);
  CHECK(layouts[1].a);   // what g0 wrote
  CHECK(!layouts[1].c);  // 1000 columns
  CHECK(!layouts[2].a);  // what g1 wrote
  CHECK(layouts[2].c);
  for (const EntryLayouts& l : plan_activation_layouts(v4i("row_major"), w, plans)) {
    CHECK(!l.a);
    CHECK(!l.c);
  }
  // Rows: a block of rows that is not whole rows of tiles keeps both sides row-major.
  Workload odd;
  odd.name = "odd";
  odd.gemms = {gemm("g0", 250, 512, 1024), gemm("g1", 250, 1024, 512)};
  for (const EntryLayouts& l : plan_activation_layouts(tiled, odd, plan_entries(tiled, odd, true))) {
    CHECK(!l.a);
    CHECK(!l.c);
  }
}

TEST_CASE("with tiled activations a GEMM's blocks are whole rows of tiles, unless a collective cuts them",
          "[compile][layout]") {
  // Llama-2-7B's ffn_down at [1, 2048] on tpu-v4i: vmem holds 381 rows of K = 11008 bf16.
  const Gemm down = gemm("down", 2048, 11008, 4096);
  CHECK(choose_tiling(v4i("row_major"), down).m == 381);
  CHECK(choose_tiling(v4i("tiled"), down).m == 376);
  // A part an overlapped collective cuts (257 rows) stays whole: rounding it would cut it in two.
  const Gemm part = gemm("part", 2056, 4096, 4096);
  CHECK(choose_tiling(v4i("tiled"), part, 257).m == 257);
  // Columns that are not whole tiles keep the rows as they are.
  CHECK(choose_tiling(v4i("tiled"), gemm("odd", 2048, 11000, 1000)).m ==
        choose_tiling(v4i("row_major"), gemm("odd", 2048, 11000, 1000)).m);
}

TEST_CASE("tiled activations move the same HBM bytes as row-major ones, in fewer runs", "[compile][layout]") {
  Workload w;
  w.name = "chain";
  w.gemms = {gemm("g0", 512, 2048, 4096), gemm("g1", 512, 4096, 2048), gemm("g2", 512, 2048, 1000)};
  struct Moved {
    uint64_t bytes = 0, runs = 0;
  };
  auto count = [&](const std::string& layout) {
    Moved m;
    for (const auto& s : compile(v4i(layout), w).streams)
      for (const Instruction& i : s.instructions)
        if (const auto* dma = std::get_if<DmaOp>(&i.op)) {
          const DmaDescriptor& d = dma->descriptor;
          for (const DmaEndpoint* side : {&d.src, &d.dst})
            if (side->is_hbm()) {
              m.bytes += d.total_bytes();
              m.runs += RunCursor(d, *side).run_count();
            }
        }
    return m;
  };
  const Moved tiled = count("tiled"), rows = count("row_major");
  CHECK(tiled.bytes == rows.bytes);
  CHECK(tiled.runs * 4 < rows.runs);
}

}  // namespace test_activation_layout
