#include "models/mxu/dataflow.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace systolic {
namespace {
// Construct-on-first-use: registrations run from other files' static initialisers.
std::vector<std::unique_ptr<Dataflow>>& owned() {
  static std::vector<std::unique_ptr<Dataflow>> all;
  return all;
}
std::vector<const Dataflow*>& sorted() {
  static std::vector<const Dataflow*> all;
  return all;
}
}  // namespace

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
  return checked_mul(step_cycles(a, c, s), static_cast<uint64_t>(a.rate.cycles));
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

DataflowRegistration::DataflowRegistration(std::unique_ptr<Dataflow> dataflow) {
  auto& all = sorted();
  for (const Dataflow* d : all)
    if (d->kind() == dataflow->kind() || d->name() == dataflow->name())
      throw std::logic_error("dataflow '" + std::string(dataflow->name()) + "' registered twice");
  all.push_back(dataflow.get());
  owned().push_back(std::move(dataflow));
  std::sort(all.begin(), all.end(), [](const Dataflow* x, const Dataflow* y) { return x->kind() < y->kind(); });
}

const std::vector<const Dataflow*>& dataflows() { return sorted(); }

const Dataflow& dataflow_of(DataflowKind kind) {
  for (const Dataflow* d : sorted())
    if (d->kind() == kind) return *d;
  throw std::logic_error("dataflow " + std::to_string(static_cast<int>(kind)) +
                         " is not registered (is the core library linked whole-archive?)");
}

const Dataflow* find_dataflow(std::string_view name) {
  for (const Dataflow* d : sorted())
    if (d->name() == name) return d;
  return nullptr;
}

std::string dataflow_choices() {
  std::string out;
  for (const Dataflow* d : sorted()) out += (out.empty() ? "" : ", ") + std::string(d->name());
  return out;
}

}  // namespace systolic
