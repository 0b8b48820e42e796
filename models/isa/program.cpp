#include "models/isa/program.hpp"

#include <iterator>
#include <utility>

namespace systolic {

std::string engine_name(EngineKind kind, int index) {
  return std::string(kEngineKindNames.name(kind)) + std::to_string(index);
}

namespace {
// The one spelling of each layer kind, in traces and reports.
constexpr std::pair<LayerKind, const char*> kLayerKindNames[] = {{LayerKind::matmul, "matmul"},
                                                                 {LayerKind::attention, "attention"},
                                                                 {LayerKind::vector, "vector"},
                                                                 {LayerKind::collective, "collective"}};
}  // namespace

const char* layer_kind_name(LayerKind kind) {
  for (const auto& [k, name] : kLayerKindNames)
    if (k == kind) return name;
  return "?";
}

std::optional<LayerKind> parse_layer_kind(const std::string& name) {
  for (const auto& [k, n] : kLayerKindNames)
    if (name == n) return k;
  return std::nullopt;
}

std::string layer_kind_choices() {
  std::string out;
  const size_t count = std::size(kLayerKindNames);
  for (size_t i = 0; i < count; ++i)
    out += (i == 0 ? "" : i + 1 == count ? " or " : ", ") + std::string(kLayerKindNames[i].second);
  return out;
}

}  // namespace systolic
