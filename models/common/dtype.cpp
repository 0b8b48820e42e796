#include "models/common/dtype.hpp"

#include <array>

namespace systolic {
namespace {
struct Info {
  DType type;
  int bits;
  bool is_float;
};
// In kDTypeNames' order (the enum's).
constexpr std::array<Info, kDTypes> kInfo{{
    {DType::int8, 8, false},
    {DType::fp8_e4m3, 8, true},
    {DType::fp8_e5m2, 8, true},
    {DType::bf16, 16, true},
    {DType::fp16, 16, true},
    {DType::fp32, 32, true},
    {DType::int4, 4, false},
}};
const Info& info(DType t) { return kInfo[static_cast<size_t>(t)]; }
}  // namespace

int dtype_bits(DType t) { return info(t).bits; }
bool dtype_is_float(DType t) { return info(t).is_float; }
bool dtype_is_fp8(DType t) { return t == DType::fp8_e4m3 || t == DType::fp8_e5m2; }
bool dtype_on_mxu(DType t) { return static_cast<size_t>(t) < kMxuDTypes; }

uint64_t dtype_storage_bytes(DType t, uint64_t elements) {
  const uint64_t bits = static_cast<uint64_t>(info(t).bits);
  // elements * bits / 8 without overflowing for counts near 2^64 / bits.
  return elements / 8 * bits + (elements % 8 * bits + 7) / 8;
}

}  // namespace systolic
