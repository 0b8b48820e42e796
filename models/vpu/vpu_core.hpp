#pragma once
// The vector unit (VPU): the non-matmul work of a layer (elementwise add/mul, activations,
// normalisations, softmax, rotary embedding), in plain C++ (no SystemC). A closed-form cost
// model; models/vpu/vpu_engine.hpp wraps it as a SystemC engine. docs/transformers.md has
// the cost table and where each number comes from.
//
// Machine model (after the TPU v2/v3 TensorCore: Norrie et al., "The Design Process for
// Google's Training Chips: TPUv2 and TPUv3", IEEE Micro 2021 / Hot Chips 2020 — a 2-D SIMD
// vector unit of 128 lanes x 8 sublanes of 32-bit ALUs, two vector-ALU slots per VLIW
// bundle; JAX Pallas documents the same (8, 128) vector-register shape):
//  * a vector register ("vreg") holds `sublanes` rows x `lanes` columns of 32-bit values; an
//    [rows, cols] tensor occupies ceil(rows / sublanes) x ceil(cols / lanes) vregs (a partial
//    vreg costs a full one: static hardware computes the padding too);
//  * every cycle the VPU issues up to `ops_per_cycle` vreg operations (one op = one ALU op on
//    every element of a vreg);
//  * a transcendental (exp, tanh, reciprocal, rsqrt) costs `transcendental_ops` vreg ops
//    (a conservative stand-in for the separate transcendental unit, whose rate is not public);
//  * a reduction along a row (sum, max) first accumulates the row's vregs elementwise (counted
//    in the per-element ops), then reduces the 128 lanes of the last vreg in ceil(log2 lanes)
//    rotate-and-combine steps of 2 ops each;
//  * loads, stores and bf16 <-> fp32 unpacking use the load/store slots and cost nothing here
//    (all arithmetic is in fp32 lanes; the op's dtype only sizes its memory traffic);
//  * each instruction pays `latency_cycles` once (pipeline fill and drain).
//
//   vreg_ops(kind, rows, cols) = ceil(rows / sublanes) *
//       ( ceil(cols / lanes) * elem_ops(kind)
//       + reductions(kind) * 2 * ceil(log2 lanes)
//       + row_ops(kind) )
//   cycles = latency_cycles + ceil(vreg_ops / ops_per_cycle)        (0 when rows*cols == 0)
//
// Per-element ALU ops, T = transcendental_ops (default 4):
//   kind       elem_ops   reductions  row_ops   what is counted
//   add        1          0           0         a + b
//   mul        1          0           0         a * b
//   relu       1          0           0         max(x, 0)
//   gelu       8 + T      0           0         tanh form: x^2, x^3, *c1, +x, *c2, tanh, +1, *x, *0.5
//   silu       3 + 2T     0           0         x / (1 + exp(-x)): neg, exp, +1, recip, *x
//   rmsnorm    4          1           2 + T     x^2, sum; *1/n, +eps, rsqrt; *rstd, *gamma
//   layernorm  7          2           3 + T     sum x, x - mu, ^2, sum; *1/n twice, +eps, rsqrt;
//                                               *rstd, *gamma, +beta
//   softmax    4 + T      2           T         max, x - max, exp, sum; recip; *1/sum
//   rope       4          0           0         x*cos + rotate_half(x)*sin: permute, 2 mul, add
//                                               (cos/sin tables are loaded, not computed)
//   dequantize 1          0           0         float(q) * scale: int8/int4 weights to the
//                                               activations' float type (docs/precision.md)
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/config_issue.hpp"
#include "models/common/dtype.hpp"
#include "models/common/names.hpp"
#include "models/isa/vpu_op.hpp"

namespace systolic {

// Proposed chip config keys: vpu.lanes, vpu.sublanes, vpu.ops_per_cycle,
// vpu.transcendental_ops, vpu.latency_cycles. Peak rate: lanes * sublanes * ops_per_cycle
// element-ops per cycle (TPU v2/v3-like default: 128 * 8 * 2 = 2048).
struct VpuConfig {
  int64_t lanes = 128;             // columns of a vreg (elements along a row), [1, 65536]
  int64_t sublanes = 8;            // rows of a vreg, [1, 1024]
  int64_t ops_per_cycle = 2;       // vector-ALU slots: vreg ops issued per cycle, [1, 64]
  int64_t transcendental_ops = 4;  // vreg ops per exp/tanh/recip/rsqrt, [1, 1024] (assumption)
  int64_t latency_cycles = 8;      // per instruction: pipeline fill + drain, [0, 1e6] (assumption)
  std::optional<ConfigIssue> validate() const;
  int64_t elements_per_cycle() const { return lanes * sublanes * ops_per_cycle; }
};

// The cost table row of a kind under a config (T = config.transcendental_ops).
struct VectorCost {
  int64_t elem_ops = 0;    // vreg ops per vreg of the tensor
  int64_t reductions = 0;  // cross-lane reductions per row group (sum, max)
  int64_t row_ops = 0;     // vreg ops per row group on the reduced values (rsqrt, 1/sum)
};
VectorCost vector_cost(const VpuConfig& config, VectorKind kind);

// ceil(rows / sublanes) * (ceil(cols / lanes) * elem_ops + reductions * 2 * ceil(log2 lanes)
// + row_ops). Throws std::invalid_argument for negative sizes or an invalid config,
// std::overflow_error when the count does not fit in 64 bits.
uint64_t vpu_vreg_ops(const VpuConfig& config, VectorKind kind, uint64_t rows, uint64_t cols);

// latency_cycles + ceil(vreg_ops / ops_per_cycle); 0 when rows or cols is 0.
uint64_t vpu_cycles(const VpuConfig& config, VectorKind kind, uint64_t rows, uint64_t cols);
uint64_t vpu_cycles(const VpuConfig& config, const VpuOp& op);

// Operand traffic through VMEM: add/mul read two [rows, cols] operands, every other kind
// one (norm scales and rope tables, one row each, are not counted); all write one.
struct VpuTraffic {
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
};
VpuTraffic vpu_traffic(const VpuOp& op);

}  // namespace systolic
