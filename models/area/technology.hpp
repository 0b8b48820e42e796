#pragma once
// Process nodes: how area, SRAM density, dynamic energy and wafer cost change between them
// (docs/area.md, "Technology nodes", has every figure and its source). Area and energy
// figures elsewhere are given at 45 nm (Horowitz, ISSCC 2014, the reference of the energy
// table) and scaled by the node's factors.
#include <cstddef>

#include "models/common/names.hpp"

namespace systolic {

enum class TechNode { n45, n28, n16, n7, n5 };
inline constexpr auto kTechNodeNames = name_table<TechNode>({{TechNode::n45, "45nm"},
                                                             {TechNode::n28, "28nm"},
                                                             {TechNode::n16, "16nm"},
                                                             {TechNode::n7, "7nm"},
                                                             {TechNode::n5, "5nm"}});

struct NodeFactors {
  double logic_area;        // logic area relative to 45 nm
  double sram_bitcell_um2;  // high-density 6T bit cell
  double dynamic_energy;    // dynamic energy per event relative to 45 nm
  double wafer_usd;         // one processed 300 mm wafer
};

// The node's row of the table in technology.cpp.
const NodeFactors& node_factors(TechNode node);

}  // namespace systolic
