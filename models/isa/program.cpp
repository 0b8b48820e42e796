#include "models/isa/program.hpp"

namespace systolic {

std::string engine_name(EngineKind kind, int index) {
  switch (kind) {
    case EngineKind::mxu:
      return "mxu" + std::to_string(index);
    case EngineKind::dma:
      return "dma" + std::to_string(index);
    case EngineKind::vpu:
      return "vpu" + std::to_string(index);
    case EngineKind::ici:
      return "ici" + std::to_string(index);
  }
  return "?";
}

}  // namespace systolic
