#include "sim/packing/buckets.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "models/common/error.hpp"
#include "sim/common/yaml_reader.hpp"
#include "sim/packing/detail.hpp"
#include "sim/packing/request_log.hpp"

namespace systolic::packing {
namespace {

using detail::fail;

const std::vector<std::string> kKeys{"name", "prefill", "decode"};

struct ListSpec {
  const char* key;
  const char* entry;   // "[B, S]"
  const char* batch;   // what B means
  const char* length;  // what S / L means
};
const ListSpec kPrefill{"prefill", "[B, S]", "B (lanes)", "S (tokens per lane)"};
const ListSpec kDecode{"decode", "[B, L]", "B (slots)", "L (KV length)"};

const std::string kExpected =
    "expected a map with keys 'prefill' (a list of [B, S]) and 'decode' (a list of [B, L])";
const YamlDocument kDocument{"cannot open bucket set", "malformed bucket set",
                             "empty bucket set; " + kExpected, kExpected};

class Reader : public YamlReader {
 public:
  using YamlReader::YamlReader;

  void read(const YAML::Node& root, BucketSet& set) {
    const auto seen =
        read_map(root, 1, kKeys, "", [&](const std::string& key, const YAML::Node& v, int64_t line) {
          if (key == "name") {
            set.name = string_value(v, line, "name");
          } else if (key == "prefill") {
            set.prefill = read_list(v, line, kPrefill);
          } else {
            set.decode = read_list(v, line, kDecode);
          }
        });
    for (const ListSpec* spec : {&kPrefill, &kDecode}) {
      if (!seen.count(spec->key))
        fail(path_, yaml_line(root, 1),
             fmt::format("missing key '{}' (a non-empty list of {} buckets, e.g. {}: [[1, 2048]])",
                         spec->key, spec->entry, spec->key));
    }
  }

 private:
  std::vector<Bucket> read_list(const YAML::Node& list, int64_t key_line, const ListSpec& spec) {
    const int64_t line = yaml_line(list, key_line);
    if (!list.IsSequence() || list.size() == 0)
      fail(path_, line,
           fmt::format("key '{}': expected a non-empty list of {} buckets, e.g. [[1, 2048], "
                       "[4, 8192]], got {}",
                       spec.key, spec.entry, describe_yaml(list)));
    std::vector<Bucket> out;
    std::map<Shape, int64_t> seen;
    for (const auto& e : list) {
      const int64_t eline = yaml_line(e, line);
      if (!e.IsSequence() || e.size() != 2)
        fail(path_, eline,
             fmt::format("key '{}': each bucket must be a list of two integers {}, got {}{}", spec.key,
                         spec.entry, describe_yaml(e),
                         e.IsSequence() ? fmt::format(" of {} items", e.size()) : ""));
      Bucket b;
      b.line = static_cast<int>(eline);
      b.shape.batch = positive(e[0], eline, spec, spec.batch, kMaxBatch);
      b.shape.length = positive(e[1], eline, spec, spec.length, kMaxTokens);
      const auto [it, fresh] = seen.emplace(b.shape, eline);
      if (!fresh)
        fail(path_, eline,
             fmt::format("key '{}': bucket {} is listed twice (also at line {})", spec.key,
                         to_string(b.shape), it->second));
      out.push_back(b);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const Bucket& a, const Bucket& b) { return a.shape < b.shape; });
    return out;
  }

  int64_t positive(const YAML::Node& v, int64_t line, const ListSpec& spec, const char* what, int64_t max) {
    return integer_value(v, line,
                         fmt::format("key '{}': {} of a {} bucket must be an integer in [1, {}]", spec.key,
                                     what, spec.entry, max),
                         1, max);
  }
};

void validate_inline(std::vector<Shape>& shapes, const ListSpec& spec, const std::string& name) {
  if (shapes.empty())
    fail(name, 0, fmt::format("'{}' bucket list is empty; expected at least one {} bucket",
                              spec.key, spec.entry));
  std::set<Shape> seen;
  for (const Shape& s : shapes) {
    if (s.batch < 1 || s.batch > kMaxBatch || s.length < 1 || s.length > kMaxTokens)
      fail(name, 0,
           fmt::format("{} bucket {}: {} must be in [1, {}] and {} in [1, {}]", spec.key,
                       to_string(s), spec.batch, kMaxBatch, spec.length, kMaxTokens));
    if (!seen.insert(s).second)
      fail(name, 0, fmt::format("{} bucket {} is listed twice", spec.key, to_string(s)));
  }
}

}  // namespace

std::string to_string(const Shape& shape) {
  return fmt::format("[{}, {}]", shape.batch, shape.length);
}

BucketSet parse_bucket_set(const std::string& yaml, const std::string& path) {
  return read_yaml_document<BucketSet, Reader>(path, kDocument, [&] { return load_yaml_text(yaml, path); });
}

BucketSet load_bucket_set(const std::string& path) {
  if (std::filesystem::is_directory(path)) fail(path, 0, "is a directory, expected a bucket set (YAML)");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, 0, "cannot open bucket set");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_bucket_set(text.str(), path);
}

BucketSet make_bucket_set(std::vector<Shape> prefill, std::vector<Shape> decode, std::string name) {
  validate_inline(prefill, kPrefill, name);
  validate_inline(decode, kDecode, name);
  BucketSet set;
  set.name = std::move(name);
  for (const Shape& s : prefill) set.prefill.push_back({s, 0});
  for (const Shape& s : decode) set.decode.push_back({s, 0});
  const auto by_shape = [](const Bucket& a, const Bucket& b) { return a.shape < b.shape; };
  std::stable_sort(set.prefill.begin(), set.prefill.end(), by_shape);
  std::stable_sort(set.decode.begin(), set.decode.end(), by_shape);
  return set;
}

int64_t array_tile(int64_t rows, int64_t cols) { return std::lcm(rows, cols); }

void check_buckets_fit_array(const BucketSet& buckets, int64_t rows, int64_t cols) {
  const std::string where = buckets.path.empty() ? buckets.name : buckets.path;
  if (rows < 1 || cols < 1)
    throw InputError(fmt::format("array {}x{}: rows and columns must be positive", rows, cols));
  const int64_t tile = array_tile(rows, cols);
  for (const auto* list : {&buckets.prefill, &buckets.decode}) {
    const bool prefill = list == &buckets.prefill;
    for (const Bucket& b : *list) {
      const int64_t len = b.shape.length;
      if (len % tile == 0) continue;
      const int64_t down = len / tile * tile;
      const int64_t up = down + tile;
      fail(where, b.line,
           fmt::format("{} bucket {}: {} = {} is not a multiple of {} ({} for the {}x{} array); "
                       "the last fold of the attention matmuls would leave PEs idle that the "
                       "report counts as neither pad tokens nor masked cells. Use {}{}",
                       prefill ? "prefill" : "decode", to_string(b.shape), prefill ? "S" : "L",
                       len, tile, rows == cols ? "its width" : "lcm(rows, cols)", rows, cols,
                       down > 0 ? fmt::format("{} or ", down) : "", up));
    }
  }
}

}  // namespace systolic::packing
