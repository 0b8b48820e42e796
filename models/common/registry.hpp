#pragma once
// A registry of the implementations of one interface (Ramulator 2 style): each lives in its own
// .cpp file and registers itself there, with a name, a one-line description and an instance,
// through a file-scope `Registration` object. Nothing else names it: lookup, --help text,
// error messages with did-you-mean, docs and the tests that iterate every implementation all
// walk the registry, so adding one is one new file plus its test.
//
//   // sim/packing/packers/best_fit.cpp
//   class BestFit final : public BinPacker { ... };
//   const Registration<BinPacker> registration{"best-fit", 40, "...", BestFit{}, {"bf", "best_fit"}};
//
// Linking: a registration is a static object in a file nobody references by name, and a static
// library member nobody references is dropped by the linker, registration and all. The
// CMakeLists links systolic_core into every consumer with $<LINK_LIBRARY:WHOLE_ARCHIVE,...>
// so every member stays; tests/unit/test_registries.cpp counts each registry against the
// files of its folder, so a file that failed to register (or was dropped) fails a test.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/common/error.hpp"
#include "models/common/suggest.hpp"

namespace systolic {

template <class Interface>
class Registry {
 public:
  struct Entry {
    std::string name;
    // Where it stands in lists (help, docs, error messages), lowest first; registration
    // order depends on the link order, so the lists sort by this, then by name.
    int rank = 0;
    std::string description;  // one line, for help text and docs
    std::shared_ptr<const Interface> impl;
    std::vector<std::string> aliases{};  // other names lookup accepts (not listed as choices)
  };

  // The one registry of this interface (constructed on first use, so registrations from
  // other files' static initialisers find it whatever the initialisation order).
  static Registry& instance() {
    static Registry registry;
    return registry;
  }

  void add(Entry entry) {
    std::vector<std::string> names{entry.name};
    names.insert(names.end(), entry.aliases.begin(), entry.aliases.end());
    for (const auto& name : names)
      if (find(name)) throw std::logic_error("registry: '" + name + "' registered twice");
    entries_.push_back(std::move(entry));
    std::stable_sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
      return a.rank != b.rank ? a.rank < b.rank : a.name < b.name;
    });
  }

  // By name or alias; nullptr when unknown.
  const Entry* find(std::string_view name) const {
    for (const Entry& e : entries_)
      if (e.name == name || std::find(e.aliases.begin(), e.aliases.end(), name) != e.aliases.end()) return &e;
    return nullptr;
  }

  // By name or alias. Throws InputError "<what> 'x': expected one of a, b, c (did you mean
  // 'b'?)", `what` naming where the name came from (a key, a flag, a file).
  const Interface& get(std::string_view name, const std::string& what) const {
    if (const Entry* e = find(name)) return *e->impl;
    throw InputError(what + " '" + std::string(name) + "': expected one of " + choices() +
                     did_you_mean(name, names()));
  }

  const std::vector<Entry>& entries() const { return entries_; }

  // Every name, in list order (no aliases).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const Entry& e : entries_) out.push_back(e.name);
    return out;
  }

  // "a (what a is), b (what b is)": names with their descriptions, for docs.
  std::string described() const {
    std::string s;
    for (const Entry& e : entries_) s += (s.empty() ? "" : ", ") + e.name + " (" + e.description + ")";
    return s;
  }

  // "a, b, c" (or joined by `separator`).
  std::string choices(std::string_view separator = ", ") const {
    std::string s;
    for (const Entry& e : entries_) s += (s.empty() ? "" : std::string(separator)) + e.name;
    return s;
  }

 private:
  std::vector<Entry> entries_;
};

// A file-scope object of this type registers one implementation when the program starts.
// (A const object at namespace scope has internal linkage: each file's `registration` is its own.)
template <class Interface>
struct Registration {
  explicit Registration(typename Registry<Interface>::Entry entry) {
    Registry<Interface>::instance().add(std::move(entry));
  }
  // The implementation `impl` (an Interface, held from now on) as `name`.
  template <class Impl>
  Registration(std::string name, int rank, std::string description, Impl impl, std::vector<std::string> aliases = {})
      : Registration(typename Registry<Interface>::Entry{std::move(name), rank, std::move(description),
                                                         std::make_shared<const Impl>(std::move(impl)),
                                                         std::move(aliases)}) {}
};

}  // namespace systolic
