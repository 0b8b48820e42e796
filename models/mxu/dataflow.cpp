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

Folds Dataflow::folds(ArrayShape a, MatmulShape s) const {
  const DataflowMapping map = mapping();
  return {ceil_div(dim_of(s, map.rows), a.rows), ceil_div(dim_of(s, map.cols), a.cols)};
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
