#include "models/dma/dma_core.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace systolic {

std::optional<ConfigIssue> DmaConfig::validate() const {
  auto issue = [](std::string f, std::string e, uint64_t got) {
    return ConfigIssue{std::move(f), std::move(e), std::to_string(got)};
  };
  if (engines < 1) return issue("dma.engines", "an integer >= 1", engines);
  if (max_outstanding < 1 || max_outstanding > (1u << 20))
    return issue("dma.max_outstanding", "an integer in [1, 1048576]", max_outstanding);
  return std::nullopt;
}

DmaCore::DmaCore(HbmCore& hbm, std::vector<Scratchpad*> scratchpads, const DmaConfig& config)
    : hbm_(hbm), scratchpads_(std::move(scratchpads)), config_(config) {
  validated(config_);
  const HbmConfig& h = hbm_.config();
  request_bytes_ = config_.request_bytes ? config_.request_bytes : h.chunk_bytes;
  if (request_bytes_ % h.burst_bytes() != 0)
    throw std::invalid_argument(fmt::format(
        "dma.request_bytes: expected a multiple of the HBM burst ({} B), got {}", h.burst_bytes(),
        request_bytes_));
  request_pow2_ = (request_bytes_ & (request_bytes_ - 1)) == 0;
  // Requests never cross a multiple of request_bytes; when that divides the HBM's piece, each
  // lies in one piece (and start() checked the descriptor against the capacity).
  book_pieces_ = request_pow2_ && hbm_.piece_bytes() != 0 && request_bytes_ <= hbm_.piece_bytes();
  book_blocks_ = book_pieces_ && hbm_.whole_blocks() && request_bytes_ == hbm_.piece_bytes();
  window_.assign(config_.max_outstanding, 0);
}

Scratchpad* DmaCore::scratchpad(const DmaEndpoint& e, const char* side, const DmaDescriptor& d,
                                std::string& error) const {
  if (!error.empty()) return nullptr;
  const uint64_t extent = d.extent_bytes(e);
  if (e.is_hbm()) {
    const uint64_t cap = hbm_.config().capacity_bytes;
    if (e.base > cap || extent > cap - e.base)
      error = fmt::format("dma descriptor: {} [{:#x}, {:#x}) is past the HBM capacity of {}", side,
                          e.base, e.base + extent, format_bytes(cap));
    return nullptr;
  }
  if (e.space < 0 || static_cast<size_t>(e.space) >= scratchpads_.size() || !scratchpads_[e.space]) {
    error = fmt::format("dma descriptor: {} names scratchpad {}, but the engine has {}", side,
                        e.space, scratchpads_.size());
    return nullptr;
  }
  Scratchpad* s = scratchpads_[e.space];
  if (!s->contains(e.base, extent))
    error = fmt::format("dma descriptor: {} [{}, {}) is past the end of {} ({})", side, e.base,
                        e.base + extent, s->name(), format_bytes(s->capacity_bytes()));
  return s;
}

std::optional<std::string> DmaCore::check(const DmaDescriptor& d) const {
  std::string error;
  if (d.element_bytes == 0) error = "dma descriptor: element_bytes must be >= 1";
  scratchpad(d.src, "source", d, error);
  scratchpad(d.dst, "destination", d, error);
  if (error.empty()) return std::nullopt;
  return error;
}

void DmaCore::start(const DmaDescriptor& d, uint64_t now_ps) {
  if (!issued_all()) throw std::logic_error("dma: start() before the previous descriptor was issued");
  if (auto bad = check(d)) throw std::invalid_argument(*bad);
  std::string none;
  src_sram_ = scratchpad(d.src, "source", d, none);
  dst_sram_ = scratchpad(d.dst, "destination", d, none);
  legs_[0] = Leg{};
  legs_[1] = Leg{};
  legs_left_ = 0;
  const bool empty = d.total_bytes() == 0;
  const bool untimed = hbm_.timing() == HbmTiming::ideal;
  if (untimed) count_untimed(d);
  if (!empty && !untimed) {
    if (d.src.is_hbm()) legs_[0] = Leg{RunCursor(d, d.src), 0, 0, false, true, true};
    if (d.dst.is_hbm()) legs_[1] = Leg{RunCursor(d, d.dst), 0, 0, true, true, true};
    if (!d.src.is_hbm() && !d.dst.is_hbm())  // SRAM -> SRAM: pieces of the source runs
      legs_[0] = Leg{RunCursor(d, d.src), 0, 0, false, false, true};
    legs_left_ = legs_[0].active + legs_[1].active;
  }
  start_ = issue_ = completion_ = now_ps;
  counted_ = false;
  ++stats_.descriptors;
  stats_.bytes += d.total_bytes();
}

// memory.ideal: the descriptor's bytes counted on every side it touches, as the requests would
// count them, and no time taken.
void DmaCore::count_untimed(const DmaDescriptor& d) {
  const uint64_t bytes = d.total_bytes();
  if (d.src.is_hbm()) hbm_.count_untimed(bytes, false);
  else src_sram_->count_read(bytes);
  if (d.dst.is_hbm()) hbm_.count_untimed(bytes, true);
  else dst_sram_->count_write(bytes);
  (d.src.is_hbm() ? stats_.hbm_bytes_read : stats_.sram_bytes_read) += bytes;
  (d.dst.is_hbm() ? stats_.hbm_bytes_written : stats_.sram_bytes_written) += bytes;
}

uint64_t DmaCore::next_issue_ps() const {
  return std::max(issue_, window_[slot_]);
}

bool DmaCore::issue_until(uint64_t horizon_ps) {
  while (legs_left_ > 0 && next_issue_ps() <= horizon_ps) {
    if (legs_left_ == 1) {
      Leg& leg = legs_[0].active ? legs_[0] : legs_[1];
      if (leg.hbm) {
        stream(leg, horizon_ps);
        continue;
      }
    }
    issue_one();
  }
  if (legs_left_ == 0 && !counted_) {
    stats_.busy_ps += completion_ - start_;
    counted_ = true;
  }
  return legs_left_ == 0;
}

// After the last request of the current run.
inline void DmaCore::next_run(Leg& leg) {
  leg.offset = 0;
  leg.cursor.advance();
  if (leg.cursor.done()) end_leg(leg);
}

void DmaCore::end_leg(Leg& leg) {
  leg.active = false;
  --legs_left_;
}

// The request [a, a + n) of `leg`, from its cursor; moves the cursor past it.
uint64_t DmaCore::take(Leg& leg, uint64_t& a) {
  const DmaRun run = leg.cursor.current();
  a = run.address + leg.offset;
  const uint64_t n = std::min(run.bytes - leg.offset, request_end(a) - a);
  leg.offset += n;
  leg.issued += n;
  if (leg.offset == run.bytes) next_run(leg);
  return n;
}

void DmaCore::retire(uint64_t t, uint64_t done) {
  issue_ = t;
  window_[slot_] = done;
  slot_ = slot_ + 1 == window_.size() ? 0 : slot_ + 1;
  completion_ = std::max(completion_, done);
}

void DmaCore::count(const Leg& leg, uint64_t bytes, uint64_t requests) {
  stats_.requests += requests;
  if (!leg.hbm) {
    stats_.sram_bytes_read += bytes;
    stats_.sram_bytes_written += bytes;
    return;
  }
  (leg.write ? stats_.hbm_bytes_written : stats_.hbm_bytes_read) += bytes;
  if (leg.write ? src_sram_ != nullptr : dst_sram_ != nullptr)
    (leg.write ? stats_.sram_bytes_read : stats_.sram_bytes_written) += bytes;
}

void DmaCore::issue_one() {
  // Both HBM sides advance together: take the leg that has issued fewer bytes.
  Leg& leg = !legs_[0].active                               ? legs_[1]
             : !legs_[1].active                             ? legs_[0]
             : legs_[1].issued < legs_[0].issued ? legs_[1] : legs_[0];
  uint64_t a = 0;
  const uint64_t n = take(leg, a);
  const uint64_t t = next_issue_ps();
  uint64_t done;
  if (!leg.hbm) {  // SRAM -> SRAM
    done = dst_sram_->access(true, n, src_sram_->access(false, n, t));
  } else if (!leg.write) {  // HBM read, then the destination SRAM (if any) is written
    done = hbm_.access(a, n, false, t);
    if (dst_sram_) done = dst_sram_->access(true, n, done);
  } else {  // the source SRAM (if any) is read, then HBM written
    done = hbm_.access(a, n, true, src_sram_ ? src_sram_->access(false, n, t) : t);
  }
  retire(t, done);
  count(leg, n, 1);
}

// The only leg left has an HBM side: its requests back to back up to the horizon, the same
// requests, times and bookings as issue_one() one by one, with the loop state in locals, the
// counters summed once, the HBM booked through a Stream (HbmBooking says how) and the
// scratchpad through a Booking. The loop is what real memory costs (one pass per HBM request):
// each of its instructions shows in the wall time of a real-memory run (docs/performance.md).
namespace {
// The scratchpad side of a request loop: none, a Booking of its ports, or (more ports than
// the Bookings cover) the scratchpad itself. Each books a request `sized(bytes)` by `access`.
struct NoSram {
  struct Sized {};
  NoSram(Scratchpad*, bool) {}
  Sized sized(uint64_t) const { return {}; }
  uint64_t access(Sized, uint64_t ready_ps) { return ready_ps; }
  uint64_t access_all(Sized, const uint64_t* ready, uint64_t* end, size_t n) {
    std::copy(ready, ready + n, end);  // end may be ready
    return 0;                          // no port: the ends are the HBM's
  }
  void booked(uint64_t) {}
};
struct SramInPlace {
  struct Sized {
    uint64_t bytes;
  };
  SramInPlace(Scratchpad* s, bool write) : s(*s), write(write) {}
  Sized sized(uint64_t bytes) const { return {bytes}; }
  uint64_t access(Sized r, uint64_t ready_ps) { return s.access(write, r.bytes, ready_ps); }
  uint64_t access_all(Sized r, const uint64_t* ready, uint64_t* end, size_t n) {
    uint64_t last = 0;
    for (size_t i = 0; i < n; ++i) last = std::max(last, end[i] = access(r, ready[i]));
    return last;
  }
  void booked(uint64_t) {}  // access() counted them
  Scratchpad& s;
  const bool write;
};
}  // namespace

void DmaCore::stream(Leg& leg, uint64_t horizon_ps) {
  if (!book_pieces_)
    stream_with_sram<HbmBooking::any>(leg, horizon_ps);
  else if (hbm_.plain())
    stream_with_sram<HbmBooking::plain_pieces>(leg, horizon_ps);
  else
    stream_with_sram<HbmBooking::pieces>(leg, horizon_ps);
}

template <DmaCore::HbmBooking kHow>
void DmaCore::stream_with_sram(Leg& leg, uint64_t horizon_ps) {
  // The SRAM side, if any: read before the HBM write, written after the HBM read.
  Scratchpad* const pad = leg.write ? src_sram_ : dst_sram_;
  if (!pad)
    stream_requests<kHow, false, NoSram>(leg, horizon_ps, pad);
  else if (pad->ports() == 1)
    stream_on_sram<kHow, Scratchpad::Booking<1>>(leg, horizon_ps, pad);
  else if (pad->ports() == 2)
    stream_on_sram<kHow, Scratchpad::Booking<2>>(leg, horizon_ps, pad);
  else
    stream_on_sram<kHow, SramInPlace>(leg, horizon_ps, pad);
}

template <DmaCore::HbmBooking kHow, class Sram>
void DmaCore::stream_on_sram(Leg& leg, uint64_t horizon_ps, Scratchpad* pad) {
  if (leg.write)
    stream_requests<kHow, true, Sram>(leg, horizon_ps, pad);
  else
    stream_requests<kHow, false, Sram>(leg, horizon_ps, pad);
}

// One function, longer than most, on purpose: the whole loop's state stays in its frame, where
// the compiler keeps it in registers across the stores to banks, windows and ports.
template <DmaCore::HbmBooking kHow, bool kSramFirst, class Sram>
void DmaCore::stream_requests(Leg& leg, uint64_t horizon_ps, Scratchpad* pad) {
  constexpr bool kBook = kHow != HbmBooking::any;
  constexpr HbmCore::Checks kChecks =
      kHow == HbmBooking::plain_pieces ? HbmCore::Checks::plain : HbmCore::Checks::general;
  HbmCore::Stream<kChecks> hbm(hbm_, leg.write);
  Sram sram(pad, !leg.write);
  const uint64_t request_mask = request_bytes_ - 1;  // kBook: request_bytes_ is a power of two
  const int request_shift = __builtin_ctzll(request_bytes_);  // so a count of requests is a shift
  uint64_t* const window = window_.data();
  const size_t slots = window_.size();
  size_t slot = slot_;
  uint64_t issue = issue_, completion = completion_, bytes = 0, requests = 0;
  uint64_t a = 0;
  // A request issued ends at `done`: its window slot holds it until the request `slots` later.
  auto retire = [&](uint64_t done) {
    window[slot] = done;
    slot = slot + 1 == slots ? 0 : slot + 1;
    completion = std::max(completion, done);
  };
  // Issues the request [a, a + n) (`sized`: sram.sized(n)) if it may issue by the horizon
  // (else false), `book` booking its HBM side from a ready time.
  auto issue_request = [&](uint64_t n, typename Sram::Sized sized, auto&& book) {
    const uint64_t t = std::max(issue, window[slot]);
    if (t > horizon_ps) return false;
    issue = t;
    retire(kSramFirst ? book(sram.access(sized, t)) : sram.access(sized, book(t)));
    a += n;
    bytes += n;
    ++requests;
    return true;
  };
  // The issue times of up to `n` requests in a row whose window slots are w[0, n), into out:
  // each the later of the one before and its slot's end, as issue_request takes them; stops
  // before the first past the horizon and returns how many.
  auto issue_times = [&](const uint64_t* w, size_t n, uint64_t* out) {
    size_t i = 0;
    for (; i < n; ++i) {
      const uint64_t t = std::max(issue, w[i]);
      if (t > horizon_ps) break;
      issue = out[i] = t;
    }
    return i;
  };
  // Issues `count` whole blocks of `blocks` (n bytes each, in one round), as many as may issue
  // by the horizon; false if that was fewer. As issue_request one by one, in batches: the
  // issue times first, from the batch's window slots (a batch stops at the window's end, so they
  // are one stretch, each read before the batch writes it), then the blocks' HBM bookings, which
  // are independent (HbmCore::Stream::book_blocks: four at a time), and the scratchpad port in
  // order; the later of the two writes each block's end into its slot.
  auto issue_blocks = [&](typename HbmCore::Stream<kChecks>::Blocks& blocks, uint64_t count, uint64_t n,
                          typename Sram::Sized sized) {
    constexpr size_t kBatch = 32;
    uint64_t ready[kBatch], done[kBatch];  // per block: its issue (or port) time, its HBM end
    while (count > 0) {
      const size_t batch = static_cast<size_t>(std::min<uint64_t>({count, kBatch, slots - slot}));
      uint64_t* const ends = window + slot;
      const size_t issued = issue_times(ends, batch, ready);
      if (kSramFirst) {  // the port, then the HBM
        sram.access_all(sized, ready, ready, issued);
        completion = std::max(completion, hbm.book_blocks(blocks, n, ready, ends, issued));
      } else {  // the HBM, then the port (NoSram: none, its latest end 0)
        const uint64_t hbm_end = hbm.book_blocks(blocks, n, ready, done, issued);
        completion = std::max({completion, hbm_end, sram.access_all(sized, done, ends, issued)});
      }
      slot = slot + issued == slots ? 0 : slot + issued;
      a += issued * n;
      bytes += issued * n;
      requests += issued;
      if (issued < batch) return false;
      count -= batch;
    }
    return true;
  };
  // The round of interleave blocks of the last request (kBook): runs a few KiB apart (a tile's
  // rows) often lie in one.
  HbmCore::Round round{};
  // The runs from a local cursor: one member of `leg` would be reloaded after every store.
  RunCursor cursor = leg.cursor;
  uint64_t offset = leg.offset;
  bool at_horizon = false;
  while (!at_horizon) {
    const DmaRun run = cursor.current();
    const uint64_t end = run.address + run.bytes;
    a = run.address + offset;
    while (a < end && !at_horizon) {
      if (!kBook) {
        const uint64_t n = std::min(end - a, request_end(a) - a);
        at_horizon = !issue_request(n, sram.sized(n), [&](uint64_t t) { return hbm.access(a, n, t); });
        continue;
      }
      // The requests up to the end of a's round of interleave blocks share its mapping (a
      // request never crosses a round: it lies in one piece); whole blocks in a row go to one
      // pseudo-channel after another (two or more: for one, setting up the walk costs more).
      if (!hbm.in_round(round, a)) round = hbm.round_at(a);
      const uint64_t stop = std::min(end, round.end);
      if (book_blocks_ && (a & request_mask) == 0 && stop - a > 2 * request_mask + 1) {
        typename HbmCore::Stream<kChecks>::Blocks blocks = hbm.blocks_at(round, a);
        const uint64_t whole = a + ((stop - a) & ~request_mask);
        const uint64_t n = request_mask + 1;
        const typename Sram::Sized sized = sram.sized(n);
        // In batches where they are booked four at a time; a few blocks (a tile's row of 2-3
        // KiB) one by one, as without the vector booking: a batch's set-up costs more.
        const uint64_t count = (whole - a) >> request_shift;
        if (hbm.vector_blocks() && count >= 8) at_horizon = !issue_blocks(blocks, count, n, sized);
        while (a < whole && !at_horizon)
          at_horizon = !issue_request(n, sized, [&](uint64_t t) { return hbm.book_block(blocks, n, t); });
      }
      while (a < stop && !at_horizon) {
        const uint64_t n = std::min(stop - a, request_mask + 1 - (a & request_mask));
        at_horizon =
            !issue_request(n, sram.sized(n), [&](uint64_t t) { return hbm.book_in(round, a, n, t); });
      }
    }
    if (a < end) {  // stopped at the horizon
      offset = a - run.address;
      break;
    }
    offset = 0;
    cursor.advance();
    if (cursor.done()) break;
  }
  leg.cursor = cursor;
  leg.offset = offset;
  if (cursor.done()) end_leg(leg);
  if (kBook) hbm.booked(requests, bytes);
  sram.booked(bytes);
  slot_ = slot;
  issue_ = issue;
  completion_ = completion;
  leg.issued += bytes;
  count(leg, bytes, requests);
}

uint64_t DmaCore::run(const DmaDescriptor& d, uint64_t now_ps) {
  start(d, now_ps);
  issue_until(UINT64_MAX);
  return completion_;
}

}  // namespace systolic
