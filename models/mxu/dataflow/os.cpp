// The output-stationary dataflow: each PE keeps one output C[m][n] while both operands stream
// through (SCALE-Sim v2, scalesim/compute/systolic_compute_os.py: Sr = M on rows, Sc = N on
// columns, T = K streamed). There is no reduction across row folds: a fold streams all of K.
//
// Timing (docs/mxu.md derives the closed form, streamed_output_cycles below):
//  * Fold order: column folds (N in chunks of C) outer, row folds (M in chunks of R) inner.
//  * Fold f starts streaming at S_f. A[m0 + r][k] enters row r from the left at S_f + r + k
//    and moves one column right per cycle; B[k][n0 + c] enters column c from the top at
//    S_f + c + k and moves one row down per cycle; both reach PE(r, c) at S_f + r + c + k,
//    where the PE computes acc = (k == 0 ? 0 : acc) + a * b.
//  * With k = K - 1 the PE drives its result onto its column's output bus in that cycle:
//    column c's R results leave on consecutive cycles S_f + K - 1 + c + r, one a cycle.
//  * Controller: S_0 = 0, and fold f + 1 starts streaming
//      tpu:      at S_f + max(K, R): the operand ports carry K vectors a fold, and each column's
//                output bus R results (nothing is preloaded, so nothing else waits);
//      scalesim: once every result of fold f has left (no overlap, as SCALE-Sim).
//  * The run ends when the last result has left the array.
// A type at P = rate.products products a cycle (mxu.rate.<dtype>) packs P consecutive k into
// one step: step s carries A[m][sP .. sP+P-1] and B[sP .. sP+P-1][n], so K takes KS = ceil(K / P)
// steps and every rule above holds with K read as KS (k past K is zero).
// Padded rows/columns (m >= M or n >= N) compute on zeros and their results are dropped, but
// they occupy the array and its output buses like real ones. Numerics as grid_common.hpp: each
// output is the fp32 sum over k in order 0..K-1 (no fold partial sums, unlike ws and is).
#include <algorithm>
#include <memory>
#include <vector>

#include "models/mxu/dataflow.hpp"
#include "models/mxu/grid_common.hpp"

namespace systolic {
namespace {

// F folds streaming K vectors each (see the controller above).
uint64_t streamed_output_cycles(ArrayShape a, Convention c, uint64_t folds, uint64_t K) {
  const uint64_t R = a.rows, C = a.cols;
  const uint64_t one = checked_add(checked_add(K, R), C) - 2;  // last MAC of PE(R-1, C-1), + 1
  if (c == Convention::scalesim) return checked_mul(folds, one);
  return checked_add(checked_mul(folds - 1, std::max(K, R)), one);
}

struct OsFold {
  int64_t index = 0;
  int64_t m0 = 0, n0 = 0;
  int64_t stream = 0;   // S_f
  int64_t results = 0;  // results that have left (padded ones too)
};

// Which (fold, step) a PE's operands belong to; fold -1: a bubble. Step s carries k = sP .. sP+P-1.
struct Tag {
  int64_t fold = -1;
  int64_t step = 0;
};

template <class In>
class OsGrid : grid::FoldedGrid<OsFold> {
  using T = grid::Traits<In>;
  using V = typename T::V;
  using Out = typename T::Out;

 public:
  OsGrid(ArrayShape shape, Convention convention, const Matrix<In>& a, const Matrix<In>& b,
         GridObserver* observer)
      : FoldedGrid(shape, convention, a, b, observer),
        KS_(ceil_div(K_, P_)),
        a_(a),
        b_(b),
        row_folds_(ceil_div(M_, R_)),
        folds_(row_folds_ * ceil_div(N_, C_)),
        av_(static_cast<size_t>(R_ * C_ * P_)),
        bv_(av_.size()),
        acc_(static_cast<size_t>(R_ * C_)),
        tag_(acc_.size()) {}

  uint64_t run(Matrix<Out>& c) {
    c = Matrix<Out>(M_, N_);
    for (int64_t t = 0;; ++t) {
      control(t);
      step(t, c);
      if (observer_) observe(t);
      if (retire(folds_, [this](const OsFold& f) { return f.results == R_ * C_; }))
        return static_cast<uint64_t>(t + 1);
    }
  }

 private:
  void control(int64_t t) {
    if (next_fold_ >= folds_) return;
    if (next_fold_ > 0) {
      const bool go = convention_ == Convention::tpu ? t >= last_stream_ + std::max(KS_, R_)
                                                     : first_live_ == next_fold_;  // previous fold done
      if (!go) return;
    }
    const int64_t f = next_fold_++;
    live_.push_back({f, (f % row_folds_) * R_, (f / row_folds_) * C_, t, 0});
    last_stream_ = t;
  }

  // The step entering row r (A) or column c (B) at cycle t: the live fold whose step
  // t - S_f - lane is in [0, KS). Lanes beyond M or N carry zeros.
  Tag feed(int64_t t, int64_t lane) {
    for (const OsFold& f : live_) {
      const int64_t s = t - f.stream - lane;
      if (s >= 0 && s < KS_) return {f.index, s};
    }
    return {};
  }
  // The j-th of the P values of step g entering row r (A) or column c (B).
  V a_in(const Tag& g, int64_t r, int64_t j) {
    const int64_t m = fold(g.fold).m0 + r, k = g.step * P_ + j;
    return g.fold >= 0 && m < M_ && k < K_ ? T::value(a_(m, k)) : V{};
  }
  V b_in(const Tag& g, int64_t c, int64_t j) {
    const int64_t n = fold(g.fold).n0 + c, k = g.step * P_ + j;
    return g.fold >= 0 && n < N_ && k < K_ ? T::value(b_(k, n)) : V{};
  }

  // One cycle, PEs bottom-right first so that the left and upper neighbours still hold last
  // cycle's operands when they are passed on.
  // Each PE holds P (a, b) pairs, lanes i * P .. i * P + P - 1 of av_ and bv_.
  void step(int64_t t, Matrix<Out>& c) {
    const auto P = static_cast<size_t>(P_);
    for (int64_t r = R_ - 1; r >= 0; --r)
      for (int64_t col = C_ - 1; col >= 0; --col) {
        const size_t i = static_cast<size_t>(r * C_ + col);
        const Tag g = col == 0 ? feed(t, r) : tag_[i - 1];
        const Tag gb = r == 0 && g.fold >= 0 ? feed(t, col) : Tag{};
        for (size_t j = 0; j < P; ++j) {
          av_[i * P + j] = col == 0 ? (g.fold >= 0 ? a_in(g, r, static_cast<int64_t>(j)) : V{}) : av_[(i - 1) * P + j];
          bv_[i * P + j] = r == 0 ? (g.fold >= 0 ? b_in(gb, col, static_cast<int64_t>(j)) : V{})
                                  : bv_[(i - static_cast<size_t>(C_)) * P + j];
        }
        tag_[i] = g;
        if (g.fold < 0) continue;
        acc_[i] = (g.step == 0 ? V{} : acc_[i]) + av_[i * P] * bv_[i * P];
        for (size_t j = 1; j < P; ++j) acc_[i] = acc_[i] + av_[i * P + j] * bv_[i * P + j];
        if (g.step == KS_ - 1) emit(fold(g.fold), r, col, acc_[i], c);
      }
  }

  void emit(OsFold& f, int64_t r, int64_t col, V value, Matrix<Out>& c) {
    const int64_t m = f.m0 + r, n = f.n0 + col;
    if (m < M_ && n < N_) c(m, n) = T::out(value);
    ++f.results;
  }

  void observe(int64_t t) {
    for (int64_t r = 0; r < R_; ++r)
      for (int64_t col = 0; col < C_; ++col) {
        const size_t i = static_cast<size_t>(r * C_ + col);
        const Tag& g = tag_[i];
        PeState& p = pes_[i];
        p.weight = T::to_double(bv_[i * static_cast<size_t>(P_)]);  // the first of P pairs
        p.shadow = 0;  // nothing is preloaded
        p.activation = T::to_double(av_[i * static_cast<size_t>(P_)]);
        p.psum = T::to_double(acc_[i]);
        p.fold = static_cast<int>(g.fold);
        p.row = g.fold >= 0 ? g.step : -1;
        p.active = g.fold >= 0 && fold(g.fold).m0 + r < M_ && fold(g.fold).n0 + col < N_;
      }
    show(t);
  }

  const int64_t KS_;  // steps over K: ceil(K / P)
  const Matrix<In>& a_;
  const Matrix<In>& b_;
  const int64_t row_folds_, folds_;
  std::vector<V> av_, bv_, acc_;  // per PE: P operand pairs passing through, accumulator
  std::vector<Tag> tag_;
  // live_ (FoldedGrid) holds folds [first_live_, next_fold_), with results still to leave.
  int64_t next_fold_ = 0, last_stream_ = 0;
};

// With `products` of K a cycle, each PE takes ceil(K / products) steps over its output.
uint64_t os_step_cycles(const Dataflow& d, ArrayShape a, Convention c, MatmulShape s) {
  const Folds f = d.folds(a, s);
  return streamed_output_cycles(a, c, checked_mul(f.row_folds, f.col_folds), ceil_div(s.k, a.rate.products));
}

const Registration<Dataflow> registration{
    dataflow_entry({DataflowKind::os,
                    "os",
                    "output-stationary: C (M on rows, N on columns) held, A and B streamed along K",
                    {GemmDim::m, GemmDim::n, GemmDim::k}},
                   grid::grid_functions<OsGrid>(os_step_cycles))};

}  // namespace
}  // namespace systolic
