#pragma once
// One name table per enum: the only place an enum value meets its text. Parsing, the names a
// report prints, the choices an error message and --help list, docs/config.md and did-you-mean
// all read the table, so a value added to an enum and its table is known everywhere at once.
//
// Tables are constexpr and list the enum's values in declaration order: name_table() refuses
// any other order, which, for a table initialising a constexpr variable, is a compile error.
// So name() is an index and no table can miss a value in the middle.
#include <array>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/common/suggest.hpp"

namespace systolic {

template <class E, size_t N>
class NameTable {
 public:
  using Entry = std::pair<E, std::string_view>;

  constexpr explicit NameTable(std::array<Entry, N> entries) : entries_(entries) {}

  // True when entry i holds the enum value i: what lets name() index the table.
  constexpr bool dense() const {
    for (size_t i = 0; i < N; ++i)
      if (static_cast<size_t>(entries_[i].first) != i) return false;
    return true;
  }

  constexpr std::string_view name(E value) const {
    const auto i = static_cast<size_t>(value);
    return i < N ? entries_[i].second : std::string_view("?");
  }

  // Exact match; nullopt for anything else (callers report it with choices() and suggest()).
  constexpr std::optional<E> parse(std::string_view text) const {
    for (const auto& [value, name] : entries_)
      if (name == text) return value;
    return std::nullopt;
  }

  // Every name, in table order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : entries_) out.emplace_back(entry.second);
    return out;
  }

  // "a, b, c" (or joined by `separator`), for error messages, help and docs.
  std::string choices(std::string_view separator = ", ") const {
    std::string s;
    for (const auto& entry : entries_) {
      if (!s.empty()) s += separator;
      s += entry.second;
    }
    return s;
  }

  // " (did you mean 'x'?)" when `text` is a plausible typo of a name, else "".
  std::string suggest(std::string_view text) const { return did_you_mean(text, names()); }

  constexpr const std::array<Entry, N>& entries() const { return entries_; }
  static constexpr size_t size() { return N; }

 private:
  std::array<Entry, N> entries_;
};

// `inline constexpr auto kFooNames = name_table<Foo>({{Foo::a, "a"}, {Foo::b, "b"}});`
template <class E, size_t N, size_t... I>
constexpr NameTable<E, N> name_table(const std::pair<E, std::string_view> (&entries)[N], std::index_sequence<I...>) {
  const NameTable<E, N> table(std::array<std::pair<E, std::string_view>, N>{{entries[I]...}});
  if (!table.dense()) throw std::logic_error("name_table: entries not in the enum's order");
  return table;
}
template <class E, size_t N>
constexpr NameTable<E, N> name_table(const std::pair<E, std::string_view> (&entries)[N]) {
  return name_table(entries, std::make_index_sequence<N>());
}

}  // namespace systolic
