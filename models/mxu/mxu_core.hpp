#pragma once
// What one MXU does with a matmul instruction, in plain C++ (no SystemC): either the closed
// form (`fast`) or the PE grid stepped cycle by cycle on real operands (`exact`). Both return
// the instruction's duration in cycles; the tests hold them equal.
#include <cstdint>
#include <memory>

#include "models/isa/program.hpp"
#include "models/mxu/dataflow.hpp"
#include "models/mxu/mxu_timing.hpp"
#include "models/mxu/pe_grid.hpp"

namespace systolic {

class MxuCore {
 public:
  virtual ~MxuCore() = default;
  // `layer_seed` picks the exact model's operand values (workloads carry shapes, not data).
  virtual uint64_t execute(const MatmulOp& op, uint64_t layer_seed) = 0;
};

// What an MXU needs of the chip's config: its geometry, its rate per compute type, its cycle
// convention and dataflow.
struct MxuSetup {
  ArrayShape shape;  // R x C (rate unused: each matmul runs at rates[its compute type])
  MacRates rates{};
  Convention convention = Convention::tpu;
  DataflowKind dataflow = DataflowKind::ws;
  ArrayShape for_type(DType compute) const { return at_rate(shape, rates, compute); }
};

std::unique_ptr<MxuCore> make_fast_mxu(const MxuSetup& setup);
// `observer` (may be null) sees every cycle of the grid; it must outlive the core.
std::unique_ptr<MxuCore> make_exact_mxu(const MxuSetup& setup, GridObserver* observer = nullptr);

// The operands the exact model computes on for (op, seed): int8 uniform in [-128, 127];
// float types uniform in [-2, 2) rounded to the operand format. Exposed for tests and views.
Matrix<int8_t> int8_operand(int64_t rows, int64_t cols, uint64_t seed);
Matrix<float> float_operand(int64_t rows, int64_t cols, DType dtype, uint64_t seed);

}  // namespace systolic
