#pragma once
#include <vector>

#include "sim/config_schema.hpp"

namespace systolic {
std::vector<ConfigKey> ici_keys();
}
