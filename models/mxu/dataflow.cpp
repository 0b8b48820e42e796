#include "models/mxu/dataflow.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

namespace systolic {
int64_t dim_of(MatmulShape s, GemmDim d) {
  switch (d) {
    case GemmDim::m: return s.m;
    case GemmDim::k: return s.k;
    case GemmDim::n: return s.n;
  }
  throw std::logic_error("dim_of: bad GemmDim");
}

int64_t Dataflow::fold_rows(ArrayShape a) const {
  return mapping().rows == GemmDim::k ? a.rows * a.rate.products : a.rows;
}

Folds Dataflow::folds(ArrayShape a, MatmulShape s) const {
  const DataflowMapping map = mapping();
  return {ceil_div(dim_of(s, map.rows), fold_rows(a)), ceil_div(dim_of(s, map.cols), a.cols)};
}

uint64_t Dataflow::cycles(ArrayShape a, Convention c, MatmulShape s) const {
  return checked_mul(functions_.step_cycles(*this, a, c, s), static_cast<uint64_t>(a.rate.cycles));
}

uint64_t held_operand_step_cycles(const Dataflow& d, ArrayShape a, Convention c, MatmulShape s) {
  const Folds f = d.folds(a, s);
  return held_operand_cycles(a, c, checked_mul(f.row_folds, f.col_folds), dim_of(s, d.mapping().streamed));
}

OperandTraffic Dataflow::traffic(ArrayShape a, MatmulShape s) const {
  const Folds f = folds(a, s);
  const DataflowMapping map = mapping();
  // Passes over an operand indexed by x and y: the folds of the mapped dimension it lacks.
  const auto passes = [&](GemmDim x, GemmDim y) -> uint64_t {
    if (map.rows != x && map.rows != y) return f.row_folds;
    if (map.cols != x && map.cols != y) return f.col_folds;
    return 1;
  };
  const uint64_t mk = s.m * s.k, kn = s.k * s.n, mn = s.m * s.n;
  const uint64_t output_passes = passes(GemmDim::m, GemmDim::n);
  return {mk * passes(GemmDim::m, GemmDim::k), kn * passes(GemmDim::k, GemmDim::n), mn * (output_passes - 1),
          mn * output_passes};
}

namespace {
// Shows each state of the grid for `stretch` consecutive cycles.
class StretchedObserver : public GridObserver {
 public:
  StretchedObserver(GridObserver& inner, uint64_t stretch) : inner_(inner), stretch_(stretch) {}
  void on_cycle(uint64_t step, const std::vector<PeState>& pes) override {
    for (uint64_t i = 0; i < stretch_; ++i) inner_.on_cycle(step * stretch_ + i, pes);
  }

 private:
  GridObserver& inner_;
  uint64_t stretch_;
};
}  // namespace

uint64_t run_stretched(ArrayShape a, GridObserver* observer, const std::function<uint64_t(GridObserver*)>& run) {
  const auto stretch = static_cast<uint64_t>(a.rate.cycles);
  if (stretch == 1 || observer == nullptr) return checked_mul(run(observer), stretch);
  StretchedObserver stretched(*observer, stretch);
  return checked_mul(run(&stretched), stretch);
}

uint64_t Dataflow::run_grid(ArrayShape a, Convention c, const Matrix<int8_t>& A, const Matrix<int8_t>& B,
                            Matrix<int32_t>& C, GridObserver* observer) const {
  return run_stretched(a, observer, [&](GridObserver* o) { return functions_.grid_int8(a, c, A, B, C, o); });
}

uint64_t Dataflow::run_grid(ArrayShape a, Convention c, const Matrix<float>& A, const Matrix<float>& B,
                            Matrix<float>& C, GridObserver* observer) const {
  return run_stretched(a, observer, [&](GridObserver* o) { return functions_.grid_float(a, c, A, B, C, o); });
}

Registry<Dataflow>::Entry dataflow_entry(DataflowInfo info, DataflowFunctions functions) {
  return {std::string(info.name), static_cast<int>(info.kind), std::string(info.description),
          std::make_shared<const Dataflow>(info, functions)};
}

std::vector<const Dataflow*> dataflows() {
  std::vector<const Dataflow*> out;
  for (const auto& e : Registry<Dataflow>::instance().entries()) out.push_back(e.impl.get());
  return out;
}

const Dataflow& dataflow_of(DataflowKind kind) {
  for (const auto& e : Registry<Dataflow>::instance().entries())
    if (e.impl->kind() == kind) return *e.impl;
  throw std::logic_error("dataflow " + std::to_string(static_cast<int>(kind)) +
                         " is not registered (is the core library linked whole-archive?)");
}

const Dataflow* find_dataflow(std::string_view name) {
  const auto* e = Registry<Dataflow>::instance().find(name);
  return e ? e->impl.get() : nullptr;
}

std::string dataflow_choices() { return Registry<Dataflow>::instance().choices(); }

}  // namespace systolic
