#pragma once
// Chip configuration: the resolved, validated values every block reads. Files and
// `--set key=value` overrides go through one schema (schema.cpp), which names each
// key, its kind, unit, range and default; docs/config.md is generated from that schema.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/chip/chip_config.hpp"

namespace systolic {

// Reads `path`, applies `overrides` ("key=value", YAML scalar syntax) and validates.
// Throws InputError: "<file>: key 'mxu.rows': expected an integer in [1, 65536], got 'x'".
ChipConfig load_config(const std::string& path, const std::vector<std::string>& overrides = {});

// Applies overrides to an already loaded config (same validation as load_config).
void apply_overrides(ChipConfig& config, const std::vector<std::string>& overrides);

// Every schema key with its resolved value, nested by the dots in its name.
nlohmann::ordered_json config_to_json(const ChipConfig& config);

// A markdown table of every key (name, kind, unit, default, meaning) for docs/config.md.
std::string config_reference_markdown();

}  // namespace systolic
