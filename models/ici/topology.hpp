#pragma once
// Where the chips of a system sit and how they are wired: a ring or a 2-D/3-D torus, every
// dimension wrapped. A chip has, in each dimension longer than one chip, a link to its + and
// one to its - neighbour (one per direction: links are directed). Messages take the
// dimension-order route: dimension 0 first, then 1, then 2, each the short way around its
// ring. Plain C++, no SystemC.
#include <cstdint>
#include <string>
#include <vector>

namespace systolic {

class Topology {
 public:
  // dims: chips along each dimension (empty: one chip). Chip ids run dimension 0 fastest.
  explicit Topology(std::vector<int64_t> dims);

  int chips() const { return chips_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  std::vector<int64_t> coords(int chip) const;
  int chip_at(const std::vector<int64_t>& coords) const;  // coordinates taken modulo dims
  int neighbor(int chip, size_t dim, int dir) const;      // dir +1 or -1

  // Directed links: id of chip's link in `dim` towards `dir`, -1 when the dimension has one chip.
  int link(int chip, size_t dim, int dir) const;
  int link_count() const { return chips_ * 2 * static_cast<int>(dims_.size()); }
  bool link_exists(int link) const;
  int link_source(int link) const;
  int link_target(int link) const;
  std::string link_name(int link) const;  // "chip3.y-": chip 3's link towards -y

  // Dimension-order route, as link ids. Each dimension goes the short way around its ring;
  // when both ways are equally long (half-way round, e.g. the neighbour on a 2-chip
  // dimension), `tie` (+1 or -1) chooses, so a bidirectional algorithm can use both links.
  std::vector<int> route(int from, int to, int tie = +1) const;

  // Every chip once, each consecutive pair (and the last and the first) neighbours where the
  // dimensions allow: a snake (boustrophedon) walk, the order ring algorithms use over the
  // whole system.
  std::vector<int> ring_order() const;
  // The chips that share every coordinate with `chip` but the one in `dim`, in order along
  // `dim` (a ring of the torus).
  std::vector<int> line(int chip, size_t dim) const;

 private:
  std::vector<int64_t> dims_;
  std::vector<int64_t> stride_;
  int chips_ = 1;
};

}  // namespace systolic
