#include "models/vpu/vpu_core.hpp"

#include <array>
#include <stdexcept>

#include "models/common/divide.hpp"

namespace systolic {
namespace {

std::optional<ConfigIssue> check_range(const char* field, int64_t value, int64_t lo, int64_t hi,
                                          const char* expected) {
  if (value >= lo && value <= hi) return std::nullopt;
  return ConfigIssue{field, expected, std::to_string(value)};
}

int64_t ceil_log2(int64_t v) {
  int64_t steps = 0;
  while ((int64_t{1} << steps) < v) ++steps;
  return steps;
}

}  // namespace

std::optional<ConfigIssue> VpuConfig::validate() const {
  if (auto bad = check_range("vpu.lanes", lanes, 1, 65536, "an integer in [1, 65536]")) return bad;
  if (auto bad = check_range("vpu.sublanes", sublanes, 1, 1024, "an integer in [1, 1024]"))
    return bad;
  if (auto bad = check_range("vpu.ops_per_cycle", ops_per_cycle, 1, 64, "an integer in [1, 64]"))
    return bad;
  if (auto bad = check_range("vpu.transcendental_ops", transcendental_ops, 1, 1024,
                             "an integer in [1, 1024]"))
    return bad;
  if (auto bad = check_range("vpu.latency_cycles", latency_cycles, 0, 1000000,
                             "an integer in [0, 1000000]"))
    return bad;
  return std::nullopt;
}

VectorCost vector_cost(const VpuConfig& config, VectorKind kind) {
  const int64_t t = config.transcendental_ops;
  switch (kind) {
    case VectorKind::add:
    case VectorKind::mul:
    case VectorKind::relu:
      return {1, 0, 0};
    case VectorKind::gelu:  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      return {8 + t, 0, 0};
    case VectorKind::silu:  // x / (1 + exp(-x))
      return {3 + 2 * t, 0, 0};
    case VectorKind::rmsnorm:  // x * rsqrt(mean(x^2) + eps) * gamma
      return {4, 1, 2 + t};
    case VectorKind::layernorm:  // (x - mean) * rsqrt(var + eps) * gamma + beta
      return {7, 2, 3 + t};
    case VectorKind::softmax:  // exp(x - max) / sum(exp(x - max))
      return {4 + t, 2, t};
    case VectorKind::rope:  // x * cos + rotate_half(x) * sin
      return {4, 0, 0};
    case VectorKind::dequantize:  // float(q) * scale (the int -> fp32 unpack is a load)
      return {1, 0, 0};
  }
  throw std::invalid_argument("unknown vector kind");
}

uint64_t vpu_vreg_ops(const VpuConfig& config, VectorKind kind, uint64_t rows, uint64_t cols) {
  validated(config);
  if (rows == 0 || cols == 0) return 0;
  const VectorCost c = vector_cost(config, kind);
  using u128 = unsigned __int128;
  const u128 groups = ceil_div(rows, static_cast<uint64_t>(config.sublanes));
  const u128 vregs_per_row = ceil_div(cols, static_cast<uint64_t>(config.lanes));
  const u128 per_group = vregs_per_row * static_cast<uint64_t>(c.elem_ops) +
                         static_cast<u128>(c.reductions) * 2 * ceil_log2(config.lanes) +
                         static_cast<uint64_t>(c.row_ops);
  const u128 total = groups * per_group;
  if (total > static_cast<u128>(UINT64_MAX))
    throw std::overflow_error("vpu: vreg operation count exceeds 64 bits");
  return static_cast<uint64_t>(total);
}

uint64_t vpu_cycles(const VpuConfig& config, VectorKind kind, uint64_t rows, uint64_t cols) {
  const uint64_t ops = vpu_vreg_ops(config, kind, rows, cols);
  if (ops == 0) return 0;
  return static_cast<uint64_t>(config.latency_cycles) +
         ceil_div(ops, static_cast<uint64_t>(config.ops_per_cycle));
}

uint64_t vpu_cycles(const VpuConfig& config, const VpuOp& op) {
  if (op.rows < 0 || op.cols < 0)
    throw std::invalid_argument("vpu: negative tensor size " + std::to_string(op.rows) + "x" +
                                std::to_string(op.cols));
  return vpu_cycles(config, op.kind, static_cast<uint64_t>(op.rows),
                    static_cast<uint64_t>(op.cols));
}

VpuTraffic vpu_traffic(const VpuOp& op) {
  if (op.rows <= 0 || op.cols <= 0) return {};
  const uint64_t elements = static_cast<uint64_t>(op.rows) * static_cast<uint64_t>(op.cols);
  const uint64_t bytes = dtype_storage_bytes(op.dtype, elements);
  // Dequantise reads the packed integers and writes the float type the MXU reads.
  if (op.kind == VectorKind::dequantize) return {bytes, dtype_storage_bytes(op.to_dtype.value_or(op.dtype), elements)};
  const bool binary = op.kind == VectorKind::add || op.kind == VectorKind::mul;
  return {binary ? 2 * bytes : bytes, bytes};
}

}  // namespace systolic
