// The input-stationary dataflow: A held in the array (K on rows, M on columns), the columns of
// B streamed through it (SCALE-Sim v2, scalesim/compute/systolic_compute_is.py: Sr = K,
// Sc = M, T = N).
//
// It is weight-stationary with the operands' roles swapped: C^T = B^T A^T, so the grid is the
// weight-stationary one run on A' = B^T (N x K, streamed) and B' = A^T (K x M, held), and
// C = (C')^T. Every timing rule of pe_grid.hpp holds with M and N exchanged; the observer sees
// `weight` = the held A value and `row` = n, the column of B passing through.
#include <memory>

#include "models/mxu/dataflow.hpp"
#include "models/mxu/dataflow/grid_common.hpp"

namespace systolic {
namespace {

template <class T>
Matrix<T> transposed(const Matrix<T>& x) {
  Matrix<T> t(x.cols, x.rows);
  for (int64_t r = 0; r < x.rows; ++r)
    for (int64_t c = 0; c < x.cols; ++c) t(c, r) = x(r, c);
  return t;
}

template <class In, class Out>
uint64_t run_transposed(ArrayShape a, Convention c, const Matrix<In>& A, const Matrix<In>& B, Matrix<Out>& C,
                        GridObserver* observer) {
  grid::check_operands(A, B);
  Matrix<Out> ct;
  const uint64_t cycles = grid::run_weight_stationary(a, c, transposed(B), transposed(A), ct, observer);
  C = transposed(ct);
  return cycles;
}

class InputStationary : public GridDataflow<InputStationary> {
 public:
  InputStationary()
      : GridDataflow({DataflowKind::is, "is",
                     "input-stationary: A (K on rows, M on columns) held, B's N columns streamed",
                     {GemmDim::k, GemmDim::m, GemmDim::n}}) {}

  uint64_t step_cycles(ArrayShape a, Convention c, MatmulShape s) const override {
    return held_operand_cycles(a, c, checked_mul(folds(a, s).row_folds, folds(a, s).col_folds), s.n);
  }

  // A read once into the array; B once per column fold (every M slice streams all of B's K
  // slice); partial sums read back and written once per row fold (K), as for ws.
  OperandTraffic traffic(ArrayShape a, MatmulShape s) const override {
    const Folds f = folds(a, s);
    const uint64_t mk = s.m * s.k, kn = s.k * s.n, mn = s.m * s.n;
    return {mk, kn * f.col_folds, mn * (f.row_folds - 1), mn * f.row_folds};
  }

  template <class In, class Out>
  static uint64_t step_grid(ArrayShape a, Convention c, const Matrix<In>& A, const Matrix<In>& B, Matrix<Out>& C,
                            GridObserver* observer) {
    return run_transposed(a, c, A, B, C, observer);
  }
};

const DataflowRegistration kRegistration{std::make_unique<InputStationary>()};

}  // namespace
}  // namespace systolic
