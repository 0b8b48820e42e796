#include "sim/common/cycle_range.hpp"

#include <fmt/format.h>

#include "models/common/error.hpp"

namespace systolic {
namespace {

uint64_t parse_cycle(const std::string& text, const std::string& whole, const std::string& flag) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 18)
    throw InputError(fmt::format("{} '{}': expected A:B with whole cycle numbers, e.g. 0:40", flag, whole));
  return std::stoull(text);
}

}  // namespace

CycleRange parse_cycle_range(const std::string& text, const std::string& flag) {
  const auto colon = text.find(':');
  if (colon == std::string::npos)
    throw InputError(fmt::format("{} '{}': expected A:B (cycles A to B-1), A: or :B", flag, text));
  const std::string a = text.substr(0, colon), b = text.substr(colon + 1);
  CycleRange range;
  if (!a.empty()) range.first = parse_cycle(a, text, flag);
  if (!b.empty()) range.last = parse_cycle(b, text, flag);
  if (range.first && range.last && *range.last <= *range.first)
    throw InputError(fmt::format("{} '{}': B must be greater than A", flag, text));
  return range;
}

}  // namespace systolic
