#pragma once
// Strict parsing of one YAML scalar (no silent conversions: "12abc" is not a number): the
// config keys (sim/config/values.hpp) and the workload readers read numbers and byte sizes
// the same way. Errors are std::invalid_argument("expected <kind>, got '<text>'"); the caller
// adds the file and key.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/common/suggest.hpp"

namespace systolic::scalars {

inline std::string scalar_text(const YAML::Node& node) {
  if (!node.IsScalar()) throw std::invalid_argument("expected a single value, got a list or map");
  return node.Scalar();
}

// `names`: the choices, for a did-you-mean when `got` is a plausible typo of one.
[[noreturn]] inline void expected(const std::string& kind, const std::string& got,
                                  const std::vector<std::string>& names = {}) {
  throw std::invalid_argument(fmt::format("expected {}, got '{}'{}", kind, got, did_you_mean(got, names)));
}

// A finite decimal number ("1.5", "2e9"); strtold alone would also take "0x10", "inf" and
// "nan", so only digits, a sign, a point and an exponent are let through to it.
inline long double parse_number(const std::string& text, const std::string& kind) {
  if (text.empty() || text.find_first_not_of("0123456789+-.eE") != std::string::npos) expected(kind, text);
  char* end = nullptr;
  const long double v = std::strtold(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(static_cast<double>(v))) expected(kind, text);
  return v;
}

// A decimal integer, all of the text, within int64: "1e3", "128.0", "0x80" and "010" (octal
// in YAML 1.1) are refused rather than read as 1000, 128, 128 and 8 or 10.
inline int64_t parse_integer(const std::string& text, const std::string& kind) {
  const size_t sign = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
  const char* first = text.data() + (sign && text[0] == '+' ? 1 : 0);
  const char* last = text.data() + text.size();
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(first, last, v);
  if (text.size() == sign || text[sign] < '0' || text[sign] > '9' || (text.size() > sign + 1 && text[sign] == '0') ||
      ec != std::errc() || end != last)
    expected(kind, text);
  return v;
}

// Bytes: a plain integer, or a number with a unit: B, KiB, MiB, GiB, TiB (binary) or
// kB, MB, GB, TB (decimal); "16 MiB", "512KiB", "1.5 GiB" (must come to whole bytes).
inline uint64_t parse_bytes(const std::string& text, const std::string& kind) {
  static const std::vector<std::pair<std::string, long double>> units = {
      {"TiB", 1099511627776.0L}, {"GiB", 1073741824.0L}, {"MiB", 1048576.0L}, {"KiB", 1024.0L},
      {"TB", 1e12L}, {"GB", 1e9L}, {"MB", 1e6L}, {"kB", 1e3L}, {"B", 1.0L}};
  std::string number = text;
  long double scale = 1;
  for (const auto& [unit, factor] : units)
    if (text.size() > unit.size() && text.compare(text.size() - unit.size(), unit.size(), unit) == 0) {
      number = text.substr(0, text.size() - unit.size());
      while (!number.empty() && number.back() == ' ') number.pop_back();
      scale = factor;
      break;
    }
  const long double v = parse_number(number, kind) * scale;
  if (v < 0 || v != std::floor(v) || v > 1.8e19L) expected(kind, text);
  return static_cast<uint64_t>(v);
}

}  // namespace systolic::scalars
