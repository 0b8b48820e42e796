#pragma once
// The vector unit's instruction: what a VPU op names (its kind, shape and types). The VPU
// model (models/vpu/vpu_core.hpp) times it.
#include <cstdint>
#include <optional>

#include "models/common/dtype.hpp"
#include "models/common/names.hpp"

namespace systolic {

enum class VectorKind { add, mul, relu, gelu, silu, rmsnorm, layernorm, softmax, rope, dequantize };

inline constexpr auto kVectorKindNames = name_table<VectorKind>(
    {{VectorKind::add, "add"}, {VectorKind::mul, "mul"}, {VectorKind::relu, "relu"}, {VectorKind::gelu, "gelu"},
     {VectorKind::silu, "silu"}, {VectorKind::rmsnorm, "rmsnorm"}, {VectorKind::layernorm, "layernorm"},
     {VectorKind::softmax, "softmax"}, {VectorKind::rope, "rope"}, {VectorKind::dequantize, "dequantize"}});

// One VPU instruction: `kind` over a [rows, cols] tensor. Row-wise kinds (rmsnorm,
// layernorm, softmax) reduce along cols; rope rotates pairs along cols.
struct VpuOp {
  VectorKind kind = VectorKind::add;
  int64_t rows = 0;
  int64_t cols = 0;
  DType dtype = DType::bf16;  // storage type of the operands in VMEM (sizes traffic only)
  std::optional<DType> to_dtype{};  // dequantize: the float type it writes (unset: dtype)
  bool operator==(const VpuOp& o) const {
    return kind == o.kind && rows == o.rows && cols == o.cols && dtype == o.dtype && to_dtype == o.to_dtype;
  }
};

}  // namespace systolic
