#pragma once
// Builders for ConfigKey: one per kind of value. Each parses a YAML scalar strictly (no
// silent conversions: "12abc" is not an integer, "yes" is not a boolean) and range-checks it.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/common/names.hpp"
#include "models/common/registry.hpp"
#include "models/common/suggest.hpp"
#include "sim/common/scalars.hpp"
#include "sim/config/schema.hpp"

// The accessor a key builder takes, for the ChipConfig member at a path:
// CONFIG_FIELD(dma.engine.engines) is [](auto& c) -> auto& { return c.dma.engine.engines; }.
// CONFIG_KEY(mxu.rows), for a key named after its member, is both arguments: "mxu.rows",
// CONFIG_FIELD(mxu.rows). Macros because a member path can be neither passed to a function
// nor turned into its name by one.
#define CONFIG_FIELD(member) \
  [](auto& c) -> auto& { return c.member; }
#define CONFIG_KEY(member) #member, CONFIG_FIELD(member)

namespace systolic::config_values {

using scalars::expected;
using scalars::parse_bytes;
using scalars::parse_integer;
using scalars::parse_number;
using scalars::scalar_text;

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
            const int64_t v = parse_integer(text, kind);
            if (v < lo || v > hi) expected(kind, text);
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
            // Compared as the double it is stored as: "0.001" as a long double is below the
            // double bound 0.001 and would be refused at its own documented limit.
            const auto v = static_cast<double>(parse_number(text, kind));
            if (v < lo || v > hi) expected(kind, text);
            ref(c) = v;
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

// One of the names `choices` lists: an enum's name table, or a subset of it
// (NameTable::entries()), e.g. the dtypes the MXU multiplies.
template <class Ref, class Entries>
ConfigKey choice_key(std::string path, Ref ref, const Entries& choices, std::string doc) {
  using E = std::decay_t<decltype(choices.begin()->first)>;
  std::vector<std::pair<E, std::string>> list;
  list.reserve(choices.size());
  for (const auto& [value, name] : choices) list.emplace_back(value, std::string(name));
  std::vector<std::string> names;
  names.reserve(list.size());
  for (const auto& entry : list) names.push_back(entry.second);
  const std::string kind = "one of " + fmt::format("{}", fmt::join(names, ", "));
  return {std::move(path), kind, "", std::move(doc),
          [ref, list, names, kind](ChipConfig& c, const YAML::Node& n) {
            const std::string text = scalar_text(n);
            for (const auto& [value, name] : list)
              if (name == text) return void(ref(c) = value);
            expected(kind, text, names);
          },
          [ref, list](const ChipConfig& c) {
            for (const auto& [value, name] : list)
              if (value == ref(c)) return nlohmann::ordered_json(name);
            return nlohmann::ordered_json();
          }};
}

template <class Ref, class E, size_t N>
ConfigKey enum_key(std::string path, Ref ref, const NameTable<E, N>& names, std::string doc) {
  return choice_key(std::move(path), ref, names.entries(), std::move(doc));
}

// The name of an implementation registered in `Registry<Interface>` (its primary name, not an
// alias), kept as text: the registry resolves it where it is used.
template <class Interface, class Ref>
ConfigKey registry_key(std::string path, Ref ref, std::string doc) {
  const std::vector<std::string> names = Registry<Interface>::instance().names();
  // Implementations register during static initialisation; a schema built before that (a
  // static object calling config_schema()) would accept nothing.
  if (names.empty()) throw std::logic_error(path + ": registry used before its implementations registered");
  const std::string kind = "one of " + Registry<Interface>::instance().choices();
  return {std::move(path), kind, "", std::move(doc),
          [ref, names, kind](ChipConfig& c, const YAML::Node& n) {
            const std::string text = scalar_text(n);
            if (std::find(names.begin(), names.end(), text) == names.end()) expected(kind, text, names);
            ref(c) = text;
          },
          [ref](const ChipConfig& c) { return nlohmann::ordered_json(ref(c)); }};
}

}  // namespace systolic::config_values
