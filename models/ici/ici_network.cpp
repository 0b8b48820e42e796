#include "models/ici/ici_network.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace systolic {
IciNetwork::IciNetwork(const IciConfig& config, double core_clock_mhz)
    : config_(validated(config, "ici.")),
      topology_(config_.build_topology()),
      ps_per_ns_(core_clock_mhz),
      ps_per_byte_(core_clock_mhz / config_.link_gbps),  // ps per ns / bytes per ns
      latency_ps_(static_cast<uint64_t>(std::llround(config_.link_latency_ns * core_clock_mhz))),
      reserved_(static_cast<size_t>(topology_.link_count())),
      stats_(static_cast<size_t>(topology_.link_count())) {}

uint64_t IciNetwork::transfer_ps(uint64_t bytes) const {
  return static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) * ps_per_byte_ - 1e-6));
}

IciNetwork::Booking IciNetwork::book(const std::vector<int>& route, uint64_t bytes, uint64_t ready_ps,
                                     uint64_t now_ps) {
  if (route.empty()) return {ready_ps, ready_ps};
  uint64_t head = ready_ps, tail = 0, sent = 0;
  for (size_t hop = 0; hop < route.size(); ++hop) {
    const Hop h = book_hop(route[hop], bytes, head, tail, now_ps);
    if (hop == 0) sent = h.end;
    head = h.start + latency_ps_;
    tail = h.end + latency_ps_;
  }
  return {sent, tail};
}

IciNetwork::Hop IciNetwork::book_hop(int link, uint64_t bytes, uint64_t head_ps, uint64_t tail_ps,
                                     uint64_t now_ps) {
  const size_t l = static_cast<size_t>(link);
  const uint64_t x = transfer_ps(bytes);
  auto& busy = reserved_[l];
  size_t past = 0;  // reservations over before now
  while (past < busy.size() && busy[past].second <= now_ps) ++past;
  busy.erase(busy.begin(), busy.begin() + static_cast<std::ptrdiff_t>(past));
  // The first gap after the head that holds the chunk; its tail cannot outrun its arrival.
  uint64_t start = head_ps;
  size_t at = 0;
  for (; at < busy.size(); ++at) {
    if (busy[at].second <= start) continue;
    if (busy[at].first >= std::max(start + x, tail_ps)) break;
    start = busy[at].second;
  }
  const uint64_t end = std::max(start + x, tail_ps);
  // Insert [start, end) before `at`, merging with the neighbours it touches.
  if (at > 0 && busy[at - 1].second == start) {
    busy[at - 1].second = end;
    if (at < busy.size() && busy[at].first == end) {
      busy[at - 1].second = busy[at].second;
      busy.erase(busy.begin() + static_cast<std::ptrdiff_t>(at));
    }
  } else if (at < busy.size() && busy[at].first == end) {
    busy[at].first = start;
  } else {
    busy.insert(busy.begin() + static_cast<std::ptrdiff_t>(at), {start, end});
  }
  stats_[l].bytes += bytes;
  stats_[l].busy_ps += end - start;
  ++stats_[l].chunks;
  return {start, end};
}

}  // namespace systolic
