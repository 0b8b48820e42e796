#include "models/chip/chip.hpp"

#include <fmt/format.h>

#include "sim/error.hpp"

namespace systolic {
namespace {
std::vector<Instruction> stream_for(const Program& program, EngineId id) {
  for (const auto& s : program.streams)
    if (s.engine == id) return s.instructions;
  return {};
}
}  // namespace

Chip::Chip(const sc_core::sc_module_name& name, const ChipConfig& config, const Program& program,
           GridObserver* observer)
    : sc_module(name), semaphores_(program.semaphores.size()) {
  for (const auto& s : program.streams)
    if (s.engine.index < 0 || s.engine.index >= config.mxu.count)
      throw InputError(fmt::format("program uses engine {} but the chip has mxu.count = {}",
                                   engine_name(s.engine.kind, s.engine.index), config.mxu.count));
  const bool exact = config.mxu.model == MxuModel::exact;
  for (int i = 0; i < config.mxu.count; ++i) {
    auto core = exact ? make_exact_mxu(config.mxu.shape(), config.mxu.convention, observer)
                      : make_fast_mxu(config.mxu.shape(), config.mxu.convention);
    auto mxu = std::make_unique<MxuEngine>(engine_name(EngineKind::mxu, i).c_str(), i,
                                           stream_for(program, {EngineKind::mxu, i}), semaphores_,
                                           std::move(core), config.mxu.seed);
    mxus_.push_back(mxu.get());
    owned_.push_back(std::move(mxu));
  }
}

std::vector<const Engine*> Chip::engines() const {
  std::vector<const Engine*> out;
  for (const auto& e : owned_) out.push_back(e.get());
  return out;
}

}  // namespace systolic
