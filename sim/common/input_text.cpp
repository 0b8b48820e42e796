#include "sim/common/input_text.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <vector>

#include "models/common/error.hpp"

namespace systolic {

std::optional<int64_t> parse_int64(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  const size_t digits = text.front() == '-' ? 1 : 0;
  if (text.size() > digits + 1 && text[digits] == '0') return std::nullopt;  // "010": octal to YAML 1.1
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

YAML::Node load_yaml_file(const std::string& path) {
  if (std::filesystem::is_directory(path)) fail(path, 0, "is a directory, expected a YAML file");
  YAML::Node root = YAML::LoadFile(path);
  reject_duplicate_keys(root, path);
  return root;
}

YAML::Node load_yaml_text(const std::string& text, const std::string& path) {
  YAML::Node root = YAML::Load(text);
  reject_duplicate_keys(root, path);
  return root;
}

void reject_duplicate_keys(const YAML::Node& root, const std::string& path) {
  // A stack, not recursion: nesting depth is the user's. Aliases share nodes, so a few lines can
  // name billions of them ("billion laughs"): the walk is bounded, and so is every reader after it.
  constexpr int64_t kMaxNodes = int64_t{1} << 22;
  std::vector<YAML::Node> pending = {root};
  for (int64_t walked = 0; !pending.empty(); ++walked) {
    if (walked > kMaxNodes)
      fail(path, 0, fmt::format("more than {} YAML nodes once aliases are expanded", kMaxNodes));
    const YAML::Node node = pending.back();
    pending.pop_back();
    if (node.IsSequence())
      for (const auto& item : node) pending.push_back(item);
    if (!node.IsMap()) continue;
    std::map<std::string, int64_t> first_line;
    for (const auto& entry : node) {
      pending.push_back(entry.second);
      if (!entry.first.IsScalar()) continue;  // a list or map as a key: the reader refuses it
      const int64_t line = yaml_line(entry.first, 0);
      const auto [it, fresh] = first_line.emplace(entry.first.Scalar(), line);
      if (!fresh)
        fail(path, line, fmt::format("duplicate key '{}' (first on line {})", it->first, it->second));
    }
  }
}

void require_yaml_map(const YAML::Node& root, const std::string& path, const std::string& empty,
                      const std::string& expected) {
  if (!root || root.IsNull()) fail(path, 0, empty);
  if (!root.IsMap()) fail(path, yaml_line(root, 1), expected + ", got " + describe_yaml(root));
}

}  // namespace systolic
