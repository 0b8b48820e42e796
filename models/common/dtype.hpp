#pragma once
// Operand data types of the MXU and their storage widths.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace systolic {

enum class DType { int8, fp8_e4m3, fp8_e5m2, bf16, fp16, fp32 };

std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);
int dtype_bytes(DType t);
bool dtype_is_float(DType t);
// "int8, fp8_e4m3, ..." for error messages and docs.
std::string dtype_choices();

}  // namespace systolic
