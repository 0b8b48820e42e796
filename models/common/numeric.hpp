#pragma once
// Operand numerics: rounding an fp32 value to the value set of an MXU operand format.
//
// Every format here is a subset of fp32, so a rounded value is still carried as a float.
// Rounding is round-to-nearest, ties-to-even, computed exactly (independent of the FPU
// rounding mode), with these special values:
//
//   format     bits  max finite   min subnormal  overflow (|x| rounds past max)  inf in   NaN in
//   bf16       1-8-7 ~3.39e38     2^-133         +-inf (IEEE)                    +-inf    NaN
//   fp16       1-5-10 65504       2^-24          +-inf (IEEE)                    +-inf    NaN
//   fp8_e5m2   1-5-2  57344       2^-16          +-inf (IEEE-like, OCP E5M2)     +-inf    NaN
//   fp8_e4m3   1-4-3  448         2^-9           +-448 (saturate)                +-448    NaN
//   fp32       identity (NaN, inf and subnormals pass through unchanged)
//
// fp8_e4m3 is OCP/NVIDIA E4M3FN: no infinities, S.1111.111 is NaN, so the largest finite
// value is 1.75 * 2^8 = 448. We convert in saturating mode (OCP "saturate", CUDA
// __NV_SATFINITE): any magnitude that would round above 448, including +-inf, becomes +-448.
// The sign of zero is kept (a tiny negative value rounds to -0).
//
// DType::int8 rounds to the nearest integer (ties to even) and saturates to [-128, 127];
// NaN becomes 0.
#include <cstdint>

#include "models/common/dtype.hpp"

namespace systolic {

float round_to(DType type, float x);

// Clamps to [-128, 127].
int8_t saturate_int8(int x);

}  // namespace systolic
