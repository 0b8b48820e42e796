#include "models/ici/ici_config.hpp"

#include <fmt/format.h>

namespace systolic {

std::string dims_text(const std::vector<int64_t>& dims) {
  return dims.empty() ? std::string("1") : fmt::format("{}", fmt::join(dims, "x"));
}

Topology IciConfig::build_topology() const {
  return Topology(dims, wraparound ? Topology::Wrap::torus : Topology::Wrap::mesh);
}

int64_t IciConfig::chips() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

size_t IciConfig::dimensions_needed() const {
  switch (topology) {
    case IciTopologyKind::none: return 0;
    case IciTopologyKind::ring: return 1;
    case IciTopologyKind::torus2d: return 2;
    case IciTopologyKind::torus3d: return 3;
  }
  return 0;
}

int64_t IciConfig::ports_needed() const {
  int64_t n = 0;
  for (int64_t d : dims) n += d > 1 ? 2 : 0;
  return n;
}

std::optional<ConfigIssue> IciConfig::validate() const {
  if (topology == IciTopologyKind::none) {
    if (chips() != 1)
      return ConfigIssue{"dims", "1 (one chip) with topology none; set ici.topology to wire more chips",
                            fmt::format("'{}'", dims_text(dims))};
    return std::nullopt;
  }
  const size_t need = dimensions_needed();
  if (dims.size() != need)
    return ConfigIssue{"dims",
                          fmt::format("{} dimension{} for {} (e.g. {})", need, need > 1 ? "s" : "",
                                                  kIciTopologyNames.name(topology),
                                                  need == 1 ? "8" : need == 2 ? "2x4" : "4x4x4"),
                          fmt::format("'{}'", dims_text(dims))};
  for (int64_t d : dims)
    if (d < 1 || d > 4096)
      return ConfigIssue{"dims", "chip counts in [1, 4096] per dimension", fmt::format("'{}'", dims_text(dims))};
  if (chips() > 65536)
    return ConfigIssue{"dims", "at most 65536 chips", fmt::format("'{}' ({} chips)", dims_text(dims), chips())};
  if (!(link_gbps > 0)) return ConfigIssue{"link_gbps", "a bandwidth > 0 GB/s", fmt::format("{}", link_gbps)};
  if (!(link_latency_ns >= 0))
    return ConfigIssue{"link_latency_ns", "a latency >= 0 ns", fmt::format("{}", link_latency_ns)};
  if (ports < ports_needed())
    return ConfigIssue{"ports",
                          fmt::format("at least {} (a {} {} uses two ports per dimension longer than one chip)",
                                      ports_needed(), kIciTopologyNames.name(topology), dims_text(dims)),
                          fmt::format("{}", ports)};
  if (chunk_bytes == 0) return ConfigIssue{"chunk_bytes", "a size > 0", "0"};
  return std::nullopt;
}

}  // namespace systolic
