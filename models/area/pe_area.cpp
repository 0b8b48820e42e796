// Areas from M. Horowitz, "Computing's energy problem", ISSCC 2014 (the area column of the
// energy table, 45 nm): 8b add 36, 32b add 137, 8b mult 282, 16b FP add 1360, 16b FP mult 1640,
// 32b FP add 4184, 32b FP mult 7700 um^2. Narrow float multipliers scale the fp16 multiplier
// by (mantissa bits + 1)^2 as the energy table does (bf16 64/121, e4m3 16/121, e5m2 9/121).
// Registers: NanGate FreePDK45 DFF_X1, 4.522 um^2 per bit.
#include "models/area/pe_area.hpp"

#include <stdexcept>

namespace systolic {
namespace {

constexpr double kInt8Mult = 282, kInt32Add = 137, kFp16Mult = 1640, kFp32Add = 4184, kFp32Mult = 7700;
constexpr double kFlipFlop = 4.522;

// Register bits of a weight-stationary PE: two weights (double-buffered), the activation it
// passes on, the partial sum it passes down (int32 / fp32).
double register_bits(int operand_bits) { return 3.0 * operand_bits + 32.0; }

}  // namespace

double pe_um2_at_45nm(DType dtype) {
  double mult = 0, add = kFp32Add;
  int bits = 16;
  switch (dtype) {
    case DType::int8: mult = kInt8Mult, add = kInt32Add, bits = 8; break;
    case DType::fp8_e4m3: mult = kFp16Mult * 16 / 121, bits = 8; break;
    case DType::fp8_e5m2: mult = kFp16Mult * 9 / 121, bits = 8; break;
    case DType::bf16: mult = kFp16Mult * 64 / 121; break;
    case DType::fp16: mult = kFp16Mult; break;
    case DType::fp32: mult = kFp32Mult, bits = 32; break;
    case DType::int4: throw std::logic_error("pe_um2_at_45nm: int4 is never multiplied by the MXU");
  }
  return mult + add + register_bits(bits) * kFlipFlop;
}

double vector_alu_um2_at_45nm() { return kFp32Mult + kFp32Add + 3 * 32 * kFlipFlop; }

}  // namespace systolic
