#include "sim/common/yaml_reader.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/common/suggest.hpp"

namespace systolic {
namespace {

// "a, b, c", or with last = " or ": "a, b or c".
std::string listed(const std::vector<std::string>& words, const char* last = ", ") {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i)
    out += (i == 0 ? "" : i + 1 == words.size() ? last : ", ") + words[i];
  return out;
}

}  // namespace

void YamlReader::check_key(const YAML::Node& key, int64_t line, const std::vector<std::string>& allowed,
                           const std::string& where) const {
  if (!key.IsScalar())
    fail(path_, line,
         fmt::format("expected a key ({}), got {}", listed(allowed, " or "), describe_yaml(key)));
  const std::string& name = key.Scalar();
  if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
    fail(path_, line,
         fmt::format("unknown key '{}'{}{}; allowed: {}", name, where, did_you_mean(name, allowed),
                     listed(allowed)));
}

void YamlReader::require_keys(const std::set<std::string>& seen, const std::vector<std::string>& required,
                              int64_t line, const std::string& what) const {
  for (const auto& r : required)
    if (!seen.count(r))
      fail(path_, line, fmt::format("{}: missing key '{}' (required: {})", what, r, listed(required)));
}

std::string YamlReader::string_value(const YAML::Node& v, int64_t line, const std::string& key) const {
  if (!v.IsScalar() || v.Scalar().empty())
    fail(path_, yaml_line(v, line),
         fmt::format("key '{}': expected a non-empty string, got {}", key, describe_yaml(v)));
  return v.Scalar();
}

int64_t YamlReader::integer_value(const YAML::Node& v, int64_t line, const std::string& expected, int64_t lo,
                                  int64_t hi) const {
  const int64_t at = yaml_line(v, line);
  if (!v.IsScalar()) fail(path_, at, expected + ", got " + describe_yaml(v));
  if (v.Tag() == "!") fail(path_, at, expected + ", got the string '" + v.Scalar() + "'");  // quoted
  const auto value = parse_int64(v.Scalar());
  if (!value || *value < lo || *value > hi) fail(path_, at, expected + ", got '" + v.Scalar() + "'");
  return *value;
}

}  // namespace systolic
