#include "sim/program.hpp"

namespace systolic {

std::string engine_name(EngineKind kind, int index) {
  return std::string(kEngineKindNames.name(kind)) + std::to_string(index);
}

}  // namespace systolic
