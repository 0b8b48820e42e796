#pragma once
// What a compiled program depends on: the config keys that change the program or its timing,
// as canonical text and a stable 64-bit hash of it. A compiled trace records both, so running
// it under another chip can be refused with the keys that differ (docs/trace-format.md).
#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/config.hpp"
#include "sim/config/schema.hpp"

namespace systolic {

// One key's canonical value: integers and enum names as written, numbers as their shortest
// round-trip decimal (940.0), booleans true/false, sizes in bytes.
struct ConfigLine {
  std::string key;
  std::string value;
};

// Every schema key except those that change neither the program nor its timing: the energy
// and area sections, the config's name, presets that only fill other keys (hbm.preset), operand values
// and the MXU model choice (exact and fast agree on every cycle) and memory.ideal (it changes
// timing, not the lowering; a trace records it separately). A key added to the schema is hashed
// unless it is excluded here.
bool changes_program_or_timing(const ConfigKey& key);

// The keys above with their values in `config`, sorted by key.
std::vector<ConfigLine> timing_config(const ChipConfig& config);

// "<key> <value>\n" per line, in the order given: the text the hash is taken over.
std::string canonical_text(const std::vector<ConfigLine>& lines);

// FNV-1a, 64 bits (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
uint64_t fnv1a_64(const std::string& text);

// fnv1a_64(canonical_text(timing_config(config))).
uint64_t config_hash(const ChipConfig& config);

// A value for messages: sizes as "16777216 B (16 MiB)", anything else as it is.
std::string display_config_value(const std::string& key, const std::string& value);

}  // namespace systolic
