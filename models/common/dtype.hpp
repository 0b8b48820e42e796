#pragma once
// Operand data types of the MXU and their storage widths. kDTypeNames drives names, parsing
// and the choices error messages list; one table in dtype.cpp the widths.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/names.hpp"

namespace systolic {

// The first kMxuDTypes are types the MXU multiplies; int4 is a storage type only (weights,
// two per byte), dequantised on the VPU before the MXU reads it (docs/precision.md).
enum class DType { int8, fp8_e4m3, fp8_e5m2, bf16, fp16, fp32, int4 };
inline constexpr size_t kDTypes = 7;
inline constexpr size_t kMxuDTypes = 6;
inline constexpr auto kDTypeNames = name_table<DType>(
    {{DType::int8, "int8"}, {DType::fp8_e4m3, "fp8_e4m3"}, {DType::fp8_e5m2, "fp8_e5m2"}, {DType::bf16, "bf16"},
     {DType::fp16, "fp16"}, {DType::fp32, "fp32"}, {DType::int4, "int4"}});
static_assert(kDTypeNames.size() == kDTypes);
int dtype_bits(DType t);
// Bytes `elements` values occupy, packed (int4: two per byte), rounded up to whole bytes.
uint64_t dtype_storage_bytes(DType t, uint64_t elements);
bool dtype_is_float(DType t);
bool dtype_is_fp8(DType t);
bool dtype_on_mxu(DType t);  // false for int4

}  // namespace systolic
