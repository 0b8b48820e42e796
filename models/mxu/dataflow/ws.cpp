// The weight-stationary dataflow: B held in the array, A streamed (pe_grid.hpp specifies the
// timing; the closed form is held_operand_cycles in mxu_timing.hpp). The grid, stepped:
//
// A type at P = rate.products products a cycle (mxu.rate.<dtype>) packs P consecutive K
// indices into each PE: a fold covers KR = R x P rows of K, PE row r holding K rows rP .. rP+P-1
// ("lanes"). With P = 1 a lane is a row.
//
// State, all plain arrays:
//  * psum_   R x C  the partial sum each PE passes down at the end of the cycle;
//  * bank_   2 x KR x C  the two weight banks, one row per lane; fold f lives in bank f % 2;
//  * act_    per K index k: A[., k] reversed in m (act_[k * pitch + j] = A[M-1-j][k]), K padded
//            with zero rows up to a multiple of KR, so a row's activations at a cycle are one
//            contiguous run (see below);
//  * acc_    M x N output accumulator (rows padded, see padded_pitch).
//
// One cycle t:
//  1. Controller (pe_grid.hpp): the next fold starts streaming when its weights have landed
//     (column 0 holds all R of them) and the stream port is free; the next fold starts loading
//     when the previous one starts streaming (tpu) or has drained from the array (scalesim).
//  2. Weight shift-in, for every load in flight: column c of bank f%2 shifts down one row (P
//     lanes) and takes P new weights at the top while c <= t - L_f <= c + R - 1. The row-r PEs
//     that shift form one contiguous column range, so this is a handful of short copies per lane.
//  3. Compute, rows bottom-up so that row r-1 still holds last cycle's values:
//        psum[r][c] = psum[r-1][c] + sum over j < P, in order, of A[m][k0+rP+j] * W_f[rP+j][c],
//     m = t - S_f - r - c (each product added in turn, so the fp32 sums are those of a
//     KR-row array with P = 1).
//     PE(r, c) works on diagonal d = t - r - c; fold f owns diagonals [S_f, S_f + M), and
//     diagonals owned by no fold are bubbles (psum 0). Across a row d falls as c grows, so the
//     row splits into at most one segment per live fold; inside a segment m = base - c and the
//     activation index M-1-m = (M-1-base) + c rises with c: the inner loop is a contiguous,
//     branch-free, vectorizable multiply-add.
//  4. Output: the bottom row's active columns leave the array; (m, c) with c < N_f is added to
//     acc[m][n0 + c]. A fold has drained once all M x C of its outputs (padded columns too, as
//     they occupy the drain) have left; the run ends when the last fold has drained.
//  5. Observer (if any) gets every PE's state (values, fold, and the row m of A passing through).
//
// Numerics: int8 operands are sign-extended to uint32 and everything is computed modulo 2^32
// (== int32 two's-complement wrap, without signed-overflow UB). Float operands are multiplied
// and added in fp32, in exactly the order above; the build uses -ffp-contract=off so no FMA
// changes the rounding. Padded rows/columns have zero weights and zero activations, and adding
// +0 never changes a partial sum (psum starts at +0 and can never become -0), so padding does
// not perturb the results.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "models/common/divide.hpp"
#include "models/mxu/dataflow.hpp"
#include "models/mxu/grid_common.hpp"

namespace systolic {
namespace {

// Per-fold run-time state, kept only while the fold is loading, streaming or draining.
struct FoldState {
  int64_t index = 0;
  int64_t k0 = 0, n0 = 0;  // first K row and N column of the fold
  int64_t kf = 0, nf = 0;  // real (unpadded) rows and columns of the fold
  int64_t load = -1;       // L_f
  int64_t stream = -1;     // S_f, -1 until streaming starts
  bool landed = false;     // weights landed: column 0 holds all R weights
  int64_t outputs = 0;     // outputs that have left the bottom of the array
};

// What the hot row loop needs of a streaming fold.
template <class V>
struct Segment {
  int64_t stream;
  int64_t k0;
  const V* bank;
};

// The hot loop, kept out of line so that it gets a clean register allocation.
template <class V>
__attribute__((noinline)) void multiply_add(V* __restrict cur, const V* __restrict prev,
                                            const V* __restrict a, const V* __restrict w,
                                            int64_t n) {
  for (int64_t i = 0; i < n; ++i) cur[i] = prev[i] + a[i] * w[i];
}

// The PE's further lanes (P > 1), added in place.
template <class V>
__attribute__((noinline)) void accumulate(V* __restrict cur, const V* __restrict a, const V* __restrict w,
                                          int64_t n) {
  for (int64_t i = 0; i < n; ++i) cur[i] = cur[i] + a[i] * w[i];
}

template <class In>
class WsGrid : grid::FoldedGrid<FoldState> {
  using T = grid::Traits<In>;
  using V = typename T::V;
  using Out = typename T::Out;

 public:
  WsGrid(ArrayShape shape, Convention convention, const Matrix<In>& a, const Matrix<In>& b,
         GridObserver* observer)
      : FoldedGrid(shape, convention, a, b, observer), KR_(R_ * P_), b_(b) {
    row_folds_ = ceil_div(K_, KR_);
    col_folds_ = ceil_div(N_, C_);
    folds_ = row_folds_ * col_folds_;

    act_pitch_ = padded_pitch(M_);
    acc_pitch_ = padded_pitch(N_);
    act_.assign(static_cast<size_t>(row_folds_ * KR_ * act_pitch_), V{});
    for (int64_t m = 0; m < M_; ++m)
      for (int64_t k = 0; k < K_; ++k) act_[k * act_pitch_ + (M_ - 1 - m)] = T::value(a(m, k));
    psum_.assign(static_cast<size_t>(R_ * C_), V{});
    zeros_.assign(static_cast<size_t>(C_), V{});
    bank_[0].assign(static_cast<size_t>(KR_ * C_), V{});
    bank_[1].assign(static_cast<size_t>(KR_ * C_), V{});
    acc_.assign(static_cast<size_t>(M_ * acc_pitch_), V{});
  }

  uint64_t run(Matrix<Out>& c) {
    const int64_t total = simulate();
    c = Matrix<Out>(M_, N_);
    for (int64_t m = 0; m < M_; ++m)
      for (int64_t n = 0; n < N_; ++n) c(m, n) = T::out(acc_[m * acc_pitch_ + n]);
    return static_cast<uint64_t>(total);
  }

 private:
  // Row pitch (in elements) of act_ and acc_: at least n, and an odd number of 64-byte
  // lines, so that the R rows (or C output rows) touched in one cycle fall into different
  // cache sets instead of aliasing when n is a power of two.
  static int64_t padded_pitch(int64_t n) {
    constexpr int64_t line = 64 / sizeof(V);
    int64_t lines = ceil_div(n, line);
    if (lines % 2 == 0) ++lines;
    return lines * line;
  }

  FoldState make_fold(int64_t f, int64_t t) const {
    FoldState s;
    s.index = f;
    s.k0 = (f % row_folds_) * KR_;  // fold order: column folds outer, row folds inner
    s.n0 = (f / row_folds_) * C_;
    s.kf = std::min(KR_, K_ - s.k0);
    s.nf = std::min(C_, N_ - s.n0);
    s.load = t;
    return s;
  }

  // Step 2: one cycle of weight shift-in for a fold whose load is in flight.
  void shift_weights(FoldState& f, int64_t t) {
    V* bank = bank_[f.index & 1].data();
    const int64_t s = t - f.load;  // column c takes its weight j = s - c at the top
    const int64_t lo = std::max<int64_t>(0, s - (R_ - 1));
    for (int64_t r = std::min(R_ - 1, s); r >= 1; --r) {
      const int64_t hi = std::min(C_ - 1, s - r);  // columns whose shift has reached row r
      if (hi >= lo)
        for (int64_t j = 0; j < P_; ++j)
          std::memmove(bank + (r * P_ + j) * C_ + lo, bank + ((r - 1) * P_ + j) * C_ + lo,
                       static_cast<size_t>(hi - lo + 1) * sizeof(V));
    }
    // The weights that enter first end in row R-1 after the last shift.
    const int64_t hi = std::min(C_ - 1, s);
    for (int64_t c = lo; c <= hi; ++c) {
      const int64_t lane0 = (R_ - 1 - (s - c)) * P_;
      for (int64_t j = 0; j < P_; ++j) {
        const int64_t k = f.k0 + lane0 + j;
        bank[j * C_ + c] = (k < K_ && c < f.nf) ? T::value(b_(k, f.n0 + c)) : V{};
      }
    }
    if (s == R_ - 1) f.landed = true;
  }

  // One loop iteration per cycle, in the order of the steps at the top of this file.
  int64_t simulate() {
    for (int64_t t = 0;; ++t) {
      control(t);
      shift_loading_weights(t);
      compute(t);
      collect_outputs(t);
      if (observer_) observe(t, next_stream_);  // while the folds that drained are still visible
      if (retire(folds_, [this](const FoldState& f) { return f.stream >= 0 && f.outputs == M_ * C_; }))
        return t + 1;
    }
  }

  // 1. Controller.
  void control(int64_t t) {
    if (next_stream_ < next_load_) {
      FoldState& f = fold(next_stream_);
      if (f.landed && t >= port_free_) {
        f.stream = t;
        port_free_ = t + M_;
        ++next_stream_;
      }
    }
    if (next_load_ < folds_) {
      const bool go = next_load_ == 0 ||
                      (convention_ == Convention::tpu
                           ? next_stream_ >= next_load_      // previous fold is streaming
                           : first_live_ >= next_load_);     // previous fold has drained
      if (go) live_.push_back(make_fold(next_load_++, t));
    }
  }

  // 2. Weight shift-in.
  void shift_loading_weights(int64_t t) {
    for (int64_t f = first_loading_; f < next_load_; ++f) {
      FoldState& fs = fold(f);
      shift_weights(fs, t);
      if (t - fs.load == R_ + C_ - 2) first_loading_ = f + 1;  // column C-1 complete
    }
  }

  // 3. Compute. Streaming folds newest first: their segments come in rising column order.
  void compute(int64_t t) {
    const int64_t R = R_, C = C_, M = M_;
    streaming_.clear();
    for (int64_t f = next_stream_ - 1; f >= first_live_; --f) {
      const FoldState& fs = fold(f);
      streaming_.push_back({fs.stream, fs.k0, bank_[f & 1].data()});
    }
    for (int64_t r = R - 1; r >= 0; --r) {
      V* cur = psum_.data() + r * C;
      const V* prev = r > 0 ? psum_.data() + (r - 1) * C : zeros_.data();
      int64_t c = 0;
      for (const auto& sg : streaming_) {
        const int64_t base = t - r - sg.stream;  // m at column 0
        if (base < 0) continue;                  // not yet in this row
        const int64_t lo = std::max<int64_t>(0, base - (M - 1));
        if (lo >= C) break;                      // left this row (so have older folds)
        const int64_t hi = std::min(C - 1, base);
        if (lo > c) std::fill(cur + c, cur + lo, V{});  // bubble
        const V* a = act_.data() + (sg.k0 + r * P_) * act_pitch_ + (M - 1 - base) + lo;
        const V* w = sg.bank + r * P_ * C + lo;
        multiply_add(cur + lo, prev + lo, a, w, hi - lo + 1);
        for (int64_t j = 1; j < P_; ++j) accumulate(cur + lo, a + j * act_pitch_, w + j * C, hi - lo + 1);
        c = hi + 1;
      }
      if (c < C) std::fill(cur + c, cur + C, V{});
    }
  }

  // 4. Outputs leaving the bottom row.
  void collect_outputs(int64_t t) {
    const V* bottom = psum_.data() + (R_ - 1) * C_;
    for (int64_t f = next_stream_ - 1; f >= first_live_; --f) {
      FoldState& fs = fold(f);
      const int64_t base = t - (R_ - 1) - fs.stream;
      if (base < 0) continue;
      const int64_t lo = std::max<int64_t>(0, base - (M_ - 1));
      if (lo >= C_) break;
      const int64_t hi = std::min(C_ - 1, base);
      for (int64_t c = lo; c <= std::min(hi, fs.nf - 1); ++c) acc_[(base - c) * acc_pitch_ + fs.n0 + c] += bottom[c];
      fs.outputs += hi - lo + 1;
    }
  }

  void observe(int64_t t, int64_t next_stream) {
    for (int64_t r = 0; r < R_; ++r) {
      for (int64_t c = 0; c < C_; ++c) {
        const int64_t d = t - r - c;
        // Latest fold whose stream has reached this PE: its weights are the stationary ones.
        // Drained folds are gone from live_, and the newest of them is first_live_ - 1.
        int64_t g = first_live_ - 1;
        for (int64_t f = next_stream - 1; f >= first_live_; --f)
          if (fold(f).stream <= d) {
            g = f;
            break;
          }
        // With P lanes the view shows the PE's first (weight, activation) pair.
        PeState& p = pes_[static_cast<size_t>(r * C_ + c)];
        const size_t i = static_cast<size_t>(r * C_ + c), lane = static_cast<size_t>(r * P_ * C_ + c);
        p.weight = g >= 0 ? T::to_double(bank_[g & 1][lane]) : 0.0;
        p.shadow = T::to_double(bank_[(g + 1) & 1][lane]);
        p.psum = T::to_double(psum_[i]);
        p.activation = 0;
        p.active = false;
        p.fold = -1;
        p.row = -1;
        if (g >= first_live_ && d - fold(g).stream < M_) {
          const FoldState& fs = fold(g);
          const int64_t m = d - fs.stream;
          p.fold = static_cast<int>(g);
          p.row = m;
          p.activation = T::to_double(act_[(fs.k0 + r * P_) * act_pitch_ + (M_ - 1 - m)]);
          p.active = r * P_ < fs.kf && c < fs.nf;
        }
      }
    }
    show(t);
  }

  const int64_t KR_;  // K rows a fold covers: R_ rows of P_ lanes
  const Matrix<In>& b_;
  int64_t row_folds_ = 0, col_folds_ = 0, folds_ = 0;
  int64_t act_pitch_ = 0, acc_pitch_ = 0;

  std::vector<V> act_, psum_, zeros_, acc_;
  std::vector<V> bank_[2];
  // live_ (FoldedGrid) holds folds [first_live_, next_load_): loading, streaming, draining.
  int64_t next_load_ = 0;      // folds [0, next_load_) have started loading
  int64_t next_stream_ = 0;    // folds [0, next_stream_) have started streaming
  int64_t first_loading_ = 0;  // folds [first_loading_, next_load_) are still loading
  int64_t port_free_ = 0;      // first cycle the activation stream port is free
  std::vector<Segment<V>> streaming_;
};

}  // namespace

uint64_t grid::run_weight_stationary(ArrayShape shape, Convention convention, const Matrix<int8_t>& a,
                                     const Matrix<int8_t>& b, Matrix<int32_t>& c, GridObserver* observer) {
  return grid::run<WsGrid>(shape, convention, a, b, c, observer);
}

uint64_t grid::run_weight_stationary(ArrayShape shape, Convention convention, const Matrix<float>& a,
                                     const Matrix<float>& b, Matrix<float>& c, GridObserver* observer) {
  return grid::run<WsGrid>(shape, convention, a, b, c, observer);
}

namespace {

const Registration<Dataflow> registration{
    dataflow_entry({DataflowKind::ws,
                    "ws",
                    "weight-stationary: B (K on rows, N on columns) held, A's M rows streamed",
                    {GemmDim::k, GemmDim::n, GemmDim::m}},
                   grid::grid_functions<WsGrid>(held_operand_step_cycles))};

}  // namespace
}  // namespace systolic
