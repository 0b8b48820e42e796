#pragma once
// What the dataflows' exact PE grids (models/mxu/dataflow/*.cpp) share: operand checks, the
// arithmetic of each operand type, the state of a grid that steps folds through the array, how a
// grid class becomes a dataflow's functions, and the weight-stationary grid that
// input-stationary reuses.
#include <cstdint>
#include <vector>

#include "models/mxu/dataflow.hpp"
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

// What a grid stepping folds through the array keeps (ws.cpp, os.cpp derive from it): the sizes
// of the run, an R x C array whose PEs take P products a step computing C (M x N) = A (M x K) x
// B (K x N); its convention; the observer and the PE states shown to it; and the folds in the
// array, oldest first, which leave it in the order they entered. Constructing one checks the
// operands.
template <class Fold>
class FoldedGrid {
 protected:
  template <class In>
  FoldedGrid(ArrayShape shape, Convention convention, const Matrix<In>& a, const Matrix<In>& b,
             GridObserver* observer)
      : R_(shape.rows),
        C_(shape.cols),
        P_(shape.rate.products),
        M_(a.rows),
        K_(a.cols),
        N_(b.cols),
        convention_(convention),
        observer_(observer) {
    check_operands(a, b);
    if (observer_) pes_.resize(static_cast<size_t>(R_ * C_));
  }

  Fold& fold(int64_t f) { return live_[static_cast<size_t>(f - first_live_)]; }

  // Drops the folds at the front that `drained(fold)` says have left the array; true once the
  // last of `folds` (index folds - 1) has.
  template <class Drained>
  bool retire(int64_t folds, Drained drained) {
    bool finished = false;
    while (!live_.empty() && drained(live_.front())) {
      if (live_.front().index == folds - 1) finished = true;
      live_.erase(live_.begin());
      ++first_live_;
    }
    return finished;
  }

  // Hands the observer this cycle's PE states (call only with one).
  void show(int64_t t) { observer_->on_cycle(static_cast<uint64_t>(t), pes_); }

  const int64_t R_, C_, P_, M_, K_, N_;  // P_: products per PE per step
  const Convention convention_;
  GridObserver* const observer_;
  std::vector<PeState> pes_;  // what the observer is shown; empty without one
  std::vector<Fold> live_;    // folds [first_live_, first_live_ + live_.size()) still in the array
  int64_t first_live_ = 0;
};

// The exact grid of a grid class template G: G<In>(shape, convention, a, b, observer).run(c).
template <template <class> class G, class In, class Out>
uint64_t run(ArrayShape shape, Convention convention, const Matrix<In>& a, const Matrix<In>& b,
             Matrix<Out>& c, GridObserver* observer) {
  return G<In>(shape, convention, a, b, observer).run(c);
}

// The functions of a dataflow whose exact grid is the class template G, for both operand types.
template <template <class> class G>
DataflowFunctions grid_functions(StepCycles step_cycles) {
  return {step_cycles, run<G, int8_t, int32_t>, run<G, float, float>};
}

// The weight-stationary grid (ws.cpp): B held in the array, A streamed.
uint64_t run_weight_stationary(ArrayShape shape, Convention convention, const Matrix<int8_t>& a,
                               const Matrix<int8_t>& b, Matrix<int32_t>& c, GridObserver* observer);
uint64_t run_weight_stationary(ArrayShape shape, Convention convention, const Matrix<float>& a,
                               const Matrix<float>& b, Matrix<float>& c, GridObserver* observer);

}  // namespace systolic::grid
