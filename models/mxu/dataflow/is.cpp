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
#include "models/mxu/grid_common.hpp"

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

const Registration<Dataflow> registration{dataflow_entry(
    {DataflowKind::is,
     "is",
     "input-stationary: A (K on rows, M on columns) held, B's N columns streamed",
     {GemmDim::k, GemmDim::m, GemmDim::n}},
    {held_operand_step_cycles, run_transposed<int8_t, int32_t>, run_transposed<float, float>})};

}  // namespace
}  // namespace systolic
