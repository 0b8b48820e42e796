#pragma once
// One DMA engine's timing, in plain C++ (no SystemC). A descriptor becomes contiguous runs on
// its HBM side(s), cut into requests of at most request_bytes (aligned, so one request is one
// HBM chunk), which are issued in time order to the shared HbmCore:
//   - at most max_outstanding requests in flight: request i issues when request
//     i - max_outstanding has completed (slots are reused in issue order);
//   - an SRAM side books a port of its scratchpad: written after the HBM data arrives
//     (HBM -> SRAM), or read before the HBM write is issued (SRAM -> HBM).
// Temporal decoupling (like TLM's quantum keeper): issue_until(horizon) books every request
// whose issue time is <= horizon and stops, so the SystemC wrapper books at most a quantum Q
// ahead of the kernel's time and then yields; other engines then book their requests for the
// same stretch of time and the shared data buses interleave them. docs/memory.md derives the
// error bound. Time is SystemC ps (1000 per core cycle).
// On an HBM timed HbmTiming::ideal (memory.ideal) a descriptor completes when it starts and only
// its bytes are counted, on the HBM, the scratchpads and the engine's stats alike.
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "models/common/config_issue.hpp"
#include "models/hbm/hbm_core.hpp"
#include "models/isa/dma_descriptor.hpp"
#include "models/sram/scratchpad.hpp"

namespace systolic {

struct DmaConfig {
  uint32_t engines = 4;            // DMA engines per chip (used by the chip, not by one core)
  uint64_t request_bytes = 0;      // largest HBM request; 0: the HBM chunk size
  uint32_t max_outstanding = 512;  // requests in flight per engine
  uint64_t quantum_cycles = 1000;  // Q: how far an engine books ahead before yielding
  std::optional<ConfigIssue> validate() const;  // fields: dma.engines, dma.request_bytes, ...
};

struct DmaStats {
  uint64_t descriptors = 0;
  uint64_t bytes = 0;              // sum of descriptors' total_bytes()
  uint64_t hbm_bytes_read = 0;
  uint64_t hbm_bytes_written = 0;
  uint64_t sram_bytes_read = 0;
  uint64_t sram_bytes_written = 0;
  uint64_t requests = 0;           // HBM requests (or SRAM-to-SRAM pieces)
  uint64_t busy_ps = 0;            // sum over descriptors of (completion - start)

  auto fields() const {
    return std::tie(descriptors, bytes, hbm_bytes_read, hbm_bytes_written, sram_bytes_read,
                    sram_bytes_written, requests, busy_ps);
  }
  bool operator==(const DmaStats& o) const { return fields() == o.fields(); }
};

class DmaCore {
 public:
  // `scratchpads[id]` serves DmaEndpoint::space == id. Both must outlive the core.
  // Throws std::invalid_argument for an invalid config.
  DmaCore(HbmCore& hbm, std::vector<Scratchpad*> scratchpads, const DmaConfig& config);

  // nullopt when the descriptor can run, else what is wrong ("dma descriptor: destination
  // [0, 4096) is past the end of vmem (...)"): for checking a program before simulating it.
  std::optional<std::string> check(const DmaDescriptor& d) const;
  // Begins a descriptor at now_ps (the previous one must be fully issued). Throws
  // std::invalid_argument with check()'s message for a descriptor that cannot run.
  void start(const DmaDescriptor& d, uint64_t now_ps);
  // Issues requests while the next one's issue time is <= horizon_ps. True when all are issued.
  bool issue_until(uint64_t horizon_ps);
  bool issued_all() const { return legs_left_ == 0; }
  uint64_t next_issue_ps() const;  // when the next request may issue
  uint64_t completion_ps() const { return completion_; }  // of the current descriptor so far
  // A whole descriptor with no kernel in between (one engine alone): returns its completion.
  uint64_t run(const DmaDescriptor& d, uint64_t now_ps);

  uint64_t request_bytes() const { return request_bytes_; }
  const DmaStats& stats() const { return stats_; }

 private:
  struct Leg {
    RunCursor cursor;
    uint64_t offset = 0;  // bytes of the current run already issued
    uint64_t issued = 0;
    bool write = false;   // HBM write (destination leg)
    bool hbm = true;      // false: SRAM -> SRAM, no HBM side
    bool active = false;
  };
  void count_untimed(const DmaDescriptor& d);  // HbmTiming::ideal: bytes only
  void issue_one();
  // How a request loop books the HBM: any request through HbmCore::Stream::access, or (every
  // request known to lie in one piece: book_pieces_) piece by piece, with the chunks' general
  // tests or on a plain() HBM without them.
  enum class HbmBooking { any, pieces, plain_pieces };
  void stream(Leg& leg, uint64_t horizon_ps);  // issue_until's fast path: one HBM leg left
  template <HbmBooking kHow>
  void stream_with_sram(Leg& leg, uint64_t horizon_ps);
  template <HbmBooking kHow, class Sram>
  void stream_on_sram(Leg& leg, uint64_t horizon_ps, Scratchpad* pad);
  template <HbmBooking kHow, bool kSramFirst, class Sram>
  void stream_requests(Leg& leg, uint64_t horizon_ps, Scratchpad* pad);
  uint64_t take(Leg& leg, uint64_t& address);   // the leg's next request; returns its size
  void next_run(Leg& leg);                      // after the last request of the current run
  void end_leg(Leg& leg);                       // after the last run
  void retire(uint64_t t, uint64_t done);       // a request issued at t completes at done
  void count(const Leg& leg, uint64_t bytes, uint64_t requests);
  // End of the request-aligned block holding address a.
  uint64_t request_end(uint64_t a) const {
    return request_pow2_ ? (a | (request_bytes_ - 1)) + 1 : (a / request_bytes_ + 1) * request_bytes_;
  }
  // The endpoint's scratchpad (null for HBM); sets `error` when the side cannot be served.
  Scratchpad* scratchpad(const DmaEndpoint& e, const char* side, const DmaDescriptor& d,
                         std::string& error) const;

  HbmCore& hbm_;
  std::vector<Scratchpad*> scratchpads_;
  DmaConfig config_;
  uint64_t request_bytes_;
  bool request_pow2_;
  bool book_pieces_;  // every request lies in one HBM piece (HbmCore::Stream::book)
  bool book_blocks_;  // and a whole request is a whole interleave block (Stream::book_block)
  std::vector<uint64_t> window_;  // completion time per in-flight slot
  uint64_t slot_ = 0;
  Leg legs_[2];
  int legs_left_ = 0;
  Scratchpad* src_sram_ = nullptr;
  Scratchpad* dst_sram_ = nullptr;
  uint64_t start_ = 0;
  uint64_t issue_ = 0;  // issue time of the last request (issue times never go back)
  uint64_t completion_ = 0;
  bool counted_ = true;  // busy_ps holds the current descriptor
  DmaStats stats_;
};

}  // namespace systolic
