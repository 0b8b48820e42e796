#include "sim/packing/detail.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "models/common/error.hpp"

namespace systolic::packing::detail {

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    throw InputError(fmt::format("{} overflows a 64-bit count; use fewer or shorter requests", what));
  return r;
}

int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw InputError(fmt::format("{} overflows a 64-bit count; use fewer or shorter requests", what));
  return r;
}

}  // namespace systolic::packing::detail
