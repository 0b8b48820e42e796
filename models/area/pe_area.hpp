#pragma once
// Bare area of one processing element at 45 nm: its multiplier, its accumulator's adder and
// its pipeline registers, from published cell areas (docs/area.md, "MAC area").
#include "models/common/dtype.hpp"

namespace systolic {

// um^2 at 45 nm of a PE multiplying `dtype` (one of the kMxuDTypes) and accumulating in int32
// (int8) or fp32 (floats).
double pe_um2_at_45nm(DType dtype);

// um^2 at 45 nm of one fp32 vector ALU (a multiplier and an adder): a VPU lane-sublane.
double vector_alu_um2_at_45nm();

}  // namespace systolic
