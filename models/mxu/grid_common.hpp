#pragma once
// What the dataflows' exact PE grids (models/mxu/dataflow/*.cpp) share: operand checks, the
// arithmetic of each operand type, and the weight-stationary grid that input-stationary reuses.
#include <cstdint>

#include "models/mxu/mxu_timing.hpp"
#include "models/mxu/pe_grid.hpp"

namespace systolic::grid {

// Throws std::invalid_argument for empty, mismatched or mis-sized operands.
template <class In>
void check_operands(const Matrix<In>& a, const Matrix<In>& b);
extern template void check_operands(const Matrix<int8_t>&, const Matrix<int8_t>&);
extern template void check_operands(const Matrix<float>&, const Matrix<float>&);

// int8 operands are sign-extended to uint32 and computed modulo 2^32 (== int32 two's-complement
// wrap, without signed-overflow UB); floats multiply and add in fp32.
template <class In>
struct Traits;
template <>
struct Traits<int8_t> {
  using V = uint32_t;
  using Out = int32_t;
  static V value(int8_t x) { return static_cast<V>(static_cast<int32_t>(x)); }
  static Out out(V v) { return static_cast<Out>(v); }  // modular (C++20 rule, GCC's rule)
  static double to_double(V v) { return static_cast<int32_t>(v); }
};
template <>
struct Traits<float> {
  using V = float;
  using Out = float;
  static V value(float x) { return x; }
  static Out out(V v) { return v; }
  static double to_double(V v) { return v; }
};

// The weight-stationary grid (ws.cpp): B held in the array, A streamed.
uint64_t run_weight_stationary(ArrayShape shape, Convention convention, const Matrix<int8_t>& a,
                               const Matrix<int8_t>& b, Matrix<int32_t>& c, GridObserver* observer);
uint64_t run_weight_stationary(ArrayShape shape, Convention convention, const Matrix<float>& a,
                               const Matrix<float>& b, Matrix<float>& c, GridObserver* observer);

}  // namespace systolic::grid
