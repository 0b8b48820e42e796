#pragma once
// Operand data types of the MXU and their storage widths. One table (dtype.cpp) drives names,
// parsing, the choices error messages list, widths and which types the MXU multiplies.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace systolic {

// The first kMxuDTypes are types the MXU multiplies; int4 is a storage type only (weights,
// two per byte), dequantised on the VPU before the MXU reads it (docs/precision.md).
enum class DType { int8, fp8_e4m3, fp8_e5m2, bf16, fp16, fp32, int4 };
inline constexpr size_t kDTypes = 7;
inline constexpr size_t kMxuDTypes = 6;

std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);
int dtype_bits(DType t);
// Bytes `elements` values occupy, packed (int4: two per byte), rounded up to whole bytes.
uint64_t dtype_storage_bytes(DType t, uint64_t elements);
bool dtype_is_float(DType t);
bool dtype_is_fp8(DType t);
bool dtype_on_mxu(DType t);  // false for int4
// Every name in table order, and "int8, fp8_e4m3, ..." for error messages and docs.
std::vector<std::string> dtype_names();
std::string dtype_choices();

}  // namespace systolic
