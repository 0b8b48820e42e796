#include "models/mxu/grid_common.hpp"

#include <stdexcept>
#include <string>

namespace systolic::grid {

template <class In>
void check_operands(const Matrix<In>& a, const Matrix<In>& b) {
  if (a.rows <= 0 || a.cols <= 0 || b.cols <= 0)
    throw std::invalid_argument("PeGrid::run: empty matrix (" + std::to_string(a.rows) + "x" +
                                std::to_string(a.cols) + " times " + std::to_string(b.rows) + "x" +
                                std::to_string(b.cols) + ")");
  if (a.cols != b.rows)
    throw std::invalid_argument("PeGrid::run: A is " + std::to_string(a.rows) + "x" + std::to_string(a.cols) +
                                " but B is " + std::to_string(b.rows) + "x" + std::to_string(b.cols));
  if (a.data.size() != static_cast<size_t>(a.rows * a.cols) || b.data.size() != static_cast<size_t>(b.rows * b.cols))
    throw std::invalid_argument("PeGrid::run: matrix data size does not match its shape");
}
template void check_operands(const Matrix<int8_t>&, const Matrix<int8_t>&);
template void check_operands(const Matrix<float>&, const Matrix<float>&);

}  // namespace systolic::grid
