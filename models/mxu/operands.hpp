#pragma once
// Mixed-precision operands of one matmul, A (activations, streamed) x B (weights or KV cache,
// loaded into the array), and what the MXU computes them in (docs/precision.md):
//  * equal types run as they are: int8 x int8 accumulates in int32, floats in fp32;
//  * two float types of different widths run at the wider one's rate (the narrower is widened
//    on the way into the array: exact, free); fp8_e4m3 x fp8_e5m2 runs as fp8_e4m3;
//  * integer weights (int8, int4) with 16- or 32-bit float activations are weight-only
//    quantisation: a VPU dequantise op (convert, multiply by the per-channel scale) turns each
//    weight tile into the activations' type before the MXU reads it;
//  * int4 B with int8 A is unpacked to int8 by the same VPU op (W4A8).
// Anything else (int4 activations, int8 activations with float weights, integer weights with
// fp8 activations, bf16 x fp16) is rejected: no TPU-class MXU multiplies it.
#include <string>
#include <variant>
#include <vector>

#include "models/common/dtype.hpp"

namespace systolic {

struct MxuOperands {
  DType a = DType::bf16;
  DType b = DType::bf16;
  DType compute = DType::bf16;  // what the array multiplies: its rate and MAC energy
  bool dequantize_b = false;    // B is widened to `compute` by a VPU op before the MXU
};

// The operands, or why the pair is impossible ("int4 is a weight storage type ...").
std::variant<MxuOperands, std::string> mxu_operands(DType a, DType b);

// The B types that pair with activations of type `a` ("" when `a` cannot be an activation).
std::vector<std::string> b_types_for(DType a);
// The types activations may have.
std::vector<std::string> activation_types();

}  // namespace systolic
