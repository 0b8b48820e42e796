#include "sim/compile/compile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "models/common/clock.hpp"
#include "models/common/error.hpp"
#include "models/mxu/dataflow.hpp"
#include "sim/compile/capacity.hpp"
#include "sim/compile/collective.hpp"
#include "sim/compile/detail.hpp"

namespace systolic {
namespace compile_detail {

std::pair<int64_t, int64_t> fold_share(int64_t folds, int64_t count, int64_t i) {
  const int64_t base = folds / count, extra = folds % count;
  const int64_t first = i * base + std::min(i, extra);
  return {first, first + base + (i < extra ? 1 : 0)};
}

MxuOperands operands_of(const ChipConfig& config, const Gemm& g) {
  const DType a = g.a_type(config.mxu.dtype), b = g.b_type(config.mxu.dtype);
  auto ops = mxu_operands(a, b);
  if (const auto* why = std::get_if<std::string>(&ops))
    throw InputError(fmt::format("{}: GEMM '{}': operands {} x {}: {} (types not given default to mxu.dtype = {})",
                                 g.source, g.name, kDTypeNames.name(a), kDTypeNames.name(b), *why, kDTypeNames.name(config.mxu.dtype)));
  return std::get<MxuOperands>(ops);
}

LayerInfo layer_info(const ChipConfig& config, const Gemm& g) {
  LayerInfo info{g.name, g.m, g.k, g.n, operands_of(config, g).compute, g.repeat, 0, g.source, g.kind};
  // Rows of real work: all m x repeat, or fewer when the rest pads the static shape.
  const uint64_t rows = g.useful_rows >= 0 ? static_cast<uint64_t>(std::min(g.useful_rows, g.m * g.repeat))
                                           : static_cast<uint64_t>(g.m) * static_cast<uint64_t>(g.repeat);
  if (__builtin_mul_overflow(rows * g.k, static_cast<uint64_t>(g.n), &info.useful_macs))
    throw InputError(fmt::format("{}: layer '{}': MAC count overflows 64 bits", g.source, g.name));
  return info;
}

LayerInfo vector_layer_info(const VectorWork& v) {
  return {v.name, v.op.rows, 1, v.op.cols, v.op.dtype, v.repeat, 0, v.source, LayerKind::vector};
}

}  // namespace compile_detail

// Rejects a workload whose compute alone overflows the 64-bit simulated-time range, before it
// is tiled (the tiles would take as long): each GEMM whole on one MXU, all in a row.
static void check_cycle_range(const ChipConfig& config, const Workload& workload) {
  uint64_t total = 0;
  for (const Gemm& g : workload.gemms) {
    uint64_t cycles = 0;
    try {
      cycles = dataflow_of(config.mxu.dataflow)
                   .cycles(config.mxu.shape(compile_detail::operands_of(config, g).compute), config.mxu.convention, {g.m, g.k, g.n});
    } catch (const std::overflow_error&) {
      throw InputError(fmt::format("{}: layer '{}': its cycle count overflows 64 bits", g.source, g.name));
    }
    uint64_t all = 0;
    if (__builtin_mul_overflow(cycles, static_cast<uint64_t>(g.repeat), &all) ||
        __builtin_add_overflow(total, all, &total) || total > kMaxCycles)
      throw InputError(fmt::format("{}: layer '{}': the workload's total cycle count overflows "
                                   "the 64-bit simulated-time range",
                                   g.source, g.name));
  }
}

}  // namespace systolic

namespace systolic {

Program compile(const ChipConfig& config, const Workload& workload, int chip, const Budget& budget) {
  return compile_detail::compile_checked(config, workload, chip, budget, nullptr);
}

namespace compile_detail {

Program compile_checked(const ChipConfig& config, const Workload& workload, int chip, const Budget& budget,
                        CollectiveObserver* observer) {
  // One lowering for both memory modes: memory.ideal changes how the chip times the program's
  // transfers (HbmTiming::ideal), never the program, so ideal <= real by construction.
  require_hbm_fits(config, workload, chip);
  check_cycle_range(config, workload);
  check_instructions(estimate_instructions(config, workload), budget,
                     workload.path.empty() ? workload.name : workload.path);
  return compile_tiled(config, workload, chip, observer);
}

}  // namespace compile_detail

}  // namespace systolic
