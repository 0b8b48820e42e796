#pragma once
// The one list of chip-config keys. Each key knows how to parse and range-check a YAML value
// into ChipConfig and how to read it back; loading, `--set`, the report and docs/config.md all
// walk this list, so a key added here is validated, reported and documented at once.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "sim/config/config.hpp"

namespace systolic {

struct ConfigKey {
  std::string path;  // dotted, e.g. "mxu.rows"
  std::string kind;  // what a value must look like, e.g. "integer in [1, 65536]"
  std::string unit;  // "" when dimensionless
  std::string doc;
  // Throws std::invalid_argument("expected <kind>, got '<text>'").
  std::function<void(ChipConfig&, const YAML::Node&)> set;
  std::function<nlohmann::ordered_json(const ChipConfig&)> get;
  // Applied before the other keys of a file or of the --set list, whatever their order:
  // a preset key that resets a whole section, so keys beside it can refine it.
  bool first = false;
};

const std::vector<ConfigKey>& config_schema();

// Checks that only hold between keys (run after every key is set). Throws InputError.
void validate_config(const ChipConfig& config);

}  // namespace systolic
