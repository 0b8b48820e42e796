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

int engine_count(const ChipConfig& config, EngineKind kind) {
  switch (kind) {
    case EngineKind::mxu:
      return static_cast<int>(config.mxu.count);
    case EngineKind::dma:
      return static_cast<int>(config.dma.engine.engines);
    case EngineKind::vpu:
      return 1;
  }
  return 0;
}
}  // namespace

Chip::Chip(const sc_core::sc_module_name& name, const ChipConfig& config, const Program& program,
           GridObserver* observer)
    : sc_module(name), semaphores_(program.semaphores.size()), hbm_(config.hbm, config.clock_mhz) {
  for (const auto& s : program.streams)
    if (s.engine.index < 0 || s.engine.index >= engine_count(config, s.engine.kind))
      throw InputError(fmt::format("program uses engine {} but the chip has {} = {}",
                                   engine_name(s.engine.kind, s.engine.index),
                                   s.engine.kind == EngineKind::mxu   ? "mxu.count"
                                   : s.engine.kind == EngineKind::dma ? "dma.engines"
                                                                      : "vector units",
                                   engine_count(config, s.engine.kind)));
  std::vector<Scratchpad*> pads;
  for (const auto& c : config.sram.all()) {
    scratchpads_.push_back(std::make_unique<Scratchpad>(c));
    pads.push_back(scratchpads_.back().get());
  }

  const bool exact = config.mxu.model == MxuModel::exact;
  for (int i = 0; i < config.mxu.count; ++i) {
    auto core = exact ? make_exact_mxu(config.mxu.shape(), config.mxu.convention, observer)
                      : make_fast_mxu(config.mxu.shape(), config.mxu.convention);
    auto mxu = std::make_unique<MxuEngine>(engine_name(EngineKind::mxu, i).c_str(), i,
                                           stream_for(program, {EngineKind::mxu, i}), semaphores_,
                                           std::move(core), config.mxu.seed);
    if (!config.memory.ideal) mxu->attach_scratchpads(pads, config.mxu.shape());
    mxus_.push_back(mxu.get());
    owned_.push_back(std::move(mxu));
  }
  for (int i = 0; i < static_cast<int>(config.dma.engine.engines); ++i) {
    auto dma = std::make_unique<DmaEngine>(engine_name(EngineKind::dma, i).c_str(),
                                           EngineId{EngineKind::dma, i},
                                           stream_for(program, {EngineKind::dma, i}), semaphores_,
                                           hbm_, pads, config.dma.engine);
    // A bad descriptor would otherwise surface inside an SC_THREAD, as a SystemC error.
    for (size_t j = 0; j < dma->stream().size(); ++j)
      if (const DmaOp* op = std::get_if<DmaOp>(&dma->stream()[j].op))
        if (auto problem = dma->check(op->descriptor))
          throw InputError(fmt::format("{} instruction {}: {}", dma->basename(), j, *problem));
    dmas_.push_back(dma.get());
    owned_.push_back(std::move(dma));
  }
  auto vpu = std::make_unique<VpuEngine>("vpu0", EngineId{EngineKind::vpu, 0},
                                         stream_for(program, {EngineKind::vpu, 0}), semaphores_, config.vpu);
  if (!config.memory.ideal) vpu->attach_vmem(pads[kVmem]);
  for (size_t j = 0; j < vpu->stream().size(); ++j)
    if (const VpuOp* op = std::get_if<VpuOp>(&vpu->stream()[j].op))
      if (auto problem = vpu->check(*op))
        throw InputError(fmt::format("vpu0 instruction {}: {}", j, *problem));
  vpu_ = vpu.get();
  owned_.push_back(std::move(vpu));
}

std::vector<const Engine*> Chip::engines() const {
  std::vector<const Engine*> out;
  for (const auto& e : owned_) out.push_back(e.get());
  return out;
}

}  // namespace systolic
