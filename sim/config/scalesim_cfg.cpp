#include "sim/config/scalesim_cfg.hpp"

#include <fmt/format.h>
#include <ini.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>

#include "models/common/error.hpp"
#include "models/common/suggest.hpp"
#include "sim/config/config.hpp"

namespace systolic {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// SCALE-Sim's keys (section.key, lower case as configparser reads them) and the config key each
// sets: "" accepted and unused (addresses and the topology path: give it with -w).
// Sources: scalesim/scale_config.py (read_conf_file) and configs/scale.cfg of scale-sim-v2.
const std::map<std::string, std::string>& key_map() {
  static const std::map<std::string, std::string> keys = {
      {"general.run_name", "name"},
      {"architecture_presets.arrayheight", "mxu.rows"},
      {"architecture_presets.arraywidth", "mxu.cols"},
      {"architecture_presets.ifmapsramszkb", "sram.vmem_bytes"},
      {"architecture_presets.filtersramszkb", "sram.weights_bytes"},
      {"architecture_presets.ofmapsramszkb", "sram.accumulators_bytes"},
      {"architecture_presets.dataflow", "mxu.dataflow"},
      {"architecture_presets.ifmapoffset", ""},
      {"architecture_presets.filteroffset", ""},
      {"architecture_presets.ofmapoffset", ""},
      {"architecture_presets.bandwidth", ""},  // read only with InterfaceBandwidth: USER (refused)
      {"architecture_presets.memorybanks", ""},
      {"run_presets.interfacebandwidth", ""},
      {"network_presets.topologycsvloc", ""},
      // Newer versions: SRAM bank layouts and sparsity. Read only when switched on, which is
      // refused (must_be_off below), so the rest is accepted and unused.
      {"architecture_presets.ifmapcustomlayout", ""},
      {"architecture_presets.filtercustomlayout", ""},
      {"architecture_presets.onchipmemorybanks", ""},
      {"architecture_presets.onchipmemorybankports", ""},
      {"architecture_presets.ifmapsrambankbandwidth", ""},
      {"architecture_presets.ifmapsrambanknum", ""},
      {"architecture_presets.ifmapsrambankport", ""},
      {"architecture_presets.filtersrambankbandwidth", ""},
      {"architecture_presets.filtersrambanknum", ""},
      {"architecture_presets.filtersrambankport", ""},
      {"sparsity.sparsitysupport", ""},
      {"sparsity.sparserep", ""},
      {"sparsity.optimizedmapping", ""},
      {"sparsity.blocksize", ""},
      {"sparsity.randomnumbergeneratorseed", ""},
  };
  return keys;
}

std::vector<std::string> known_keys() {
  std::vector<std::string> out;
  for (const auto& [k, _] : key_map()) out.push_back(k);
  return out;
}

struct Reader {
  std::vector<std::pair<std::string, std::string>> sets;  // (SCALE-Sim key as written, "key=value")
  std::string error;  // the first problem; ini_parse reports its line
};

// One key: "" when it is fine (a mapped one joins r.sets), else what is wrong with it.
std::string read_key(Reader& r, const std::string& section, const std::string& name, std::string value) {
  const std::string key = lower(section) + "." + lower(name);
  const auto it = key_map().find(key);
  if (it == key_map().end())
    return fmt::format("key '{}' in [{}]: SCALE-Sim key with no counterpart here{}; the keys read are: {}", name,
                       section, did_you_mean(key, known_keys()), fmt::join(known_keys(), ", "));
  if (value.size() > 1 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
  if (key == "run_presets.interfacebandwidth" && value != "CALC")
    return fmt::format("key 'InterfaceBandwidth': {} is not read here: SCALE-Sim's USER bandwidths have no "
                       "counterpart (this simulator times its own DRAM, hbm.*: give a YAML config with hbm.preset); "
                       "expected CALC",
                       value);
  if ((key == "architecture_presets.ifmapcustomlayout" || key == "architecture_presets.filtercustomlayout" ||
       key == "sparsity.sparsitysupport") &&
      lower(value) != "false")
    return fmt::format("key '{}': {} is not read here: SCALE-Sim's custom SRAM layouts and sparsity have no "
                       "counterpart in this simulator; expected False",
                       name, value);
  if (key == "architecture_presets.memorybanks" && value != "1")
    return fmt::format("key 'MemoryBanks': {} banks: expected 1 (one DRAM interface)", value);
  if (it->second.empty()) return "";
  const bool kib = key.size() > 4 && key.compare(key.size() - 4, 4, "szkb") == 0;  // SCALE-Sim's sizes are in KiB
  r.sets.emplace_back(name, it->second + "=" + value + (kib ? " KiB" : ""));
  return "";
}

int handler(void* user, const char* section, const char* name, const char* value) {
  auto& r = *static_cast<Reader*>(user);
  if (!r.error.empty()) return 1;
  r.error = read_key(r, section, name, value);
  return r.error.empty() ? 1 : 0;
}

// The line of `name = ...` (configparser's keys are case-insensitive).
int line_of(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const auto start = line.find_first_not_of(" \t");
    if (start != std::string::npos && lower(line.substr(start, name.size())) == lower(name)) return n;
  }
  return 0;
}

// Applies the mapped keys together (a check that involves two of them sees both), naming the
// SCALE-Sim key a failure comes from.
void apply_all(ChipConfig& config, const Reader& r, const std::string& path) {
  std::vector<std::string> sets;
  for (const auto& [name, set] : r.sets) sets.push_back(set);
  try {
    apply_overrides(config, sets);
  } catch (const InputError& e) {
    const std::string what = e.what();
    for (const auto& [name, set] : r.sets) {
      const std::string ours = set.substr(0, set.find('='));
      const auto at = what.find("key '" + ours + "': ");
      if (at != std::string::npos)
        throw InputError(fmt::format("{}:{}: key '{}' (as {}): {}", path, line_of(path, name), name, set,
                                     what.substr(at + ours.size() + 8)));
    }
    throw;
  }
}

}  // namespace

bool is_scalesim_cfg(const std::string& path) { return std::filesystem::path(path).extension() == ".cfg"; }

ChipConfig load_scalesim_cfg(const std::string& path, const std::vector<std::string>& overrides) {
  Reader r;
  const int line = ini_parse(path.c_str(), handler, &r);
  if (line < 0) throw InputError(fmt::format("{}: cannot open config file", path));
  if (line > 0)
    throw InputError(fmt::format("{}:{}: {}", path, line,
                                 r.error.empty() ? "expected [section] or key = value (a SCALE-Sim .cfg)" : r.error));
  ChipConfig config;
  config.source = path;
  config.name = std::filesystem::path(path).stem().string();
  // What SCALE-Sim models: one array of int8 words with its cycle convention, and memory that
  // keeps up with it (InterfaceBandwidth: CALC computes the bandwidth needed, stalls never).
  apply_overrides(config, {"mxu.count=1", "mxu.convention=scalesim", "mxu.dtype=int8", "memory.ideal=true"});
  apply_all(config, r, path);
  apply_overrides(config, overrides);
  return config;
}

}  // namespace systolic
