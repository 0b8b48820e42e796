#pragma once
// A SCALE-Sim v2 configuration file (.cfg, an INI file: scalesim/scale_config.py) read as a
// chip config (docs/config.md, "SCALE-Sim .cfg files"). The keys that describe the array map
// onto ours; the ones that only place data in SCALE-Sim's own traces are accepted and unused;
// any other key is an InputError naming the file, line and key.
#include <string>
#include <vector>

#include "models/chip/chip_config.hpp"

namespace systolic {

bool is_scalesim_cfg(const std::string& path);  // by extension: ".cfg"

// The chip a SCALE-Sim user means: one MXU of ArrayHeight x ArrayWidth PEs with SCALE-Sim's
// cycle convention and dataflow, its three SRAMs as our scratchpads, the ideal-memory what-if
// (InterfaceBandwidth: CALC, where SCALE-Sim assumes the bandwidth the array needs); then
// `overrides` as with --set.
ChipConfig load_scalesim_cfg(const std::string& path, const std::vector<std::string>& overrides);

}  // namespace systolic
