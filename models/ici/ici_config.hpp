#pragma once
// The inter-chip interconnect (ICI) of a multi-chip system, as the config describes it:
// how the chips are wired (ring, 2-D or 3-D torus with its dimensions), what one link can do,
// and which algorithm the compiler lowers collectives to. Field names are the suffixes of the
// config keys ("link_gbps" -> `ici.link_gbps`); docs/interconnect.md describes the model.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/common/config_issue.hpp"
#include "models/common/names.hpp"
#include "models/ici/topology.hpp"

namespace systolic {

enum class IciTopologyKind { none, ring, torus2d, torus3d };
inline constexpr auto kIciTopologyNames =
    name_table<IciTopologyKind>({{IciTopologyKind::none, "none"}, {IciTopologyKind::ring, "ring"},
                                 {IciTopologyKind::torus2d, "torus2d"}, {IciTopologyKind::torus3d, "torus3d"}});

struct IciConfig {
  IciTopologyKind topology = IciTopologyKind::none;  // none: a single chip, no ICI engine
  std::vector<int64_t> dims;        // chips along each dimension (ring: 1 entry, torus3d: 3)
  // false: a mesh, no wraparound links (a ring becomes a line); real v5e slices shorter than
  // 16 chips on an axis have none (configs/tpu-v5e-8.yaml).
  bool wraparound = true;
  double link_gbps = 45.0;          // GB/s per link per direction
  double link_latency_ns = 1000.0;  // per hop: wire, SerDes and router
  int64_t ports = 4;                // ICI ports per chip; the topology needs 2 per wrapped dim
  uint64_t chunk_bytes = 64 * 1024ULL;  // a message crosses the network in chunks of this size
  // A collective algorithm registered by the compiler (sim/compile/collectives/: ring,
  // bidir_ring, torus); the config key checks the name and what the algorithm supports.
  std::string algorithm = "bidir_ring";

  // The wiring these keys describe: dims, wrapped or not.
  Topology build_topology() const;
  // Chips in the system: the product of dims (1 without a topology).
  int64_t chips() const;
  // Dimensions the topology kind needs: ring 1, torus2d 2, torus3d 3, none 0.
  size_t dimensions_needed() const;
  // Ports the wiring uses: two (one per direction) for every dimension longer than one chip.
  int64_t ports_needed() const;
  std::optional<ConfigIssue> validate() const;
};

std::string dims_text(const std::vector<int64_t>& dims);  // "2x4"

}  // namespace systolic
