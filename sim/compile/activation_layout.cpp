// Where an activation block lies in HBM, row-major or tiled (docs/memory.md, "Activation
// layout"). Tiled is XLA's layout for arrays on TPUs: an array [R, C] is cut into tiles of
// (8, 128) elements, the shape of a vector register, each tile stored contiguous and the tiles
// in row-major order; element (r, c) of a tiled array sits at
//   ((r / 8) * (C / 128) + c / 128) * 8 * 128 + (r % 8) * 128 + c % 128
// (openxla.org/xla/tiled_layout, "linear index with tile"). The tile here is the config's
// vector register, vpu.sublanes x vpu.lanes. A DMA of a block of whole tiles then moves one run
// per row of tiles, where row-major moves one per row of elements: 1 KiB rows 22 KiB apart
// (a column block of Llama-2-7B's FFN activations) become 8 KiB runs.
#include <stdexcept>

#include "sim/compile/tiled_internal.hpp"

namespace systolic::compile_detail::tiled {

Tile activation_tile(const ChipConfig& c) {
  return {static_cast<int64_t>(c.vpu.sublanes), static_cast<int64_t>(c.vpu.lanes)};
}

bool columns_cover_tiles(int64_t width, int64_t step, const Tile& tile) {
  return width % tile.cols == 0 && step % tile.cols == 0;
}

HbmBlock activation_block(const ActivationTensor& t, int64_t r0, int64_t c0, int64_t rows, int64_t cols) {
  const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  if (!t.tile.tiled())
    return {DmaEndpoint::hbm(t.base + (u(r0) * u(t.width) + u(c0)) * t.w, {1, u(t.width), 0}),
            {u(cols), u(rows), 1}};
  const Tile& tile = t.tile;
  if (r0 % tile.rows != 0 || rows % tile.rows != 0 || c0 % tile.cols != 0 || cols % tile.cols != 0)
    throw std::logic_error("activation_block: a block of a tiled tensor that is not whole tiles");
  const uint64_t tile_index = u(r0 / tile.rows) * u(t.width / tile.cols) + u(c0 / tile.cols);
  return {
      DmaEndpoint::hbm(t.base + tile_index * u(tile.rows * tile.cols) * t.w, {1, u(t.width * tile.rows), 0}),
      {u(cols * tile.rows), u(rows / tile.rows), 1}};
}

namespace {

// Whether every block of rows an entry moves starts and ends on a row of tiles.
bool rows_cover_tiles(const Gemm& g, const EntryPlan& plan, const Tile& tile) {
  for (const RowBlock& b : row_blocks(g, plan))
    if (b.m0 % tile.rows != 0 || b.rows % tile.rows != 0) return false;
  return true;
}

// A GEMM on its own (not in a fused attention chain) reads A [M, K] in blocks of t.k columns
// and writes C [M, N] in blocks of t.n columns (within panels of t.panel).
bool a_covers_tiles(const Gemm& g, const EntryPlan& p, const Tile& tile) {
  return rows_cover_tiles(g, p, tile) && columns_cover_tiles(g.k, p.tiling.k, tile);
}
bool c_covers_tiles(const Gemm& g, const EntryPlan& p, const Tile& tile) {
  return rows_cover_tiles(g, p, tile) && columns_cover_tiles(g.n, p.tiling.n, tile) &&
         (p.tiling.panel == 0 || p.tiling.panel % tile.cols == 0);
}
bool on_its_own(const EntryPlan& p) { return !p.fused && !p.fused_tail; }

}  // namespace

std::vector<EntryLayouts> plan_activation_layouts(const ChipConfig& c, const Workload& w,
                                                  const std::vector<EntryPlan>& plans) {
  std::vector<EntryLayouts> out(w.gemms.size());
  if (c.memory.activation_layout != ActivationLayout::tiled) return out;
  const Tile tile = activation_tile(c);
  for (size_t i = 0; i < w.gemms.size(); ++i) {
    if (!on_its_own(plans[i])) continue;  // attention moves its own per-instance blocks
    const Gemm& g = w.gemms[i];
    // A is what the entry before wrote, if that was a GEMM on its own (decided with its C).
    if (i == 0 || !on_its_own(plans[i - 1])) out[i].a = a_covers_tiles(g, plans[i], tile);
    const bool next_reads = i + 1 < w.gemms.size() && on_its_own(plans[i + 1]);
    out[i].c = c_covers_tiles(g, plans[i], tile) &&
               (!next_reads || a_covers_tiles(w.gemms[i + 1], plans[i + 1], tile));
    if (next_reads) out[i + 1].a = out[i].c;
  }
  return out;
}

}  // namespace systolic::compile_detail::tiled
