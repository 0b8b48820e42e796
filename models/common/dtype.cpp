#include "models/common/dtype.hpp"

#include <array>

namespace systolic {
namespace {
struct Info {
  DType type;
  std::string_view name;
  int bytes;
  bool is_float;
};
constexpr std::array<Info, 6> kInfo{{
    {DType::int8, "int8", 1, false},
    {DType::fp8_e4m3, "fp8_e4m3", 1, true},
    {DType::fp8_e5m2, "fp8_e5m2", 1, true},
    {DType::bf16, "bf16", 2, true},
    {DType::fp16, "fp16", 2, true},
    {DType::fp32, "fp32", 4, true},
}};
const Info& info(DType t) { return kInfo[static_cast<size_t>(t)]; }
}  // namespace

std::string_view dtype_name(DType t) { return info(t).name; }
int dtype_bytes(DType t) { return info(t).bytes; }
bool dtype_is_float(DType t) { return info(t).is_float; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& i : kInfo)
    if (i.name == name) return i.type;
  return std::nullopt;
}

std::string dtype_choices() {
  std::string s;
  for (const auto& i : kInfo) {
    if (!s.empty()) s += ", ";
    s += i.name;
  }
  return s;
}

}  // namespace systolic
