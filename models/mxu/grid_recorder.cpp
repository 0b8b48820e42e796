#include "models/mxu/grid_recorder.hpp"

#include <stdexcept>
#include <string>

namespace systolic {

GridRecorder::GridRecorder(ArrayShape shape, uint64_t first, uint64_t last)
    : first_(first), last_(last) {
  rec_.shape = shape;
}

void GridRecorder::on_cycle(uint64_t cycle, const std::vector<PeState>& pes) {
  const uint64_t t = base_ + cycle;
  if (t < first_ || t >= last_) return;
  if (pes.size() != rec_.pes())
    throw std::invalid_argument("GridRecorder: got " + std::to_string(pes.size()) +
                                " PE states for a " + std::to_string(rec_.shape.rows) + "x" +
                                std::to_string(rec_.shape.cols) + " grid");
  if (!rec_.cycle.empty() && t <= rec_.cycle.back())
    throw std::logic_error("GridRecorder: cycle " + std::to_string(t) +
                           " recorded out of order (after " + std::to_string(rec_.cycle.back()) +
                           "); one recorder follows one grid");
  rec_.cycle.push_back(t);
  rec_.tag.push_back(tag_);
  for (const PeState& p : pes) {
    rec_.weight.push_back(p.weight);
    rec_.shadow.push_back(p.shadow);
    rec_.activation.push_back(p.activation);
    rec_.psum.push_back(p.psum);
    rec_.fold.push_back(p.fold);
    rec_.active.push_back(p.active ? 1 : 0);
    rec_.row.push_back(p.row);
    const bool pad = p.row >= 0 && static_cast<size_t>(p.row) < pad_rows_.size() &&
                     pad_rows_[static_cast<size_t>(p.row)] != 0;
    rec_.pad_token.push_back(pad ? 1 : 0);
  }
}

}  // namespace systolic
