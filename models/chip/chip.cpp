#include "models/chip/chip.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/common/error.hpp"

namespace systolic {
namespace {
// The engine's stream of the program: a copy that shares the program's list.
InstructionStream stream_for(const Program& program, EngineId id) {
  for (const auto& s : program.streams)
    if (s.engine == id) return s.instructions;
  return {};
}

int engine_count(const ChipConfig& config, EngineKind kind, bool networked) {
  switch (kind) {
    case EngineKind::mxu:
      return static_cast<int>(config.mxu.count);
    case EngineKind::dma:
      return static_cast<int>(config.dma.engine.engines);
    case EngineKind::vpu:
      return 1;
    case EngineKind::ici:
      return networked ? 1 : 0;
  }
  return 0;
}

// Every stream names an engine the chip has.
void check_engines(const ChipConfig& config, const Program& program, bool networked) {
  for (const auto& s : program.streams)
    if (s.engine.index < 0 || s.engine.index >= engine_count(config, s.engine.kind, networked))
      throw InputError(fmt::format("program uses engine {} but the chip has {} = {}",
                                   engine_name(s.engine.kind, s.engine.index),
                                   s.engine.kind == EngineKind::mxu   ? "mxu.count"
                                   : s.engine.kind == EngineKind::dma ? "dma.engines"
                                   : s.engine.kind == EngineKind::vpu ? "vector units"
                                                                      : "ICI engines (ici.topology none: one chip)",
                                   engine_count(config, s.engine.kind, networked)));
}
}  // namespace

Chip::Chip(const sc_core::sc_module_name& name, const ChipConfig& config, const Program& program,
           GridObserver* observer, IciFabric* fabric, int index)
    : sc_module(name), semaphores_(program.semaphores.size()),
      hbm_(config.hbm, config.clock_mhz, config.memory.ideal ? HbmTiming::ideal : HbmTiming::modelled) {
  check_engines(config, program, fabric != nullptr);
  std::vector<Scratchpad*> pads;
  for (const auto& c : config.sram.all()) {
    scratchpads_.push_back(std::make_unique<Scratchpad>(c));
    pads.push_back(scratchpads_.back().get());
  }
  add_mxus(config, program, pads, observer);
  add_dmas(config, program, pads);
  add_vpu(config, program, pads);
  if (!fabric) return;
  add_ici(config, program, *fabric, index);
  // A chip of a system wakes its engines in an order of its own, so chips that run alike run
  // alike however many run beside them (models/engine/wake_order.hpp). A chip alone keeps the
  // kernel's order: it has no other chip to agree with.
  wake_order_ = std::make_unique<WakeOrder>("wake_order");
  for (size_t rank = 0; rank < owned_.size(); ++rank)
    owned_[rank]->join(*wake_order_, static_cast<int>(rank));
}

void Chip::add_mxus(const ChipConfig& config, const Program& program, const std::vector<Scratchpad*>& pads,
                    GridObserver* observer) {
  const bool exact = config.mxu.model == MxuModel::exact;
  for (int i = 0; i < config.mxu.count; ++i) {
    const MxuSetup setup{config.mxu.shape(), config.mxu.rate, config.mxu.convention, config.mxu.dataflow};
    auto core = exact ? make_exact_mxu(setup, observer) : make_fast_mxu(setup);
    auto mxu = std::make_unique<MxuEngine>(engine_name(EngineKind::mxu, i).c_str(), i,
                                           stream_for(program, {EngineKind::mxu, i}), semaphores_,
                                           std::move(core), config.mxu.seed);
    mxu->attach_scratchpads(pads, setup);
    mxus_.push_back(mxu.get());
    owned_.push_back(std::move(mxu));
  }
}

void Chip::add_dmas(const ChipConfig& config, const Program& program, const std::vector<Scratchpad*>& pads) {
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
}

void Chip::add_vpu(const ChipConfig& config, const Program& program, const std::vector<Scratchpad*>& pads) {
  auto vpu = std::make_unique<VpuEngine>("vpu0", EngineId{EngineKind::vpu, 0},
                                         stream_for(program, {EngineKind::vpu, 0}), semaphores_, config.vpu);
  vpu->attach_scratchpads(pads[kVmem], pads[kWeights]);
  for (size_t j = 0; j < vpu->stream().size(); ++j)
    if (const VpuOp* op = std::get_if<VpuOp>(&vpu->stream()[j].op))
      if (auto problem = vpu->check(*op))
        throw InputError(fmt::format("vpu0 instruction {}: {}", j, *problem));
  vpu_ = vpu.get();
  owned_.push_back(std::move(vpu));
}

// Chip `index` of a system: its semaphores and HBM join the fabric, and it gets an ICI engine
// (sending), port (receiving) and router (passing on).
void Chip::add_ici(const ChipConfig& config, const Program& program, IciFabric& fabric, int index) {
  const size_t i = static_cast<size_t>(index);
  fabric.semaphores.resize(std::max(fabric.semaphores.size(), i + 1));
  fabric.hbms.resize(fabric.semaphores.size());
  fabric.semaphore_names.resize(fabric.semaphores.size());
  fabric.ports.resize(fabric.semaphores.size());
  fabric.routers.resize(fabric.semaphores.size());
  port_ = std::make_unique<IciPort>("ici_port", hbm_, semaphores_);
  router_ = std::make_unique<IciRouter>("ici_router", index, fabric);
  fabric.semaphores[i] = &semaphores_;
  fabric.hbms[i] = &hbm_;
  fabric.semaphore_names[i] = &program.semaphores;
  fabric.ports[i] = port_.get();
  fabric.routers[i] = router_.get();
  auto ici = std::make_unique<IciEngine>("ici0", index, stream_for(program, {EngineKind::ici, 0}), semaphores_,
                                         fabric, config.dma.engine.quantum_cycles);
  ici_ = ici.get();
  owned_.push_back(std::move(ici));
}

void Chip::check_ici() const {
  if (!ici_) return;
  for (size_t j = 0; j < ici_->stream().size(); ++j)
    if (const IciOp* op = std::get_if<IciOp>(&ici_->stream()[j].op))
      if (auto problem = ici_->check(*op))
        throw InputError(fmt::format("{}.ici0 instruction {}: {}", basename(), j, *problem));
}

std::vector<const Engine*> Chip::engines() const {
  std::vector<const Engine*> out;
  for (const auto& e : owned_) out.push_back(e.get());
  return out;
}

std::vector<Engine*> Chip::engines() {
  std::vector<Engine*> out;
  for (const auto& e : owned_) out.push_back(e.get());
  return out;
}

}  // namespace systolic
