#pragma once
// One chip: the semaphores its engines synchronise through, one engine per hardware unit fed
// its instruction stream from the program, and the memories they share: HBM (behind every DMA
// engine) and the scratchpads (vmem, weights, accumulators). With memory.ideal the HBM is timed
// HbmTiming::ideal: transfers take no time but every byte is still counted. A chip of a multi-chip system
// also has an ICI engine, which sends to the other chips through the system's shared fabric, and an ICI port,
// which writes what they send it into its HBM.
#include <systemc>

#include <memory>
#include <vector>

#include "models/chip/chip_config.hpp"
#include "models/dma/dma_engine.hpp"
#include "models/engine/engine.hpp"
#include "models/engine/semaphores.hpp"
#include "models/hbm/hbm_core.hpp"
#include "models/ici/ici_engine.hpp"
#include "models/isa/program.hpp"
#include "models/mxu/mxu_engine.hpp"
#include "models/sram/scratchpad.hpp"
#include "models/vpu/vpu_engine.hpp"

namespace systolic {

class Chip : public sc_core::sc_module {
 public:
  // Throws InputError when a stream names an engine this chip does not have.
  // With `fabric`, the chip is chip `index` of a system: it registers its semaphores and HBM
  // there and gets an ICI engine (check its messages with check_ici() once every chip exists).
  Chip(const sc_core::sc_module_name& name, const ChipConfig& config, const Program& program,
       GridObserver* observer = nullptr, IciFabric* fabric = nullptr, int index = 0);
  // Throws InputError naming the first message the fabric cannot deliver.
  void check_ici() const;

  const std::vector<MxuEngine*>& mxus() const { return mxus_; }
  const std::vector<DmaEngine*>& dmas() const { return dmas_; }
  const VpuEngine& vpu() const { return *vpu_; }
  const IciEngine* ici() const { return ici_; }  // null on a single chip
  std::vector<const Engine*> engines() const;
  std::vector<Engine*> engines();
  const SemaphoreBank& semaphores() const { return semaphores_; }
  const HbmCore& hbm() const { return hbm_; }
  // HBM bandwidth and per-channel activity over time for timelines (HbmCore::record_activity).
  void record_hbm_activity() { hbm_.record_activity(); }
  const std::vector<std::unique_ptr<Scratchpad>>& scratchpads() const { return scratchpads_; }

 private:
  // The engines, each with its stream of the program (the constructor's steps).
  void add_mxus(const ChipConfig& config, const Program& program, const std::vector<Scratchpad*>& pads,
                GridObserver* observer);
  void add_dmas(const ChipConfig& config, const Program& program, const std::vector<Scratchpad*>& pads);
  void add_vpu(const ChipConfig& config, const Program& program, const std::vector<Scratchpad*>& pads);
  void add_ici(const ChipConfig& config, const Program& program, IciFabric& fabric, int index);

  SemaphoreBank semaphores_;
  HbmCore hbm_;
  std::vector<std::unique_ptr<Scratchpad>> scratchpads_;  // indexed by ScratchpadId
  std::vector<std::unique_ptr<Engine>> owned_;
  std::vector<MxuEngine*> mxus_;
  std::vector<DmaEngine*> dmas_;
  VpuEngine* vpu_ = nullptr;
  IciEngine* ici_ = nullptr;
  std::unique_ptr<IciPort> port_;          // with ici_
  std::unique_ptr<IciRouter> router_;      // with ici_: what crosses this chip to another
  std::unique_ptr<WakeOrder> wake_order_;  // with ici_: the engines' timed waits, in build order
};

}  // namespace systolic
