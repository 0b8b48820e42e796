#include "models/area/sram_model.hpp"

#include <cmath>

namespace systolic {

double sram_mm2(uint64_t bytes, const NodeFactors& node, double efficiency) {
  const double bits = 8.0 * static_cast<double>(bytes);
  return bits * node.sram_bitcell_um2 * 1e-6 / efficiency;
}

double sram_pj_per_byte(uint64_t bank_bytes, double pj_64b_at_8kib, double exponent) {
  const double ratio = static_cast<double>(bank_bytes) / 8192.0;
  return pj_64b_at_8kib * std::pow(ratio, exponent) / 8.0;
}

}  // namespace systolic
