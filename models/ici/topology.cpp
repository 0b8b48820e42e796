#include "models/ici/topology.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace systolic {

Topology::Topology(std::vector<int64_t> dims) : dims_(std::move(dims)) {
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
  return (chip * static_cast<int>(dims_.size()) + static_cast<int>(dim)) * 2 + (dir > 0 ? 0 : 1);
}

bool Topology::link_exists(int link) const {
  return link >= 0 && link < link_count() && dims_[static_cast<size_t>(link / 2) % dims_.size()] > 1;
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
    const int dir = ahead < behind ? +1 : ahead > behind ? -1 : (tie >= 0 ? +1 : -1);
    for (int64_t h = 0, hops = dir > 0 ? ahead : behind; h < hops; ++h) {
      const int chip = chip_at(at);
      links.push_back(link(chip, d, dir));
      at[d] += dir;
    }
  }
  return links;
}

std::vector<int> Topology::ring_order() const {
  // Snake: dimension 0 back and forth, stepping dimension 1 at each end, and so on up.
  std::vector<int> order;
  std::vector<int64_t> c(dims_.size(), 0);
  std::vector<int> dir(dims_.size(), +1);
  for (int i = 0; i < chips_; ++i) {
    order.push_back(chip_at(c));
    for (size_t d = 0; d < dims_.size(); ++d) {
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

std::vector<int> Topology::line(int chip, size_t dim) const {
  auto c = coords(chip);
  std::vector<int> out;
  for (int64_t i = 0; i < dims_[dim]; ++i) {
    c[dim] = i;
    out.push_back(chip_at(c));
  }
  return out;
}

}  // namespace systolic
