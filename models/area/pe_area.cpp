// Areas from M. Horowitz, "Computing's energy problem", ISSCC 2014 (the area column of the
// energy table, 45 nm): 8b add 36, 32b add 137, 8b mult 282, 16b FP add 1360, 16b FP mult 1640,
// 32b FP add 4184, 32b FP mult 7700 um^2. Narrow float multipliers scale the fp16 multiplier
// by (mantissa bits + 1)^2 as the energy table does (bf16 64/121, e4m3 16/121, e5m2 9/121).
// Registers: NanGate FreePDK45 DFF_X1, 4.522 um^2 per bit.
#include "models/area/pe_area.hpp"

#include <array>
#include <stdexcept>

namespace systolic {
namespace {

constexpr double kInt8Mult = 282, kInt32Add = 137, kFp16Mult = 1640, kFp32Add = 4184, kFp32Mult = 7700;
constexpr double kFlipFlop = 4.522;

struct PeParts {
  double multiplier, adder;  // um^2 at 45 nm
  int operand_bits;
};

// Indexed by DType (the kMxuDTypes the MXU multiplies): int8 accumulates in int32, floats in fp32.
constexpr std::array<PeParts, kMxuDTypes> kParts = {{
    {kInt8Mult, kInt32Add, 8},             // int8
    {kFp16Mult * 16 / 121, kFp32Add, 8},   // fp8_e4m3
    {kFp16Mult * 9 / 121, kFp32Add, 8},    // fp8_e5m2
    {kFp16Mult * 64 / 121, kFp32Add, 16},  // bf16
    {kFp16Mult, kFp32Add, 16},             // fp16
    {kFp32Mult, kFp32Add, 32},             // fp32
}};

// Register bits of a weight-stationary PE: two weights (double-buffered), the activation it
// passes on, the partial sum it passes down (int32 / fp32).
double register_bits(int operand_bits) { return 3.0 * operand_bits + 32.0; }

}  // namespace

double pe_um2_at_45nm(DType dtype) {
  if (!dtype_on_mxu(dtype)) throw std::logic_error("pe_um2_at_45nm: the MXU never multiplies this type");
  const PeParts& p = kParts[static_cast<size_t>(dtype)];
  return p.multiplier + p.adder + register_bits(p.operand_bits) * kFlipFlop;
}

double vector_alu_um2_at_45nm() { return kFp32Mult + kFp32Add + 3 * 32 * kFlipFlop; }

}  // namespace systolic
