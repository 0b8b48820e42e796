#pragma once
#include <vector>

#include "sim/config/schema.hpp"

namespace systolic {
std::vector<ConfigKey> memory_keys();
}
