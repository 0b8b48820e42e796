#include "models/area/die_cost.hpp"

#include <cmath>
#include <limits>

namespace systolic {

DieCost die_cost(double area_mm2, const NodeFactors& node, double d0_per_cm2) {
  constexpr double kWaferMm = 300.0;
  const double pi = 3.14159265358979323846;
  DieCost c;
  c.dies_per_wafer = pi * kWaferMm * kWaferMm / 4.0 / area_mm2 - pi * kWaferMm / std::sqrt(2.0 * area_mm2);
  c.yield = std::exp(-area_mm2 / 100.0 * d0_per_cm2);
  c.usd = c.dies_per_wafer * c.yield > 0 ? node.wafer_usd / (c.dies_per_wafer * c.yield)
                                         : std::numeric_limits<double>::infinity();
  return c;
}

}  // namespace systolic
