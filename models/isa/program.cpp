#include "models/isa/program.hpp"

#include <iterator>
#include <utility>

namespace systolic {

std::string engine_name(EngineKind kind, int index) {
  return std::string(kEngineKindNames.name(kind)) + std::to_string(index);
}

std::string layer_kind_choices() {
  const auto names = kLayerKindNames.names();
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

}  // namespace systolic
