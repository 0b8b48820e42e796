#pragma once
// What a die costs: gross dies on a 300 mm wafer, Poisson yield, the wafer's price
// (docs/area.md, "Cost proxy").
#include "models/area/technology.hpp"

namespace systolic {

struct DieCost {
  double dies_per_wafer = 0;  // gross: pi r^2 / A - pi d / sqrt(2 A)
  double yield = 0;           // exp(-A * D0)
  double usd = 0;             // wafer price / (dies_per_wafer * yield)
};

// A die of `area_mm2` at a node with defect density `d0_per_cm2`.
DieCost die_cost(double area_mm2, const NodeFactors& node, double d0_per_cm2);

}  // namespace systolic
