#pragma once
// An on-chip SRAM scratchpad (vector memory for activations, weight buffer, accumulators):
// capacity, banks, ports of a fixed width. Plain C++ (no SystemC). The compiler allocates
// buffers; this block knows whether a tile fits, how long a port takes to move bytes, books
// ports first come first served, and counts the bytes read and written (for energy).
// Time: ps are SystemC ps, 1000 per core cycle; ports move `port_bytes_per_cycle` per cycle.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "models/common/config_issue.hpp"

namespace systolic {

struct ScratchpadConfig {
  std::string name = "vmem";  // "vmem", "weights", "accumulators": keys are sram.<name>_<field>
  uint64_t capacity_bytes = 16ull << 20;
  uint32_t banks = 16;                 // capacity splits evenly over them
  uint64_t port_bytes_per_cycle = 512;
  uint32_t ports = 2;                  // each moves port_bytes_per_cycle; all can run at once

  std::string key(const std::string& field) const { return "sram." + name + "_" + field; }
  // The first impossible value, naming its key: sram.<name>_bytes, _banks, _port_bytes, _ports.
  std::optional<ConfigIssue> validate() const;
};

class Scratchpad {
 public:
  // Throws std::invalid_argument with ConfigIssue::message() for an invalid config.
  explicit Scratchpad(const ScratchpadConfig& config);

  const std::string& name() const { return config_.name; }
  const ScratchpadConfig& config() const { return config_; }
  uint64_t capacity_bytes() const { return config_.capacity_bytes; }

  // Cycles one port needs for `bytes` (rounded up to whole cycles; 0 for 0 bytes).
  uint64_t transfer_cycles(uint64_t bytes) const {
    return cycles_for(bytes, config_.port_bytes_per_cycle, port_shift_);
  }
  // Books the port that frees first (the first such) for `bytes` from ready_ps on, counts them
  // as read or written, and returns the time the transfer ends. Inline: a DMA engine calls it
  // for every HBM request (models/dma/dma_core.cpp).
  uint64_t access(bool write, uint64_t bytes, uint64_t ready_ps) {
    (write ? bytes_written_ : bytes_read_) += bytes;
    if (bytes == 0) return ready_ps;
    const uint64_t busy = transfer_cycles(bytes) * kPsPerCycle;
    port_busy_ps_ += busy;
    return book_port(port_free_.data(), port_free_.size(), ready_ps, busy);
  }
  // Many accesses in a row, on a scratchpad of kPorts ports (= ports()).
  template <uint32_t kPorts>
  class Booking;
  uint32_t ports() const { return config_.ports; }

  // Counting without timing, for users that time the port themselves.
  void count_read(uint64_t bytes) { bytes_read_ += bytes; }
  void count_write(uint64_t bytes) { bytes_written_ += bytes; }

  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t port_busy_ps() const { return port_busy_ps_; }  // summed over ports

  // nullopt when `bytes` fit, else e.g. "sram.weights_bytes = 16384 B (16 KiB) is smaller than
  // a 128x128 bf16 weight tile (32768 B, 32 KiB)".
  std::optional<std::string> check_fits(uint64_t bytes, const std::string& what) const;
  // Whether [offset, offset + bytes) lies inside the scratchpad.
  bool contains(uint64_t offset, uint64_t bytes) const {
    return offset <= config_.capacity_bytes && bytes <= config_.capacity_bytes - offset;
  }

 private:
  static constexpr uint64_t kPsPerCycle = 1000;  // models/common/clock.hpp: kTicksPerCycle
  // Books the port of `free` (when each of `ports` ports frees) that frees first, the first
  // such, for `busy` ps from ready_ps on; returns when it ends. `ports` is a count, or a
  // std::integral_constant for a Booking: its loops then unroll and index the ports with
  // constants only, so they stay in registers.
  template <class Count>
  static uint64_t book_port(uint64_t* free, Count ports, uint64_t ready_ps, uint64_t busy) {
    size_t first = 0;
    for (size_t p = 1; p < ports; ++p)
      if (free[p] < free[first]) first = p;
    uint64_t done = 0;
    for (size_t p = 0; p < ports; ++p)
      if (p == first) done = std::max(ready_ps, free[p]) + busy;
    for (size_t p = 0; p < ports; ++p)
      if (p == first) free[p] = done;
    return done;
  }
  // transfer_cycles() for a port `width` bytes wide (shift: log2 of it, or -1).
  static uint64_t cycles_for(uint64_t bytes, uint64_t width, int shift) {
    return shift >= 0 ? (bytes + width - 1) >> shift : (bytes + width - 1) / width;
  }

  ScratchpadConfig config_;
  int port_shift_ = -1;  // log2 of the port width when it is a power of two
  std::vector<uint64_t> port_free_;
  uint64_t bytes_read_ = 0;
  uint64_t bytes_written_ = 0;
  uint64_t port_busy_ps_ = 0;
};

// Many accesses in a row from one caller (a DMA engine's request loop) on a scratchpad of
// kPorts ports: the same times and counters as Scratchpad::access one by one, with the ports
// and counters in the booking (a local of the caller, so the compiler keeps them in registers
// across the caller's stores to banks and windows, which could otherwise alias them), written
// back when it ends. The caller picks kPorts = ports() (DmaCore::stream_with_sram).
template <uint32_t kPorts>
class Scratchpad::Booking {
 public:
  Booking(Scratchpad* s, bool write)
      : s_(*s), write_(write), shift_(s->port_shift_), width_(s->config_.port_bytes_per_cycle) {
    std::copy(s->port_free_.begin(), s->port_free_.begin() + kPorts, free_);
  }
  Booking(const Booking&) = delete;
  Booking& operator=(const Booking&) = delete;
  ~Booking() {
    std::copy(free_, free_ + kPorts, s_.port_free_.begin());
    (write_ ? s_.bytes_written_ : s_.bytes_read_) += bytes_;
    s_.port_busy_ps_ += busy_;
  }
  // What access() needs of a request of `bytes` (> 0): its port time. A loop of requests of
  // one size takes it once.
  struct Sized {
    uint64_t port_ps;
  };
  Sized sized(uint64_t bytes) const { return {cycles_for(bytes, width_, shift_) * kPsPerCycle}; }
  // As Scratchpad::access, its bytes counted by booked().
  uint64_t access(Sized request, uint64_t ready_ps) {
    busy_ += request.port_ps;
    return book_port(free_, std::integral_constant<size_t, kPorts>{}, ready_ps, request.port_ps);
  }
  // access() for n requests of one size in a row, request i ready at ready[i] and ending at
  // end[i] (end may be ready); returns the latest end (0 for none). Which port a request takes
  // cannot be seen, only when each port frees, so two ports are held as (earliest, latest) for
  // the run: no choice to branch on.
  uint64_t access_all(Sized request, const uint64_t* ready, uint64_t* end, size_t n) {
    busy_ += n * request.port_ps;
    uint64_t last = 0;
    if constexpr (kPorts == 2) {
      uint64_t earliest = std::min(free_[0], free_[1]), latest = std::max(free_[0], free_[1]);
      for (size_t i = 0; i < n; ++i) {
        const uint64_t e = std::max(ready[i], earliest) + request.port_ps;
        earliest = std::min(e, latest);
        latest = std::max(e, latest);
        last = std::max(last, e);
        end[i] = e;
      }
      free_[0] = earliest;
      free_[1] = latest;
    } else {
      for (size_t i = 0; i < n; ++i) {
        end[i] = book_port(free_, std::integral_constant<size_t, kPorts>{}, ready[i], request.port_ps);
        last = std::max(last, end[i]);
      }
    }
    return last;
  }
  void booked(uint64_t bytes) { bytes_ += bytes; }

 private:
  Scratchpad& s_;
  const bool write_;
  const int shift_;
  const uint64_t width_;
  uint64_t free_[kPorts] = {};
  uint64_t bytes_ = 0, busy_ = 0;
};

// "16384 B (16 KiB)": exact bytes, and binary units when they are whole.
std::string format_bytes(uint64_t bytes);

// Reference scratchpads (sources in the .cpp): vmem, weights, accumulators.
std::vector<ScratchpadConfig> tpu_v1_scratchpads();
std::vector<ScratchpadConfig> tpu_v4i_scratchpads();

}  // namespace systolic
