#pragma once
// The links of a multi-chip system, in plain C++ (no SystemC): the timing core the ICI
// engines book their messages on. A message crosses the network in chunks (ici.chunk_bytes).
// Each directed link carries one chunk at a time at its bandwidth, so two flows over one link
// share it chunk by chunk. A link keeps the intervals it is reserved for: a chunk takes the
// first gap long enough after its head reaches the link, so a chunk booked later (another
// chip's, whose head arrives earlier) can still go first, as arbitration in time would let
// it. Intervals that end before the booking time are forgotten. Switching is virtual
// cut-through at chunk granularity: a chunk's head moves on to the next link one hop latency
// after it entered the previous one (if that link is free; otherwise the whole chunk waits in
// the router), and its tail cannot leave a link before it has arrived there. Uncontended, a
// message of S bytes over h hops takes S / bandwidth + h * latency.
//
// Time is SystemC ps (1000 per core cycle); the constructor converts GB/s and ns with the
// core clock, as the HBM core does.
#include <cstdint>
#include <utility>
#include <vector>

#include "models/ici/ici_config.hpp"
#include "models/ici/topology.hpp"

namespace systolic {

struct LinkStats {
  uint64_t bytes = 0;
  uint64_t busy_ps = 0;  // time carrying chunks
  uint64_t chunks = 0;
};

class IciNetwork {
 public:
  // Throws std::invalid_argument for a config that fails validate().
  IciNetwork(const IciConfig& config, double core_clock_mhz);

  struct Booking {
    uint64_t sent = 0;     // the chunk's tail has left the source's port
    uint64_t arrived = 0;  // ... and reached the destination
  };
  // Books one chunk of `bytes` along `route` (Topology::route), ready at the source at
  // `ready_ps`. An empty route (a chip sending to itself) arrives at once.
  // Every booking is for a time at or after `now_ps` (the caller's simulated time): the
  // reservations that ended before it are dropped.
  Booking book(const std::vector<int>& route, uint64_t bytes, uint64_t ready_ps, uint64_t now_ps = 0);
  // One hop of a chunk of `bytes`: its head reaches `link` at `head_ps`, and its tail cannot
  // leave the link before `tail_ps` (its arrival over the previous hop; 0 on the first). book()
  // is these hops in a row; in a system each hop is booked by the chip the link leaves, when
  // the chunk's head gets there (models/ici/ici_router.hpp).
  struct Hop {
    uint64_t start = 0, end = 0;  // the chunk occupies the link over [start, end)
  };
  Hop book_hop(int link, uint64_t bytes, uint64_t head_ps, uint64_t tail_ps, uint64_t now_ps);

  const Topology& topology() const { return topology_; }
  const IciConfig& config() const { return config_; }
  const std::vector<LinkStats>& links() const { return stats_; }
  uint64_t transfer_ps(uint64_t bytes) const;  // serialisation time on one link
  uint64_t latency_ps() const { return latency_ps_; }
  double ps_per_ns() const { return ps_per_ns_; }

 private:
  IciConfig config_;
  Topology topology_;
  double ps_per_ns_;
  double ps_per_byte_;
  uint64_t latency_ps_;
  // Per link, reserved [start, end) intervals in time order, merged when they touch.
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> reserved_;
  std::vector<LinkStats> stats_;
};

}  // namespace systolic
