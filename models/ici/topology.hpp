#pragma once
// Where the chips of a system sit and how they are wired: a ring or a 2-D/3-D torus, every
// dimension wrapped, or the same grid as a mesh (no wraparound links: a line, a 2-D or 3-D
// mesh). A chip has, in each dimension longer than one chip, a link to its + and one to its -
// neighbour (one per direction: links are directed), except, on a mesh, off its edges.
// Messages take the dimension-order route: dimension 0 first, then 1, then 2, each the short
// way around its ring (on a mesh, the only way). Plain C++, no SystemC.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace systolic {

class Topology {
 public:
  enum class Wrap { torus, mesh };
  // dims: chips along each dimension (empty: one chip). Chip ids run dimension 0 fastest.
  explicit Topology(std::vector<int64_t> dims, Wrap wrap = Wrap::torus);

  int chips() const { return chips_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  std::vector<int64_t> coords(int chip) const;
  bool wraps() const { return wrap_ == Wrap::torus; }
  int chip_at(const std::vector<int64_t>& coords) const;  // coordinates taken modulo dims
  int neighbor(int chip, size_t dim, int dir) const;      // dir +1 or -1 (modulo dims)

  // Directed links: id of chip's link in `dim` towards `dir`, -1 when the dimension has one
  // chip or, on a mesh, when `dir` leads off the edge.
  int link(int chip, size_t dim, int dir) const;
  int link_count() const { return chips_ * 2 * static_cast<int>(dims_.size()); }
  bool link_exists(int link) const;
  int link_source(int link) const;
  int link_target(int link) const;
  std::string link_name(int link) const;  // "chip3.y-": chip 3's link towards -y

  // Dimension-order route, as link ids. Each dimension goes the short way around its ring;
  // when both ways are equally long (half-way round, e.g. the neighbour on a 2-chip
  // dimension), `tie` (+1 or -1) chooses, so a bidirectional algorithm can use both links.
  // A mesh has one way: straight towards the destination, `tie` unused.
  std::vector<int> route(int from, int to, int tie = +1) const;

  // Every chip once, each consecutive pair (and the last and the first) neighbours where the
  // dimensions allow: a snake (boustrophedon) walk, the order ring algorithms use over the
  // whole system. On a mesh, a cycle of single hops when one exists (a comb, mesh_cycle());
  // otherwise (a line longer than 2, every dimension odd) the snake, whose closing step
  // from the last chip back to the first crosses several hops.
  std::vector<int> ring_order() const;
  // The chips that share every coordinate with `chip` but the one in `dim`, in order along
  // `dim` (a ring of the torus).
  std::vector<int> line(int chip, size_t dim) const;

 private:
  std::vector<int> snake(size_t skip) const;  // skip: a dimension held at 0, or dims().size()
  std::optional<std::vector<int>> mesh_cycle() const;

  std::vector<int64_t> dims_;
  std::vector<int64_t> stride_;
  Wrap wrap_;
  int chips_ = 1;
};

// The dims of a sub-grid of `chips` chips that tiles `dims` (each of its axes divides the
// system's), or nullopt when none does, as a TPU pod is carved into slices. Per prime factor,
// taking as much as each axis of `from` holds (gcd), from the last listed axis on, fails only
// when no tiling over those axes exists; a 2x4 gives [1, 2], [1, 4] and [2, 4]. `from` empty:
// every axis (last to first).
std::optional<std::vector<int64_t>> tiling_slice(const std::vector<int64_t>& dims, int64_t chips,
                                                 const std::vector<size_t>& from = {});

}  // namespace systolic
