#pragma once
// The `exact` MXU model: an R x C PE grid stepped every cycle over plain arrays (no SystemC
// signal or process per PE), computing real values, in one of the dataflows of
// models/mxu/dataflow.hpp. Input-stationary is this weight-stationary grid with A and B
// swapped (models/mxu/dataflow/is.cpp); output-stationary is specified in os.cpp.
//
// Weight-stationary dataflow and timing (docs/mxu.md has the pictures; the closed form is
// held_operand_cycles in mxu_timing.hpp):
//  * Fold order: for each column fold (N in chunks of C), for each row fold (K in chunks of R).
//  * Weight load of fold f starts at cycle L_f and feeds the top of column c at cycles
//    L_f + c + j (j = 0..R-1, column-skewed); weights shift down one row per cycle into the
//    PE's shadow bank and all rows of column c hold fold f's weights after cycle L_f + c + R - 1.
//  * Streaming of fold f starts at S_f: activation A[m][k0 + r] enters array row r at cycle
//    S_f + m + r and moves one column right per cycle, so PE(r, c) sees it at S_f + m + r + c.
//    There it adds a * w (w from fold f's bank) to the partial sum arriving from PE(r-1, c).
//  * Output (m, c) of fold f leaves the bottom of column c after cycle S_f + m + R - 1 + c and
//    is added into the output accumulator C[m][n0 + c] (row folds accumulate there).
//  * Controller: L_0 = 0 and S_f = L_f + R in both conventions;
//      tpu:      L_{f+1} = S_f (two weight banks: the next fold loads under this fold's stream),
//                S_f also waits for S_{f-1} + M (the stream port is busy M cycles per fold);
//      scalesim: L_{f+1} = S_f + M + R + C - 2 (load only once the array has drained).
//  * The run ends when the last output has left the array; its length in cycles is returned.
// int8 operands accumulate in int32 (two's-complement wrap); fp8/bf16/fp16/fp32 operands
// (already rounded to their format, see numeric.hpp) multiply and accumulate in fp32.
#include <cstdint>
#include <vector>

#include "models/common/dtype.hpp"
#include "models/mxu/mxu_timing.hpp"

namespace systolic {

// Row-major dense matrix.
template <class T>
struct Matrix {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<T> data;
  Matrix() = default;
  Matrix(int64_t r, int64_t c) : rows(r), cols(c), data(static_cast<size_t>(r * c), T{}) {}
  T& operator()(int64_t r, int64_t c) { return data[static_cast<size_t>(r * cols + c)]; }
  const T& operator()(int64_t r, int64_t c) const { return data[static_cast<size_t>(r * cols + c)]; }
};

// What one PE holds at the end of a cycle, for waveforms and the browser view.
// Field names follow weight-stationary; under os `weight` is the B value passing down,
// `activation` the A value passing right and `psum` the PE's own accumulator; under is
// `weight` is the held A value and `activation` the streamed B value.
struct PeState {
  double weight = 0;      // active (stationary) weight used this cycle
  double shadow = 0;      // weight being shifted in for the next fold
  double activation = 0;  // activation passing through this cycle
  double psum = 0;        // partial sum leaving this PE downwards
  bool active = false;    // a real (m, fold) pair was processed this cycle
  int fold = -1;          // fold whose data is in this PE, -1 when empty
  int64_t row = -1;       // the streamed index (ws: m, os: k, or its step at mxu.rate > 1; is: n), -1 when empty
};

// Optional per-cycle callback; only small arrays should use it (it costs R*C per cycle).
class GridObserver {
 public:
  virtual ~GridObserver() = default;
  // `pes` is row-major R x C, valid only during the call.
  virtual void on_cycle(uint64_t cycle, const std::vector<PeState>& pes) = 0;
};

class PeGrid {
 public:
  PeGrid(ArrayShape shape, Convention convention, DataflowKind dataflow = DataflowKind::ws);

  // C (M x N) = A (M x K) * B (K x N), stepped cycle by cycle; returns the cycle count.
  uint64_t run(const Matrix<int8_t>& a, const Matrix<int8_t>& b, Matrix<int32_t>& c,
               GridObserver* observer = nullptr);
  uint64_t run(const Matrix<float>& a, const Matrix<float>& b, Matrix<float>& c,
               GridObserver* observer = nullptr);

  ArrayShape shape() const { return shape_; }

 private:
  ArrayShape shape_;
  Convention convention_;
  DataflowKind dataflow_;
};

}  // namespace systolic
