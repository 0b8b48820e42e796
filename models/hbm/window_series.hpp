#pragma once
// A quantity per window of simulated time (HbmStats: bytes completed, a channel's bus time),
// holding only the windows where something happened. A dense vector indexed by window grew with
// the simulated time itself: a compiled trace whose one huge matmul idles the HBM for minutes
// of simulated time held gigabytes of zeros before its first late transfer.
//
// Sorted (window, amount) pairs, not a std::map: additions come nearly in time order (engines
// book a little ahead of each other), so almost every one lands on or after the last window,
// and a pair costs 16 bytes where a map node costs 48 (Llama-3-8B prefill's timeline: 16
// channels of ~10^5 busy windows each).
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace systolic {

class WindowSeries {
 public:
  using Window = std::pair<uint64_t, uint64_t>;  // (window index, amount)

  void add(uint64_t window, uint64_t amount) {
    if (windows_.empty() || windows_.back().first < window) {
      windows_.emplace_back(window, amount);
      return;
    }
    auto at = std::lower_bound(windows_.begin(), windows_.end(), window,
                               [](const Window& w, uint64_t index) { return w.first < index; });
    if (at->first == window)
      at->second += amount;
    else
      windows_.insert(at, {window, amount});
  }
  // The windows with an amount, in time order.
  const std::vector<Window>& windows() const { return windows_; }
  bool empty() const { return windows_.empty(); }
  // One past the last window with an amount (0 when none).
  uint64_t end() const { return windows_.empty() ? 0 : windows_.back().first + 1; }
  bool operator==(const WindowSeries& o) const { return windows_ == o.windows_; }

 private:
  std::vector<Window> windows_;
};

}  // namespace systolic
