#pragma once
// A multi-chip system: one full chip (models/chip/) per position of the ICI topology, each
// running its own program, joined by the links of models/ici/. Every chip's ICI engine sends
// over the shared network and signals semaphores on the receiving chip.
#include <systemc>

#include <memory>
#include <vector>

#include "models/chip/chip.hpp"
#include "models/chip/chip_config.hpp"
#include "models/ici/ici_engine.hpp"
#include "models/isa/program.hpp"

namespace systolic {

class System : public sc_core::sc_module {
 public:
  // programs[i] runs on chip i; there must be one per chip of config.ici. Throws InputError
  // for a program a chip cannot run or a message the network cannot deliver.
  System(const sc_core::sc_module_name& name, const ChipConfig& config, const std::vector<Program>& programs);

  const std::vector<std::unique_ptr<Chip>>& chips() const { return chips_; }
  const IciNetwork& network() const { return fabric_.network; }

 private:
  IciFabric fabric_;
  std::vector<std::unique_ptr<Chip>> chips_;
};

}  // namespace systolic
