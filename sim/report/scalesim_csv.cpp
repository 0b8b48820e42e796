#include "sim/report/scalesim_csv.hpp"

#include <fmt/format.h>

#include "models/common/error.hpp"

namespace systolic {

std::string scalesim_compute_report(const nlohmann::ordered_json& report) {
  const auto& chips = report["chips"];
  if (chips.size() != 1)
    throw InputError(fmt::format("--scalesim-reports: SCALE-Sim's reports describe one array; this run has {} chips",
                                 chips.size()));
  std::string out = "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %,\n";
  int id = 0;
  for (const auto& l : chips[0]["layers"]) {
    if (l["kind"] != "matmul") continue;  // SCALE-Sim's layers are all GEMMs
    out += fmt::format("{}, {}, {}, {}, {},\n", id++, l["cycles"].get<uint64_t>(),
                       l["mxu_stalled_cycles"].get<uint64_t>(), 100 * l["utilization"].get<double>(),
                       100 * l["mapping_efficiency"].get<double>());
  }
  return out;
}

}  // namespace systolic
