#include "sim/compile/overlap.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "models/common/error.hpp"
#include "sim/compile/collective_algorithm.hpp"
#include "sim/compile/tiled_internal.hpp"

namespace systolic::compile_detail {
namespace {

// Vector work placed after `gemms` GEMMs, counted before the collective (after_vectors) or all.
size_t vectors_at(const Workload& w, size_t gemms) {
  size_t n = 0;
  for (const VectorWork& v : w.vectors) n += v.after_gemms == gemms ? 1 : 0;
  return n;
}
size_t vectors_before(const Workload& w, size_t gemms) {
  size_t n = 0;
  for (const VectorWork& v : w.vectors) n += v.after_gemms < gemms ? 1 : 0;
  return n;
}

// The GEMM a collective would overlap, when it is right next to it: the next entry (an
// all-gather) or the one before (a reduce-scatter), with nothing else between.
std::optional<size_t> neighbour_gemm(const Workload& w, size_t index) {
  const CollectiveWork& c = w.collectives[index];
  const size_t at_vector = c.after_vectors - vectors_before(w, c.after_gemms);  // vectors before it there
  const auto side_work_between = [&](bool after) {
    for (size_t j = 0; j < w.collectives.size(); ++j) {
      const CollectiveWork& o = w.collectives[j];
      if (j == index || o.after_gemms != c.after_gemms) continue;
      if (after ? (j > index && o.after_vectors >= c.after_vectors)
                : (j < index && o.after_vectors <= c.after_vectors))
        return true;
    }
    return after ? vectors_at(w, c.after_gemms) > at_vector : at_vector > 0;
  };
  if (c.decompose == Decompose::next_gemm) {
    if (c.after_gemms >= w.gemms.size() || side_work_between(true)) return std::nullopt;
    return c.after_gemms;
  }
  if (c.after_gemms == 0 || side_work_between(false)) return std::nullopt;
  return c.after_gemms - 1;
}

// Why a matmul of `blocks` row blocks cannot hide the collective, or "" when it can.
std::string hardware_refuses(const ChipConfig& config, const Gemm& g, int64_t blocks) {
  using namespace tiled;
  const int64_t rows = ceil_div(g.m, blocks);
  try {
    choose_tiling(config, g, rows);
  } catch (const InputError&) {
    return fmt::format("no tiling of a block of {} rows fits the scratchpads", rows);
  }
  // Each block passes every weight fold of the matmul through the array again, and loading a
  // fold takes about as many cycles as the array has rows: a shorter block leaves the MXUs
  // loading weights more than computing (Llama-3-8B decode 128x2048 --tp 8: blocks of 16 rows
  // made the step 1.5 times as long).
  if (rows < config.mxu.rows)
    return fmt::format("a block of {} rows is shorter than loading a weight fold into the array ({} rows)",
                       rows, config.mxu.rows);
  const Widths ww = widths_of(config, g);
  if (g.k * g.n * ww.buf <= copies_of(config).weights) return "";  // weights read once
  // Each block re-reads the weights: hidden when a block's MACs take at least as long.
  const double macs_per_cycle = config.mxu.peak_macs_per_cycle(ww.ops.compute);
  const double bytes_per_cycle = config.hbm.peak_bytes_per_second() / (config.clock_mhz * 1e6);
  const auto ridge =
      static_cast<int64_t>(std::ceil(macs_per_cycle * dtype_bits(ww.ops.b) / 8.0 / bytes_per_cycle));
  if (rows >= ridge) return "";
  return fmt::format(
      "its weights do not fit a weight-buffer copy and a block of {} rows is memory-bound "
      "(re-reading them per block needs >= {} rows)",
      rows, ridge);
}

OverlapPlan plan_one(const ChipConfig& config, const Workload& w, size_t index, int chip,
                     const std::vector<tiled::EntryPlan>& entries) {
  const CollectiveWork& c = w.collectives[index];
  OverlapPlan p;
  p.asked = c.decompose != Decompose::none;
  if (!p.asked) return p;
  const bool gather = c.decompose == Decompose::next_gemm;
  if (c.kind != (gather ? CollectiveKind::all_gather : CollectiveKind::reduce_scatter) || c.repeat != 1) {
    p.why_not = "only a single all-gather before its matmul or reduce-scatter after it is decomposed";
    return p;
  }
  const GroupView group = group_view(c, config.ici, chip);
  const auto& algorithm = CollectiveRegistry::instance().get(config.ici.algorithm, "key 'ici.algorithm'");
  p.blocks = static_cast<int64_t>(group.members.size());
  if (p.blocks < 2 || !algorithm.single_ring({c, group})) {
    p.why_not =
        p.blocks < 2 ? "its group is one chip" : "its algorithm takes more than one ring phase on this group";
    return p;
  }
  const auto gemm = neighbour_gemm(w, index);
  if (!gemm) {
    p.why_not = gather ? "the next entry is not a matmul" : "the entry before it is not a matmul";
    return p;
  }
  p.gemm = *gemm;
  const Gemm& g = w.gemms[p.gemm];
  const uint64_t a_bytes = dtype_storage_bytes(tiled::widths_of(config, g).ops.a, 1);
  const uint64_t moved = static_cast<uint64_t>(g.m) * static_cast<uint64_t>(gather ? g.k : g.n) * a_bytes;
  if (entries[p.gemm].fused || entries[p.gemm].fused_tail || g.repeat != 1 || moved != c.bytes) {
    p.why_not = fmt::format("'{}' is not one matmul over the rows it moves", g.name);
    return p;
  }
  if (g.m < p.blocks) {
    p.why_not = fmt::format("'{}' has fewer rows ({}) than the group has chips", g.name, g.m);
    return p;
  }
  p.why_not = hardware_refuses(config, g, p.blocks);
  p.decomposed = p.why_not.empty();
  return p;
}

}  // namespace

std::vector<OverlapPlan> plan_overlap(const ChipConfig& config, const Workload& w, int chip) {
  std::vector<OverlapPlan> plans(w.collectives.size());
  bool any = false;
  for (const CollectiveWork& c : w.collectives) any |= c.decompose != Decompose::none;
  if (!any || config.ici.topology == IciTopologyKind::none) return plans;
  const auto entries = tiled::plan_entries(config, w, false);
  std::vector<int64_t> split(w.gemms.size(), 0);  // row blocks each matmul is already cut in
  for (size_t i = 0; i < plans.size(); ++i) {
    plans[i] = plan_one(config, w, i, chip, entries);
    if (!plans[i].decomposed) continue;
    int64_t& blocks = split[plans[i].gemm];
    if (blocks != 0 && blocks != plans[i].blocks) {
      plans[i].decomposed = false;
      plans[i].why_not = "its matmul is already cut into blocks for another collective";
      continue;
    }
    blocks = plans[i].blocks;
  }
  return plans;
}

}  // namespace systolic::compile_detail
