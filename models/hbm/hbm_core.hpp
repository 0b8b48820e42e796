#pragma once
// The DRAM timing core, in plain C++ (no SystemC): access() books one request on the banks and
// data buses it maps to and returns when its last byte moves. A request is cut into chunks (at
// most chunk_bytes, never across a row or an interleave block), each timed in O(1):
//   row hit      data starts tCL after the column command
//   row closed   tRCD + tCL after the ACT
//   row conflict tRP + tRCD + tCL after the PRE (which waits for tRAS of the open row)
// ACTs respect tRRD and tFAW per pseudo-channel. The data bus of each pseudo-channel is the
// shared resource, booked first come first served in call order: the row commands of one bank
// overlap other banks' transfers, so a stream over many banks keeps the bus busy. Every
// pseudo-channel refreshes all banks every tREFI (postponed while a transfer is on the bus),
// blocking it for tRFC and closing its rows.
//
// Time: "ps" throughout is SystemC time (1000 per core cycle, models/common/clock.hpp). The
// constructor converts the config's real ns with the core clock, so at 1000 MHz ps are real ps.
#include <cstdint>
#include <vector>

#include "models/hbm/hbm_config.hpp"

namespace systolic {

struct HbmStats {
  uint64_t bytes_read = 0;     // bytes the requests asked for (not rounded to bursts)
  uint64_t bytes_written = 0;
  uint64_t requests = 0;       // access() calls with bytes > 0
  uint64_t chunks = 0;         // timed pieces
  uint64_t row_hits = 0;       // chunks whose row was open
  uint64_t row_misses = 0;     // chunks that needed an ACT (bank closed or another row open)
  uint64_t row_conflicts = 0;  // the misses that first had to close another row
  uint64_t refreshes = 0;      // per pseudo-channel, summed
  uint64_t last_completion_ps = 0;
  std::vector<uint64_t> channel_busy_ps;  // data-bus time, summed over the channel's pseudo-channels
  // Bytes whose transfer completed in each window of kWindowPs (for bandwidth-over-time plots).
  static constexpr uint64_t kWindowPs = 1000000;  // 1000 core cycles
  std::vector<uint64_t> bytes_per_window;
};

struct HbmLocation {
  uint32_t channel = 0;
  uint32_t pseudo_channel = 0;
  uint32_t bank = 0;
  uint64_t row = 0;
  uint64_t column = 0;  // byte offset in the row
};

class HbmCore {
 public:
  // Throws std::invalid_argument with HbmConfigIssue::message() for an invalid config.
  explicit HbmCore(const HbmConfig& config, double core_clock_mhz = 1000.0);

  // Books [addr, addr + bytes) issued at now_ps; returns the completion time in ps (now_ps for
  // zero bytes). Throws std::out_of_range past capacity_bytes.
  uint64_t access(uint64_t addr, uint64_t bytes, bool write, uint64_t now_ps);

  HbmLocation locate(uint64_t addr) const;
  const HbmConfig& config() const { return config_; }
  const HbmStats& stats() const { return stats_; }
  double ps_per_ns() const { return ps_per_ns_; }  // SystemC ps per real ns (= core MHz)
  uint64_t ns_to_ps(double ns) const;
  // Peak bandwidth in bytes per SystemC ps (e.g. 0.6144 for 614.4 GB/s at 1000 MHz).
  double peak_bytes_per_ps() const;
  // Bus time of one chunk of `bytes` starting on a burst boundary.
  uint64_t transfer_ps(uint64_t bytes) const;

 private:
  // Division by a constant: a shift when it is a power of two.
  struct Divider {
    uint64_t d = 1;
    uint32_t shift = 0;
    bool pow2 = true;
    explicit Divider(uint64_t v = 1);
    uint64_t div(uint64_t x) const { return pow2 ? x >> shift : x / d; }
    uint64_t mod(uint64_t x) const { return pow2 ? x & (d - 1) : x % d; }
  };
  struct Bank {
    int64_t open_row = -1;   // -1: closed
    uint64_t ready = 0;      // earliest next command (the last transfer's column command slot)
    uint64_t ras_ready = 0;  // earliest PRE (ACT + tRAS)
  };
  struct PseudoChannel {
    uint64_t bus_free = 0;
    uint64_t next_refresh = 0;
    uint64_t rrd_ready = 0;    // last ACT + tRRD
    uint64_t faw_ready[4] = {0, 0, 0, 0};  // ACT i + tFAW, ring of the last four
    uint32_t faw_pos = 0;
  };

  uint64_t pseudo_channel_of(uint64_t interleave_block) const;
  uint64_t chunk(uint64_t pc, uint32_t channel, uint32_t bank, uint64_t row, uint64_t bursts,
                 uint64_t now);
  void refresh(uint64_t pc, uint64_t now);

  HbmConfig config_;
  double ps_per_ns_;
  uint64_t t_rcd_, t_rp_, t_cl_, t_ras_, t_rrd_, t_faw_, t_refi_, t_rfc_;
  bool refresh_on_;
  Divider interleave_, pcs_, page_, banks_, chunk_, grain_, burst_;
  uint32_t channels_;
  std::vector<uint64_t> xfer_ps_;  // by burst count
  std::vector<PseudoChannel> pc_;
  std::vector<Bank> bank_;  // pc * banks + bank
  HbmStats stats_;
};

}  // namespace systolic
