#include "models/ici/topology.hpp"

#include <fmt/format.h>

#include <numeric>
#include <optional>
#include <stdexcept>

namespace systolic {

Topology::Topology(std::vector<int64_t> dims, Wrap wrap) : dims_(std::move(dims)), wrap_(wrap) {
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d < 1) throw std::invalid_argument("topology: every dimension needs at least one chip");
    stride_.push_back(n);
    n *= d;
  }
  chips_ = static_cast<int>(n);
}

std::vector<int64_t> Topology::coords(int chip) const {
  std::vector<int64_t> c(dims_.size());
  for (size_t d = 0; d < dims_.size(); ++d) c[d] = (chip / stride_[d]) % dims_[d];
  return c;
}

int Topology::chip_at(const std::vector<int64_t>& coords) const {
  int64_t id = 0;
  for (size_t d = 0; d < dims_.size(); ++d) id += ((coords[d] % dims_[d] + dims_[d]) % dims_[d]) * stride_[d];
  return static_cast<int>(id);
}

int Topology::neighbor(int chip, size_t dim, int dir) const {
  auto c = coords(chip);
  c[dim] += dir;
  return chip_at(c);
}

int Topology::link(int chip, size_t dim, int dir) const {
  if (dims_[dim] < 2) return -1;
  if (!wraps()) {
    const int64_t at = coords(chip)[dim];
    if ((dir > 0 && at == dims_[dim] - 1) || (dir < 0 && at == 0)) return -1;  // off the edge
  }
  return (chip * static_cast<int>(dims_.size()) + static_cast<int>(dim)) * 2 + (dir > 0 ? 0 : 1);
}

bool Topology::link_exists(int link) const {
  if (link < 0 || link >= link_count()) return false;
  const size_t dim = static_cast<size_t>(link / 2) % dims_.size();
  return this->link(link_source(link), dim, link % 2 ? -1 : +1) == link;
}

int Topology::link_source(int link) const { return link / 2 / static_cast<int>(dims_.size()); }

int Topology::link_target(int link) const {
  const size_t dim = static_cast<size_t>(link / 2) % dims_.size();
  return neighbor(link_source(link), dim, link % 2 ? -1 : +1);
}

std::string Topology::link_name(int link) const {
  static const char axis[] = {'x', 'y', 'z'};
  const size_t dim = static_cast<size_t>(link / 2) % dims_.size();
  return fmt::format("chip{}.{}{}", link_source(link), axis[dim], link % 2 ? '-' : '+');
}

std::vector<int> Topology::route(int from, int to, int tie) const {
  std::vector<int> links;
  auto at = coords(from);
  const auto goal = coords(to);
  for (size_t d = 0; d < dims_.size(); ++d) {
    const int64_t k = dims_[d];
    const int64_t ahead = ((goal[d] - at[d]) % k + k) % k;  // hops going +
    if (ahead == 0) continue;
    const int64_t behind = k - ahead;
    const int dir = !wraps() ? (goal[d] > at[d] ? +1 : -1)
                    : ahead < behind ? +1
                    : ahead > behind ? -1
                                     : (tie >= 0 ? +1 : -1);
    for (int64_t h = 0, hops = dir > 0 ? ahead : behind; h < hops; ++h) {
      const int chip = chip_at(at);
      links.push_back(link(chip, d, dir));
      at[d] += dir;
    }
  }
  return links;
}

std::vector<int> Topology::ring_order() const {
  if (!wraps())
    if (auto cycle = mesh_cycle()) return *cycle;
  return snake(dims_.size());
}

std::vector<int> Topology::snake(size_t skip) const {
  // Dimension 0 back and forth, stepping dimension 1 at each end, and so on up; dimension
  // `skip` (if any) stays at 0.
  std::vector<int> order;
  std::vector<int64_t> c(dims_.size(), 0);
  std::vector<int> dir(dims_.size(), +1);
  const int64_t count = skip < dims_.size() ? chips_ / dims_[skip] : chips_;
  for (int64_t i = 0; i < count; ++i) {
    order.push_back(chip_at(c));
    for (size_t d = 0; d < dims_.size(); ++d) {
      if (d == skip) continue;
      const int64_t next = c[d] + dir[d];
      if (next >= 0 && next < dims_[d]) {
        c[d] = next;
        break;
      }
      dir[d] = -dir[d];  // turn around in this dimension, step the next one
    }
  }
  return order;
}

std::optional<std::vector<int>> Topology::mesh_cycle() const {
  // A comb: pick a dimension A of at least 2 chips whose complement holds an even number of
  // chips; walk the complement's snake P (one hop per step), sweeping A from 1 up and down
  // at each point of P, so the walk ends at A = 1 on P's last point (P has even length);
  // then come back along A = 0 through P reversed to the start. Every step is one hop. A
  // mesh whose every dimension is odd has no such cycle (a bipartite graph on an odd number
  // of chips), nor does a line longer than 2.
  for (size_t a = 0; a < dims_.size(); ++a) {
    const int64_t across = dims_[a], rest = chips_ / dims_[a];
    if (across < 2 || rest % 2 != 0) continue;
    const std::vector<int> path = snake(a);
    std::vector<int> cycle;
    for (size_t j = 0; j < path.size(); ++j)
      for (int64_t i = 1; i < across; ++i) {
        auto c = coords(path[j]);
        c[a] = j % 2 == 0 ? i : across - i;
        cycle.push_back(chip_at(c));
      }
    for (size_t j = path.size(); j-- > 0;) cycle.push_back(path[j]);
    return cycle;
  }
  return std::nullopt;
}

std::vector<int> Topology::line(int chip, size_t dim) const {
  auto c = coords(chip);
  std::vector<int> out;
  for (int64_t i = 0; i < dims_[dim]; ++i) {
    c[dim] = i;
    out.push_back(chip_at(c));
  }
  return out;
}

std::optional<std::vector<int64_t>> tiling_slice(const std::vector<int64_t>& dims, int64_t chips,
                                                 const std::vector<size_t>& from) {
  std::vector<size_t> axes = from;
  if (axes.empty())
    for (size_t i = 0; i < dims.size(); ++i) axes.push_back(i);
  std::vector<int64_t> slice(dims.size(), 1);
  int64_t left = chips;
  for (size_t i = axes.size(); i-- > 0;) {
    if (axes[i] >= dims.size()) return std::nullopt;
    slice[axes[i]] = std::gcd(left, dims[axes[i]]);
    left /= slice[axes[i]];
  }
  if (chips < 1 || left != 1) return std::nullopt;
  return slice;
}

}  // namespace systolic
