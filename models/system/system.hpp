#pragma once
// A multi-chip system: one full chip (models/chip/) per position of the ICI topology, each
// running its own program, joined by the links of models/ici/. Every chip's ICI engine sends
// over the shared network and signals semaphores on the receiving chip.
//
// Chips that evolve identically (models/system/symmetry.hpp) can be simulated once per class:
// only each class's representative is built, and a representative's message stands for the
// same message of every chip of its class (IciFabric::mirrored), landing where those land; a
// chunk passing through a chip that is not simulated is booked by its representative's router
// (IciFabric::routers), which stands for it.
#include <systemc>

#include <memory>
#include <vector>

#include "models/chip/chip.hpp"
#include "models/chip/chip_config.hpp"
#include "models/ici/ici_engine.hpp"
#include "models/isa/program.hpp"
#include "models/system/symmetry.hpp"

namespace systolic {

class System : public sc_core::sc_module {
 public:
  // programs[i] runs on chip i; there must be one per chip of config.ici. Every chip is
  // simulated. Throws InputError for a program a chip cannot run or a message the network
  // cannot deliver.
  System(const sc_core::sc_module_name& name, const ChipConfig& config, const std::vector<Program>& programs);
  // Only the representatives of `classes` are simulated (chip_classes() of these programs).
  // The other chips' messages are checked as if they ran.
  System(const sc_core::sc_module_name& name, const ChipConfig& config,
         const std::vector<const Program*>& programs, ChipClasses classes);

  // The simulated chips, in chip order (chip i of the system is chips()[i] when every chip is).
  const std::vector<std::unique_ptr<Chip>>& chips() const { return chips_; }
  const ChipClasses& classes() const { return classes_; }
  // The simulated chip that chip `chip` runs as (its class's representative).
  const Chip& chip_of(int chip) const;
  Chip& chip_of(int chip) { return *chips_[simulated_index_.at(static_cast<size_t>(chip))]; }
  const IciNetwork& network() const { return fabric_.network; }

 private:
  void build(const ChipConfig& config, const std::vector<const Program*>& programs);
  void mirror(const std::vector<const Program*>& programs);

  IciFabric fabric_;
  ChipClasses classes_;
  std::vector<std::unique_ptr<Chip>> chips_;
  std::vector<size_t> simulated_index_;  // per chip: its representative's place in chips_
};

}  // namespace systolic
