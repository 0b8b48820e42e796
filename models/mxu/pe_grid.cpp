// PeGrid: the `exact` MXU model's entry point; the grid of each dataflow is stepped in
// models/mxu/dataflow/<name>.cpp.
#include "models/mxu/pe_grid.hpp"

#include <stdexcept>
#include <string>

#include "models/mxu/dataflow.hpp"

namespace systolic {

PeGrid::PeGrid(ArrayShape shape, Convention convention, DataflowKind dataflow)
    : shape_(shape), convention_(convention), dataflow_(dataflow) {
  if (shape.rows <= 0 || shape.cols <= 0)
    throw std::invalid_argument("PeGrid: array shape must be at least 1x1, got " +
                                std::to_string(shape.rows) + "x" + std::to_string(shape.cols));
}

uint64_t PeGrid::run(const Matrix<int8_t>& a, const Matrix<int8_t>& b, Matrix<int32_t>& c,
                     GridObserver* observer) {
  return dataflow_of(dataflow_).run_grid(shape_, convention_, a, b, c, observer);
}

uint64_t PeGrid::run(const Matrix<float>& a, const Matrix<float>& b, Matrix<float>& c,
                     GridObserver* observer) {
  return dataflow_of(dataflow_).run_grid(shape_, convention_, a, b, c, observer);
}

}  // namespace systolic
