#include "models/mxu/mxu_core.hpp"

#include <random>

#include "models/common/numeric.hpp"

namespace systolic {
namespace {

class FastMxu : public MxuCore {
 public:
  explicit FastMxu(const MxuSetup& setup) : setup_(setup), dataflow_(dataflow_of(setup.dataflow)) {}
  uint64_t execute(const MatmulOp& op, uint64_t) override {
    return dataflow_.cycles(setup_.for_type(op.dtype), setup_.convention, {op.m, op.k, op.n});
  }

 private:
  MxuSetup setup_;
  const Dataflow& dataflow_;
};

class ExactMxu : public MxuCore {
 public:
  ExactMxu(const MxuSetup& setup, GridObserver* observer) : setup_(setup), observer_(observer) {}
  uint64_t execute(const MatmulOp& op, uint64_t seed) override {
    PeGrid grid(setup_.for_type(op.dtype), setup_.convention, setup_.dataflow);
    // A depends on the layer's seed only, so MXUs sharing a layer by column ranges see one A;
    // each column share gets its own slice of B.
    const uint64_t b_seed = seed ^ (0x9e3779b97f4a7c15ull * static_cast<uint64_t>(op.n_offset + 1));
    if (op.dtype == DType::int8) {
      Matrix<int32_t> c(op.m, op.n);
      return grid.run(int8_operand(op.m, op.k, seed), int8_operand(op.k, op.n, b_seed), c, observer_);
    }
    Matrix<float> c(op.m, op.n);
    // Mixed precision: each operand holds values of its stored type, multiplied in fp32.
    return grid.run(float_operand(op.m, op.k, op.a(), seed),
                     float_operand(op.k, op.n, op.b(), b_seed), c, observer_);
  }

 private:
  MxuSetup setup_;
  GridObserver* observer_;
};

}  // namespace

std::unique_ptr<MxuCore> make_fast_mxu(const MxuSetup& setup) { return std::make_unique<FastMxu>(setup); }

std::unique_ptr<MxuCore> make_exact_mxu(const MxuSetup& setup, GridObserver* observer) {
  return std::make_unique<ExactMxu>(setup, observer);
}

Matrix<int8_t> int8_operand(int64_t rows, int64_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Matrix<int8_t> m(rows, cols);
  for (auto& v : m.data) v = static_cast<int8_t>(static_cast<int>(rng() & 0xff) - 128);
  return m;
}

Matrix<float> float_operand(int64_t rows, int64_t cols, DType dtype, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Matrix<float> m(rows, cols);
  // Built from raw bits rather than std::uniform_real_distribution, whose output is not
  // specified exactly by the standard: same seed, same values, on every library.
  for (auto& v : m.data) v = round_to(dtype, static_cast<float>((rng() >> 11) * 0x1.0p-53 * 4.0 - 2.0));
  return m;
}

}  // namespace systolic
