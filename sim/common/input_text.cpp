#include "sim/common/input_text.hpp"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <atomic>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
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
  if (node.IsSequence()) return node.size() == 0 ? "an empty list" : "a list";
  if (node.IsMap()) return "a map";
  return "'" + node.Scalar() + "'";
}

void fail(const std::string& path, int64_t line, const std::string& message) {
  if (line > 0) throw InputError(fmt::format("{}:{}: {}", path, line, message));
  throw InputError(fmt::format("{}: {}", path, message));
}

namespace {

std::atomic<uint64_t> max_yaml_bytes_{kDefaultMaxYamlBytes};

// The size of the file at `path`, or 0 when it cannot be read (the reader's open reports that).
uint64_t file_bytes(const std::string& path) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  return ec ? 0 : bytes;
}

// The events of one document, until the root map's key `key_` (KeyFound) or the end. A frame
// per open map or list; in a map, nodes alternate key, value.
class RootKeyScan final : public YAML::EventHandler {
 public:
  struct KeyFound {};
  explicit RootKeyScan(std::string key) : key_(std::move(key)) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override { node(nullptr); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { node(nullptr); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string& value) override {
    node(&value);
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(nullptr);
    frames_.push_back({false, false});
  }
  void OnSequenceEnd() override { frames_.pop_back(); }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(nullptr);
    frames_.push_back({true, true});
  }
  void OnMapEnd() override { frames_.pop_back(); }

 private:
  struct Frame {
    bool map;
    bool expect_key;
  };
  // Any node: a key of the root map is compared; the next node of a map is its other half.
  void node(const std::string* scalar) {
    if (frames_.empty()) return;  // the root itself
    Frame& f = frames_.back();
    if (f.map && f.expect_key && frames_.size() == 1 && scalar && *scalar == key_) throw KeyFound{};
    if (f.map) f.expect_key = !f.expect_key;
  }
  std::string key_;
  std::vector<Frame> frames_;
};

}  // namespace

uint64_t max_yaml_bytes() { return max_yaml_bytes_.load(); }
void set_max_yaml_bytes(uint64_t bytes) { max_yaml_bytes_.store(bytes); }

void check_yaml_size(uint64_t bytes, const std::string& path) {
  const uint64_t limit = max_yaml_bytes();
  if (bytes <= limit) return;
  fail(path, 0,
       fmt::format("{} bytes of YAML, more than --max-yaml-bytes {} (yaml-cpp holds ~115 to ~230 bytes of "
                   "memory per byte: about {:.1f} to {:.1f} GB; raise it if the memory is there)",
                   bytes, limit, bytes * 115e-9, bytes * 230e-9));
}

bool yaml_root_has_key(const std::string& path, const std::string& key) {
  check_yaml_size(file_bytes(path), path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  YAML::Parser parser(in);
  RootKeyScan scan(key);
  try {
    parser.HandleNextDocument(scan);
  } catch (const RootKeyScan::KeyFound&) {
    return true;
  }
  return false;
}

YAML::Node load_yaml_file(const std::string& path) {
  if (std::filesystem::is_directory(path)) fail(path, 0, "is a directory, expected a YAML file");
  check_yaml_size(file_bytes(path), path);
  YAML::Node root = YAML::LoadFile(path);
  reject_duplicate_keys(root, path);
  return root;
}

YAML::Node load_yaml_text(const std::string& text, const std::string& path) {
  check_yaml_size(text.size(), path);
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
      // A list, a map or nothing ("? " alone) as a key: no reader has such a key, and yaml-cpp's
      // conversion of one to a name throws its own exception (found by fuzz/reader_fuzzer.cpp).
      if (!entry.first.IsScalar())
        fail(path, yaml_line(entry.first, yaml_line(entry.second, 0)),
             "expected a key name, got " + describe_yaml(entry.first) + " as a key");
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
