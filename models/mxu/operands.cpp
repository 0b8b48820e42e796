#include "models/mxu/operands.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace systolic {

std::variant<MxuOperands, std::string> mxu_operands(DType a, DType b) {
  MxuOperands out{a, b, a, false};
  if (!dtype_on_mxu(a))
    return fmt::format("{} is a weight storage type (two values per byte); activations must be one of {}",
                       kDTypeNames.name(a), fmt::join(activation_types(), ", "));
  if (a == b) return out;
  const bool a_int = !dtype_is_float(a), b_int = !dtype_is_float(b);
  if (a_int) {  // int8 activations: integer weights only, accumulated in int32
    if (b == DType::int4) return MxuOperands{a, b, a, true};
    return fmt::format("int8 activations multiply int8 or int4 weights (int32 accumulation), not {}",
                       kDTypeNames.name(b));
  }
  if (b_int) {  // weight-only quantisation: dequantised to the activations' float type
    if (dtype_is_fp8(a))
      return fmt::format("{} weights need 16- or 32-bit float activations to be dequantised into, not {}",
                         kDTypeNames.name(b), kDTypeNames.name(a));
    return MxuOperands{a, b, a, true};
  }
  if (dtype_bits(a) != dtype_bits(b)) return MxuOperands{a, b, dtype_bits(a) > dtype_bits(b) ? a : b, false};
  if (dtype_is_fp8(a)) return MxuOperands{a, b, DType::fp8_e4m3, false};
  return fmt::format("{} x {}: two different 16-bit float formats; convert one (no MXU multiplies them directly)",
                     kDTypeNames.name(a), kDTypeNames.name(b));
}

std::vector<std::string> b_types_for(DType a) {
  std::vector<std::string> out;
  for (size_t t = 0; t < kDTypes; ++t)
    if (std::holds_alternative<MxuOperands>(mxu_operands(a, static_cast<DType>(t))))
      out.emplace_back(kDTypeNames.name(static_cast<DType>(t)));
  return out;
}

std::vector<std::string> activation_types() {
  std::vector<std::string> out;
  for (size_t t = 0; t < kMxuDTypes; ++t) out.emplace_back(kDTypeNames.name(static_cast<DType>(t)));
  return out;
}

}  // namespace systolic
