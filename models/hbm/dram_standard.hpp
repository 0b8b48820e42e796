#pragma once
// DRAM timing standards (config key `hbm.preset`): each is one file in models/hbm/standards/
// that registers a complete HbmConfig with the published peak bandwidth it reproduces and
// where that figure comes from (docs/memory.md). tests/unit/test_registries.cpp checks every
// registered standard's peak against its cited figure.
#include <string>

#include "models/common/registry.hpp"
#include "models/hbm/hbm_config.hpp"

namespace systolic {

struct DramStandard {
  HbmConfig config;          // every field of the part
  double cited_gb_per_s = 0;  // the published peak bandwidth, GB/s
  std::string source;         // where it is published
};

using DramRegistry = Registry<DramStandard>;

}  // namespace systolic
