#include "sim/compile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "models/common/clock.hpp"
#include "sim/compile_collective.hpp"
#include "sim/compile_detail.hpp"
#include "sim/error.hpp"

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
                                 g.source, g.name, dtype_name(a), dtype_name(b), *why, dtype_name(config.mxu.dtype)));
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
  return {v.name, v.op.rows, 1, v.op.cols, v.op.dtype, v.repeat, 0, v.source, "vector"};
}

}  // namespace compile_detail

using compile_detail::fold_share;

// Ideal memory: one matmul per MXU per GEMM instance, operands free; a step starts when the
// previous one has finished on every MXU.
static Program compile_ideal(const ChipConfig& config, const Workload& workload, int chip) {
  Program program;
  enum : int { kMxuDone = 0, kVpuDone = 1 };
  program.semaphores = {"mxu_done", "vpu_done"};
  uint64_t signalled[2] = {0, 0};  // signals emitted so far per semaphore
  const ArrayShape array = config.mxu.shape();
  for (int64_t i = 0; i < config.mxu.count; ++i)
    program.streams.push_back({{EngineKind::mxu, static_cast<int>(i)}, {}});
  program.streams.push_back({{EngineKind::vpu, 0}, {}});
  Stream& vpu = program.streams.back();

  compile_detail::Producer input;  // the entry whose results the next one reads
  uint64_t cycle_bound = 0;        // ideal-memory estimate, to reject layers that overflow time
  // Vector work runs on the VPU after the GEMM producing its input, before the next one.
  const auto emit_vector = [&](const VectorWork& v) {
    const int layer = static_cast<int>(program.layers.size());
    program.layers.push_back(compile_detail::vector_layer_info(v));
    const compile_detail::Producer produced{kVpuDone, signalled[kVpuDone], 1, v.repeat, {}};
    for (int64_t r = 0; r < v.repeat; ++r) {
      Instruction instr{v.op, layer, {}, {kVpuDone}};
      input.add_wait(instr, r, v.repeat);
      vpu.instructions.push_back(std::move(instr));
      ++signalled[kVpuDone];
    }
    input = produced;
  };
  compile_detail::CollectiveTarget collectives{
      program, config, chip,
      [&](const std::string& name) {
        program.semaphores.push_back(name);
        return static_cast<int>(program.semaphores.size()) - 1;
      },
      std::nullopt};
  compile_detail::CollectiveJoins joins;
  size_t gemms_done = 0;
  const auto emit_collective = [&](const CollectiveWork& c) {
    input = joins.after(c, gemms_done, input, compile_detail::emit_collective(collectives, c, input));
  };
  compile_detail::for_side_work_after(workload, 0, emit_vector, emit_collective);
  for (const Gemm& g : workload.gemms) {
    joins.before_gemm(gemms_done, input);
    const int layer = static_cast<int>(program.layers.size());
    const LayerInfo info = compile_detail::layer_info(config, g);
    program.layers.push_back(info);

    const int64_t col_folds = fold_count(array, {g.m, g.k, g.n}).col_folds;
    const int64_t busy_mxus = std::min(config.mxu.count, col_folds);
    const compile_detail::Producer produced{kMxuDone, signalled[kMxuDone], static_cast<uint64_t>(busy_mxus),
                                            g.repeat, {}};
    for (int64_t r = 0; r < g.repeat; ++r) {
      uint64_t step_cycles = 0;
      for (int64_t i = 0; i < busy_mxus; ++i) {
        const auto [first, last] = fold_share(col_folds, busy_mxus, i);
        const int64_t n0 = first * array.cols, n = std::min(last * array.cols, g.n) - n0;
        MatmulOp op{g.m, g.k, n, n0, info.dtype};
        try {
          step_cycles = std::max(step_cycles, matmul_cycles(array, config.mxu.convention, {g.m, g.k, n}));
        } catch (const std::overflow_error&) {
          throw InputError(fmt::format("{}: layer '{}': its cycle count overflows 64 bits",
                                       g.source, g.name));
        }
        Instruction instr{op, layer, {}, {kMxuDone}};
        input.add_wait(instr, r, g.repeat);
        program.streams[static_cast<size_t>(i)].instructions.push_back(std::move(instr));
        ++signalled[kMxuDone];
      }
      if (__builtin_add_overflow(cycle_bound, step_cycles, &cycle_bound) || cycle_bound > kMaxCycles)
        throw InputError(fmt::format("{}: layer '{}': the workload's total cycle count overflows "
                                     "the 64-bit simulated-time range",
                                     g.source, g.name));
    }
    input = produced;
    compile_detail::for_side_work_after(workload, ++gemms_done, emit_vector, emit_collective);
  }
  return program;
}

}  // namespace systolic

namespace systolic {

Program compile(const ChipConfig& config, const Workload& workload, int chip) {
  return config.memory.ideal ? compile_ideal(config, workload, chip)
                             : compile_detail::compile_tiled(config, workload, chip);
}

std::vector<Program> compile_system(const ChipConfig& config, const std::vector<Workload>& workloads) {
  std::vector<Program> programs;
  for (size_t i = 0; i < workloads.size(); ++i) programs.push_back(compile(config, workloads[i], static_cast<int>(i)));
  return programs;
}

}  // namespace systolic
