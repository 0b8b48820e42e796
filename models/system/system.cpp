#include "models/system/system.hpp"

#include <fmt/format.h>

#include "models/common/error.hpp"

namespace systolic {

System::System(const sc_core::sc_module_name& name, const ChipConfig& config, const std::vector<Program>& programs)
    : sc_module(name), fabric_(IciNetwork(config.ici, config.clock_mhz)) {
  const int n = fabric_.network.topology().chips();
  if (static_cast<int>(programs.size()) != n)
    throw InputError(fmt::format("the system has {} chips (ici.dims = {}) but {} program{} given", n,
                                 dims_text(config.ici.dims), programs.size(), programs.size() == 1 ? " was" : "s were"));
  for (int i = 0; i < n; ++i)
    chips_.push_back(std::make_unique<Chip>(fmt::format("chip{}", i).c_str(), config,
                                            programs[static_cast<size_t>(i)], nullptr, &fabric_, i));
  for (const auto& chip : chips_) chip->check_ici();
}

}  // namespace systolic
