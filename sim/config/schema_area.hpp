#pragma once
#include <vector>

#include "sim/config/schema.hpp"

namespace systolic {
// Keys of the area and cost model (docs/area.md lists every default with its source).
std::vector<ConfigKey> area_keys();
}  // namespace systolic
