#pragma once
// Builders for ConfigKey: one per kind of value. Each parses a YAML scalar strictly (no
// silent conversions: "12abc" is not an integer, "yes" is not a boolean) and range-checks it.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/schema.hpp"

namespace systolic::config_values {

inline std::string scalar_text(const YAML::Node& node) {
  if (!node.IsScalar()) throw std::invalid_argument("expected a single value, got a list or map");
  return node.Scalar();
}

[[noreturn]] inline void expected(const std::string& kind, const std::string& got) {
  throw std::invalid_argument(fmt::format("expected {}, got '{}'", kind, got));
}

inline long double parse_number(const std::string& text, const std::string& kind) {
  if (text.empty()) expected(kind, text);
  char* end = nullptr;
  const long double v = std::strtold(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(static_cast<double>(v))) expected(kind, text);
  return v;
}

template <class Ref>
ConfigKey string_key(std::string path, Ref ref, std::string doc) {
  return {std::move(path), "string", "", std::move(doc),
          [ref](ChipConfig& c, const YAML::Node& n) { ref(c) = scalar_text(n); },
          [ref](const ChipConfig& c) { return nlohmann::ordered_json(ref(c)); }};
}

template <class Ref>
ConfigKey integer_key(std::string path, Ref ref, int64_t lo, int64_t hi, std::string unit,
                      std::string doc) {
  const std::string kind = hi == std::numeric_limits<int64_t>::max()
                               ? fmt::format("an integer >= {}", lo)
                               : fmt::format("an integer in [{}, {}]", lo, hi);
  return {std::move(path), kind, std::move(unit), std::move(doc),
          [ref, lo, hi, kind](ChipConfig& c, const YAML::Node& n) {
            const std::string text = scalar_text(n);
            const long double v = parse_number(text, kind);
            if (v != std::floor(v) || v < lo || v > hi) expected(kind, text);
            using T = std::decay_t<decltype(ref(c))>;
            ref(c) = static_cast<T>(v);
          },
          [ref](const ChipConfig& c) { return nlohmann::ordered_json(ref(c)); }};
}

template <class Ref>
ConfigKey number_key(std::string path, Ref ref, double lo, double hi, std::string unit,
                     std::string doc) {
  const std::string kind = fmt::format("a number in [{}, {}]", lo, hi);
  return {std::move(path), kind, std::move(unit), std::move(doc),
          [ref, lo, hi, kind](ChipConfig& c, const YAML::Node& n) {
            const std::string text = scalar_text(n);
            const long double v = parse_number(text, kind);
            if (v < lo || v > hi) expected(kind, text);
            ref(c) = static_cast<double>(v);
          },
          [ref](const ChipConfig& c) { return nlohmann::ordered_json(ref(c)); }};
}

template <class Ref>
ConfigKey bool_key(std::string path, Ref ref, std::string doc) {
  return {std::move(path), "true or false", "", std::move(doc),
          [ref](ChipConfig& c, const YAML::Node& n) {
            const std::string text = scalar_text(n);
            if (text != "true" && text != "false") expected("true or false", text);
            ref(c) = text == "true";
          },
          [ref](const ChipConfig& c) { return nlohmann::ordered_json(ref(c)); }};
}

// A MAC rate (models/mxu/mxu_timing.hpp): n or 1/n products per PE per cycle, n an integer.
template <class Ref>
ConfigKey mac_rate_key(std::string path, Ref ref, std::string doc) {
  const std::string kind = fmt::format("n or 1/n for an integer n in [1, {}], e.g. 2 or 0.5", kMaxMacRate);
  return {std::move(path), kind, "MACs/PE/cycle", std::move(doc),
          [ref, kind](ChipConfig& c, const YAML::Node& n) {
            const std::string text = scalar_text(n);
            const auto rate = mac_rate_of(static_cast<double>(parse_number(text, kind)));
            if (!rate) expected(kind, text);
            ref(c) = *rate;
          },
          [ref](const ChipConfig& c) { return nlohmann::ordered_json(ref(c).per_cycle()); }};
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

template <class Ref>
ConfigKey size_key(std::string path, Ref ref, uint64_t lo, std::string doc) {
  const std::string kind = fmt::format("a size >= {} B, e.g. 16 MiB", lo);
  return {std::move(path), kind, "bytes", std::move(doc),
          [ref, lo, kind](ChipConfig& c, const YAML::Node& n) {
            const std::string text = scalar_text(n);
            const uint64_t v = parse_bytes(text, kind);
            if (v < lo) expected(kind, text);
            ref(c) = v;
          },
          [ref](const ChipConfig& c) { return nlohmann::ordered_json(ref(c)); }};
}

template <class E, class Ref>
ConfigKey enum_key(std::string path, Ref ref, std::vector<std::pair<std::string, E>> choices,
                   std::string doc) {
  std::string kind = "one of ";
  for (size_t i = 0; i < choices.size(); ++i) kind += (i ? ", " : "") + choices[i].first;
  return {std::move(path), kind, "", std::move(doc),
          [ref, choices, kind](ChipConfig& c, const YAML::Node& n) {
            const std::string text = scalar_text(n);
            for (const auto& [name, value] : choices)
              if (name == text) return void(ref(c) = value);
            expected(kind, text);
          },
          [ref, choices](const ChipConfig& c) {
            for (const auto& [name, value] : choices)
              if (value == ref(c)) return nlohmann::ordered_json(name);
            return nlohmann::ordered_json();
          }};
}

}  // namespace systolic::config_values
