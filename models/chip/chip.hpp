#pragma once
// One chip: the semaphores its engines synchronise through and one engine per hardware unit,
// each fed its instruction stream from the program. Later blocks (VPU, DMA, HBM, SRAM, ICI)
// join here as members wired to the engines that use them.
#include <systemc>

#include <memory>
#include <vector>

#include "models/chip/engine.hpp"
#include "models/chip/semaphores.hpp"
#include "models/mxu/mxu_engine.hpp"
#include "sim/config.hpp"
#include "sim/program.hpp"

namespace systolic {

class Chip : public sc_core::sc_module {
 public:
  // Throws InputError when a stream names an engine this chip does not have.
  Chip(const sc_core::sc_module_name& name, const ChipConfig& config, const Program& program,
       GridObserver* observer = nullptr);

  const std::vector<MxuEngine*>& mxus() const { return mxus_; }
  std::vector<const Engine*> engines() const;
  const SemaphoreBank& semaphores() const { return semaphores_; }

 private:
  SemaphoreBank semaphores_;
  std::vector<std::unique_ptr<Engine>> owned_;
  std::vector<MxuEngine*> mxus_;
};

}  // namespace systolic
