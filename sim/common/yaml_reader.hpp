#pragma once
// The base of every reader of a user's YAML file (GEMM lists, model files, bucket sets): the
// file's path for its messages, its maps walked key by key with unknown keys refused, and
// strict readers of the values they share. Every problem is an InputError "path:line: ..."
// naming the key and what was expected.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "models/common/names.hpp"
#include "sim/common/input_text.hpp"

namespace systolic {

class YamlReader {
 public:
  explicit YamlReader(std::string path) : path_(std::move(path)) {}

 protected:
  // Calls read(key, value, line) for every key of `map` in file order, each checked first by
  // check_key; returns the keys given. `line` stands for a key yaml-cpp has no position for.
  // (A key given twice was refused when the file was loaded: load_yaml_file, load_yaml_text.)
  template <class Read>
  std::set<std::string> read_map(const YAML::Node& map, int64_t line, const std::vector<std::string>& allowed,
                                 const std::string& where, Read&& read) const {
    std::set<std::string> seen;
    for (const auto& entry : map) {
      const int64_t at = yaml_line(entry.first, line);
      check_key(entry.first, at, allowed, where);
      read(*seen.insert(entry.first.Scalar()).first, entry.second, at);
    }
    return seen;
  }

  // A key must be a scalar ("expected a key (a, b or c), got a list") and one of `allowed`
  // ("unknown key 'k'<where> (did you mean 'x'?); allowed: a, b, c"); `where` places the map
  // (" in a GEMM entry") or is empty.
  void check_key(const YAML::Node& key, int64_t line, const std::vector<std::string>& allowed,
                 const std::string& where) const;
  // Fails "<what>: missing key 'k' (required: a, b, c)" for the first of `required` not in `seen`.
  void require_keys(const std::set<std::string>& seen, const std::vector<std::string>& required, int64_t line,
                    const std::string& what) const;

  // "key 'k': expected a non-empty string, got ...".
  std::string string_value(const YAML::Node& v, int64_t line, const std::string& key) const;
  // An integer in [lo, hi] written as one (a quoted "4" is a string). `expected` leads every
  // message: "<expected>, got '4.5'".
  int64_t integer_value(const YAML::Node& v, int64_t line, const std::string& expected, int64_t lo,
                        int64_t hi) const;
  // A name of an enum's table: "key 'k': expected one of a, b, got 'c' (did you mean 'a'?)".
  template <class E, size_t N>
  E name_value(const YAML::Node& v, int64_t line, const std::string& key,
               const NameTable<E, N>& names) const {
    const std::string word = v.IsScalar() ? v.Scalar() : "";
    if (const auto value = names.parse(word)) return *value;
    fail(path_, yaml_line(v, line),
         "key '" + key + "': expected one of " + names.choices() + ", got " + describe_yaml(v) +
             names.suggest(word));
  }

  std::string path_;
};

// What a reader's messages call its document and what its root map must hold.
struct YamlDocument {
  std::string cannot_open;  // "cannot open workload file"
  std::string malformed;    // "malformed GEMM list": yaml-cpp could not convert a node
  std::string empty;        // the message for an empty document
  std::string expected;     // "expected a map ..." for a root that is not a map
};

// Reads one document the same way for every reader: loads it with `load` (load_yaml_file or
// load_yaml_text), checks that its root is a map, names a Result after the file (path, and its
// stem as name, which a `name` key may replace) and fills it with Reader(path).read(root, result).
// yaml-cpp's own errors become "path: <cannot_open>", "path:line: malformed YAML: ..." and
// "path:line: <malformed>: ...".
template <class Result, class Reader, class Load>
Result read_yaml_document(const std::string& path, const YamlDocument& doc, Load&& load) {
  const auto line_of = [](const YAML::Exception& e) { return e.mark.line >= 0 ? e.mark.line + 1 : 0; };
  YAML::Node root;
  try {
    root = load();
  } catch (const YAML::BadFile&) {
    fail(path, 0, doc.cannot_open);
  } catch (const YAML::Exception& e) {
    fail(path, line_of(e), "malformed YAML: " + e.msg);
  }
  require_yaml_map(root, path, doc.empty, doc.expected);
  Result out;
  out.path = path;
  out.name = std::filesystem::path(path).stem().string();
  try {
    Reader(path).read(root, out);
  } catch (const YAML::Exception& e) {
    fail(path, line_of(e), doc.malformed + ": " + e.msg);
  }
  return out;
}

}  // namespace systolic
