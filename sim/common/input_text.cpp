#include "sim/common/input_text.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "models/common/error.hpp"

namespace systolic {

std::optional<int64_t> parse_int64(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_double(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

int64_t yaml_line(const YAML::Node& node, int64_t fallback) {
  const int line = node.Mark().line;
  return line >= 0 ? line + 1 : fallback;
}

std::string describe_yaml(const YAML::Node& node) {
  if (!node || node.IsNull()) return "nothing";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a map";
  return "'" + node.Scalar() + "'";
}

void fail(const std::string& path, int64_t line, const std::string& message) {
  if (line > 0) throw InputError(fmt::format("{}:{}: {}", path, line, message));
  throw InputError(fmt::format("{}: {}", path, message));
}

void require_yaml_map(const YAML::Node& root, const std::string& path, const std::string& empty,
                      const std::string& expected) {
  if (!root || root.IsNull()) fail(path, 0, empty);
  if (!root.IsMap()) fail(path, yaml_line(root, 1), expected + ", got " + describe_yaml(root));
}

}  // namespace systolic
