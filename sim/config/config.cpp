#include "sim/config/config.hpp"
#include "sim/config/scalesim_cfg.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "models/common/error.hpp"
#include "models/common/suggest.hpp"
#include "sim/common/input_text.hpp"
#include "sim/config/schema.hpp"

namespace systolic {
namespace {

std::vector<std::string> key_names() {
  std::vector<std::string> names;
  for (const auto& k : config_schema()) names.push_back(k.path);
  return names;
}

const ConfigKey* find_key(const std::string& path) {
  for (const auto& k : config_schema())
    if (k.path == path) return &k;
  return nullptr;
}

bool is_section(const std::string& path) {
  for (const auto& k : config_schema())
    if (k.path.rfind(path + ".", 0) == 0) return true;
  return false;
}

struct Leaf {
  const ConfigKey* key;
  YAML::Node value;
  int line;
};

// Every leaf of a YAML map, recursing into sections ("mxu:" -> "mxu.rows").
void collect(const YAML::Node& map, const std::string& prefix, const std::string& file,
             std::vector<Leaf>& leaves) {
  for (const auto& entry : map) {
    const std::string path = prefix + entry.first.as<std::string>();
    const YAML::Node& value = entry.second;
    const int line = entry.first.Mark().line + 1;
    if (const ConfigKey* key = find_key(path)) {
      leaves.push_back({key, value, line});
    } else if (is_section(path)) {
      if (!value.IsMap())
        throw InputError(fmt::format("{}:{}: key '{}': expected a section of keys", file, line, path));
      collect(value, path + ".", file, leaves);
    } else {
      throw InputError(fmt::format("{}:{}: unknown key '{}'{}", file, line, path,
                                   did_you_mean(path, key_names())));
    }
  }
}

// The order to apply items in: preset keys first, then the rest in their order. (Indices, not
// a reordered copy: assigning a YAML::Node writes through to the node it refers to.)
template <class T>
std::vector<size_t> presets_first(const std::vector<T>& items, const ConfigKey* T::*key) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_partition(order.begin(), order.end(), [&](size_t i) { return (items[i].*key)->first; });
  return order;
}

}  // namespace

void apply_overrides(ChipConfig& config, const std::vector<std::string>& overrides) {
  struct Override {
    const ConfigKey* key;
    std::string text;
  };
  std::vector<Override> parsed;
  for (const auto& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError(fmt::format("--set '{}': expected key=value", o));
    const std::string path = o.substr(0, eq);
    const ConfigKey* key = find_key(path);
    if (!key)
      throw InputError(fmt::format("--set '{}': unknown key '{}'{}", o, path,
                                   did_you_mean(path, key_names())));
    parsed.push_back({key, o});
  }
  for (size_t i : presets_first(parsed, &Override::key)) {
    const auto& [key, o] = parsed[i];
    try {
      key->set(config, load_yaml_text(o.substr(o.find('=') + 1), "--set '" + o + "'"));
    } catch (const std::invalid_argument& e) {
      throw InputError(fmt::format("--set '{}': key '{}': {}", o, key->path, e.what()));
    } catch (const YAML::Exception& e) {
      throw InputError(fmt::format("--set '{}': key '{}': malformed value: {}", o, key->path, e.msg));
    }
  }
  try {
    validate_config(config);
  } catch (const InputError& e) {
    throw InputError(config.source + ": " + e.what());
  }
}

ChipConfig load_config(const std::string& path, const std::vector<std::string>& overrides) {
  if (is_scalesim_cfg(path)) return load_scalesim_cfg(path, overrides);  // SCALE-Sim v2 .cfg (INI)
  if (!std::ifstream(path)) throw InputError(fmt::format("{}: cannot open config file", path));
  YAML::Node root;
  try {
    root = load_yaml_file(path);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}:{}: malformed YAML: {}", path, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap())
    throw InputError(fmt::format("{}: expected a map of config keys (see docs/config.md)", path));
  ChipConfig config;
  config.source = path;
  std::vector<Leaf> leaves;
  collect(root, "", path, leaves);
  for (size_t i : presets_first(leaves, &Leaf::key)) {
    const Leaf& leaf = leaves[i];
    try {
      leaf.key->set(config, leaf.value);
    } catch (const std::invalid_argument& e) {
      throw InputError(fmt::format("{}:{}: key '{}': {}", path, leaf.line, leaf.key->path, e.what()));
    }
  }
  apply_overrides(config, overrides);
  return config;
}

nlohmann::ordered_json config_to_json(const ChipConfig& config) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& k : config_schema()) {
    nlohmann::ordered_json* node = &out;
    std::string rest = k.path;
    for (auto dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
      node = &(*node)[rest.substr(0, dot)];
      rest = rest.substr(dot + 1);
    }
    (*node)[rest] = k.get(config);
  }
  return out;
}

std::string config_reference_markdown() {
  const ChipConfig defaults;
  std::string md = "| key | value | unit | default | meaning |\n|---|---|---|---|---|\n";
  for (const auto& k : config_schema())
    md += fmt::format("| `{}` | {} | {} | `{}` | {} |\n", k.path, k.kind, k.unit,
                      k.get(defaults).dump(), k.doc);
  return md;
}

}  // namespace systolic
