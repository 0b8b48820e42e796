#pragma once
// Records the exact model's per-PE state cycle by cycle (a GridObserver), for the browser
// view (sim/viz/html_writer.hpp) and tests. The values are copied from what PeGrid computed;
// nothing is recomputed. Plain C++: whoever drives the grid says where each run's cycle 0
// falls in absolute time (set_origin) and which absolute cycles to keep (the window).
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "models/mxu/pe_grid.hpp"

namespace systolic {

// Frames of an R x C grid; per-PE arrays are frame-major, then row-major (frame * R * C +
// r * C + c).
struct GridRecording {
  ArrayShape shape{0, 0};
  std::vector<uint64_t> cycle;    // absolute cycle of each frame, strictly increasing
  std::vector<int> tag;           // per frame: the tag of the run it belongs to (set_origin)
  std::vector<double> weight;     // PeState::weight
  std::vector<double> shadow;     // PeState::shadow
  std::vector<double> activation; // PeState::activation
  std::vector<double> psum;       // PeState::psum
  std::vector<int32_t> fold;      // PeState::fold (-1: bubble)
  std::vector<uint8_t> active;    // PeState::active
  std::vector<int64_t> row;       // PeState::row: the streamed index (ws: row m of A; -1: none)
  std::vector<uint8_t> pad_token; // 1: that row is a pad token of the run (set_origin's pad_rows)

  size_t frames() const { return cycle.size(); }
  size_t pes() const { return static_cast<size_t>(shape.rows * shape.cols); }
  size_t at(size_t frame, int64_t r, int64_t c) const {
    return frame * pes() + static_cast<size_t>(r * shape.cols + c);
  }
};

class GridRecorder : public GridObserver {
 public:
  // Keeps absolute cycles in [first, last).
  explicit GridRecorder(ArrayShape shape, uint64_t first = 0,
                        uint64_t last = std::numeric_limits<uint64_t>::max());

  // The next run's cycle 0 is absolute cycle `base`; its frames carry `tag`. pad_rows[m] != 0
  // marks row m of the run's A as a pad token (rows past its end are not): every PE that row
  // passes through is flagged in `pad_token`.
  void set_origin(uint64_t base, int tag, std::vector<uint8_t> pad_rows = {}) {
    base_ = base;
    tag_ = tag;
    pad_rows_ = std::move(pad_rows);
  }

  void on_cycle(uint64_t cycle, const std::vector<PeState>& pes) override;

  const GridRecording& recording() const { return rec_; }
  GridRecording take() { return std::move(rec_); }

 private:
  GridRecording rec_;
  uint64_t first_, last_;
  uint64_t base_ = 0;
  int tag_ = 0;
  std::vector<uint8_t> pad_rows_;
};

}  // namespace systolic
