#include "models/hbm/hbm_core.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace systolic {
HbmCore::Divider::Divider(uint64_t v) : d(v), pow2(v != 0 && (v & (v - 1)) == 0) {
  if (pow2)
    while ((uint64_t{1} << shift) < v) ++shift;
  else if (v < (uint64_t{1} << 32))
    magic = UINT64_MAX / v + 1;  // ceil(2^64 / v), v not a power of two
  // (v >= 2^32: magic 0 gives quotient 0, exact for numerators below 2^32)
}

void HbmCore::set_vector_booking(bool on) { vector_booking_ = on && cpu_has_avx2(); }

HbmCore::HbmCore(const HbmConfig& config, double core_clock_mhz, HbmTiming timing)
    : config_(validated(config, "hbm.")), timing_mode_(timing), ps_per_ns_(core_clock_mhz) {
  if (!(core_clock_mhz > 0)) throw std::invalid_argument("hbm: core clock must be > 0 MHz");
  t_rcd_ = ns_to_ps(config_.t_rcd_ns);
  t_rp_ = ns_to_ps(config_.t_rp_ns);
  t_cl_ = ns_to_ps(config_.t_cl_ns);
  t_ras_ = ns_to_ps(config_.t_ras_ns);
  t_rrd_ = ns_to_ps(config_.t_rrd_ns);
  t_faw_ = ns_to_ps(config_.t_faw_ns);
  t_refi_ = ns_to_ps(config_.t_refi_ns);
  t_rfc_ = ns_to_ps(config_.t_rfc_ns);
  refresh_on_ = t_rfc_ > 0;

  const uint64_t grain = std::min(config_.page_bytes, config_.interleave_bytes);
  interleave_ = Divider(config_.interleave_bytes);
  pcs_ = Divider(config_.pseudo_channel_count());
  page_ = Divider(config_.page_bytes);
  banks_ = Divider(config_.banks);
  chunk_ = Divider(config_.chunk_bytes);
  grain_ = Divider(grain);
  burst_ = Divider(config_.burst_bytes());
  channels_ = config_.channels;
  if (chunk_.pow2 && grain_.pow2 && interleave_.pow2 && page_.pow2 && banks_.pow2 && burst_.pow2)
    piece_bytes_ = std::min(config_.chunk_bytes, grain);

  // Pieces are cut on burst-aligned boundaries, so one holds at most this many bursts.
  const uint64_t max_bursts = std::min(config_.chunk_bytes, grain) / config_.burst_bytes();
  const double burst_ps = config_.burst_ns() * ps_per_ns_;
  xfer_ps_.resize(max_bursts + 1);
  for (uint64_t b = 0; b <= max_bursts; ++b)
    xfer_ps_[b] = static_cast<uint64_t>(std::ceil(static_cast<double>(b) * burst_ps - 1e-6));

  const uint64_t pcs = config_.pseudo_channel_count();
  const uint64_t quads = (pcs + 3) / 4;
  pc_.assign(quads * kPcQuad, 0);
  bank_.assign(quads * config_.banks * kBankQuad, 0);
  vector_booking_ = cpu_has_avx2();
  stats_.channel_busy_ps.assign(config_.channels, 0);
  timing_ = Timing{t_cl_,
                   t_rp_,
                   t_rcd_ + t_cl_,
                   t_ras_,
                   t_rrd_,
                   t_faw_,
                   t_faw_ > 4 * t_rrd_,
                   pc_.data(),
                   bank_.data(),
                   config_.banks * kBankQuad,
                   xfer_ps_.data(),
                   nullptr,
                   interleave_.shift,
                   page_.shift,
                   banks_.shift,
                   burst_.shift,
                   interleave_.d - 1,
                   banks_.d - 1,
                   burst_.d - 1,
                   pcs_.d,
                   pcs_};
  for (uint64_t i = 0; i < pcs; ++i) {
    const PcLane p = pc_lane(timing_, i);
    p.next_refresh() = refresh_on_ ? t_refi_ : UINT64_MAX;
    p.channel() = i % channels_;
    for (uint32_t b = 0; b < config_.banks; ++b) bank_lane(i, b).set_open_row(-1);
  }
}

const HbmStats& HbmCore::stats() const {
  std::fill(stats_.channel_busy_ps.begin(), stats_.channel_busy_ps.end(), 0);
  stats_.last_completion_ps = 0;
  for (uint64_t i = 0; i < pcs_.d; ++i) {
    const PcLane p = pc_lane(timing_, i);
    stats_.channel_busy_ps[p.channel()] += p.busy_ps();
    stats_.last_completion_ps = std::max(stats_.last_completion_ps, p.bus_free());
  }
  return stats_;
}

void HbmCore::record_activity() {
  stats_.channel_busy_per_window.assign(config_.channels, {});
  timing_.channel_windows = &stats_.channel_busy_per_window;
}

void HbmCore::count_channel_window(std::vector<WindowSeries>& windows, uint32_t channel, uint64_t t,
                                   uint64_t ps) {
  WindowSeries& w = windows[channel];
  while (ps > 0) {  // [t, t + ps) split at window boundaries
    const size_t window = static_cast<size_t>(t / HbmStats::kWindowPs);
    const uint64_t part = std::min(ps, (window + 1) * HbmStats::kWindowPs - t);
    w.add(window, part);
    t += part;
    ps -= part;
  }
}

uint64_t HbmCore::ns_to_ps(double ns) const {
  return static_cast<uint64_t>(std::llround(ns * ps_per_ns_));
}

double HbmCore::peak_bytes_per_ps() const {
  return config_.peak_bytes_per_second() / (ps_per_ns_ * 1e9);
}

uint64_t HbmCore::transfer_ps(uint64_t bytes) const {
  const uint64_t bursts = burst_.div(bytes + config_.burst_bytes() - 1);
  if (bursts < xfer_ps_.size()) return xfer_ps_[bursts];
  return static_cast<uint64_t>(
      std::ceil(static_cast<double>(bursts) * config_.burst_ns() * ps_per_ns_ - 1e-6));
}

HbmLocation HbmCore::locate(uint64_t addr) const {
  const uint64_t unit = interleave_.div(addr);
  const uint64_t pc = pseudo_channel_of(unit);
  const uint64_t local = pcs_.div(unit) * config_.interleave_bytes + interleave_.mod(addr);
  const uint64_t row_index = page_.div(local);
  HbmLocation loc;
  loc.channel = static_cast<uint32_t>(pc % channels_);
  loc.pseudo_channel = static_cast<uint32_t>(pc / channels_);
  loc.bank = static_cast<uint32_t>(banks_.mod(row_index));
  loc.row = banks_.div(row_index);
  loc.column = page_.mod(local);
  return loc;
}

// Interleave block -> pseudo-channel. Consecutive blocks rotate over every pseudo-channel;
// each further round of blocks is rotated by a hash of its index, as memory controllers hash
// upper address bits into the channel select: a strided walk (a column of a row-major matrix)
// then spreads over all channels instead of hammering the few its stride lands on. A rotation
// per round keeps the mapping one-to-one for any number of pseudo-channels. (book_pow2 in the
// header computes the same with shifts when the geometry is in powers of two.)
uint64_t HbmCore::pseudo_channel_of(uint64_t unit) const {
  const uint64_t round = pcs_.div(unit);
  const uint64_t rotation = (round * 0x9E3779B97F4A7C15ull) >> 40;
  return pcs_.mod(pcs_.mod(unit) + pcs_.mod(rotation));
}

void HbmCore::add(const RowCounts& rows, uint64_t chunks) {
  stats_.row_hits += rows.hits;
  stats_.row_misses += chunks - rows.hits;
  stats_.row_conflicts += rows.conflicts;
}

uint64_t HbmCore::refresh_then_chunk(PcLane p, BankLane b, uint64_t row, uint64_t bursts, uint64_t now) {
  const uint64_t lane = static_cast<uint64_t>(p.f - pc_.data());  // quad * kPcQuad + i % 4
  refresh(lane / kPcQuad * 4 + lane % kPcQuad, now);
  // The refresh closed every bank: the chunk is a miss and no conflict, which the caller counts
  // (a chunk it booked that was no hit), so `rows` stays zero.
  RowCounts rows;
  return chunk<Checks::general>(timing_, p, b, row, bursts, now, rows);
}

uint64_t HbmCore::piece(uint64_t a, uint64_t bytes, uint64_t now, RowCounts& rows) {
  // Address -> (pseudo-channel, bank, row): the piece lies in one interleave block and row.
  const uint64_t unit = interleave_.div(a);
  const uint64_t pc = pseudo_channel_of(unit);
  const uint64_t local = pcs_.div(unit) * config_.interleave_bytes + interleave_.mod(a);
  const uint64_t row_index = page_.div(local);
  const uint64_t bursts = burst_.div(a + bytes - 1) - burst_.div(a) + 1;
  const uint64_t t =
      chunk<Checks::general>(timing_, pc_lane(timing_, pc), bank_lane(pc, banks_.mod(row_index)),
                             banks_.div(row_index), bursts, now, rows);
  count_window(t, bytes);
  return t;
}

void HbmCore::count_untimed(uint64_t bytes, bool write) {
  if (bytes == 0) return;
  ++stats_.requests;
  (write ? stats_.bytes_written : stats_.bytes_read) += bytes;
}

// The whole blocks of [a, stop) (one round's) issued at now_ps, four at a time through
// Stream::book_blocks, in batches of up to 32; moves `a` past them and returns their latest end.
template <HbmCore::Checks kChecks>
uint64_t HbmCore::book_whole_blocks(Stream<kChecks>& stream, Blocks& blocks, uint64_t& a, uint64_t stop,
                                    uint64_t now_ps) {
  constexpr size_t kBatch = 32;
  uint64_t ready[kBatch], done[kBatch];
  std::fill(ready, ready + kBatch, now_ps);
  uint64_t latest = now_ps;
  for (uint64_t left = (stop - a) >> interleave_.shift; left > 0;) {
    const size_t batch = static_cast<size_t>(std::min<uint64_t>(left, kBatch));
    stream.book_blocks(blocks, piece_bytes_, ready, done, batch);
    latest = std::max(latest, *std::max_element(done, done + batch));
    stream.chunks_ += batch;
    a += batch * piece_bytes_;
    left -= batch;
  }
  return latest;
}

template <HbmCore::Checks kChecks>
uint64_t HbmCore::access_pieces(uint64_t addr, uint64_t bytes, bool write, uint64_t now_ps) {
  const uint64_t end = addr + bytes;
  uint64_t done = now_ps;
  Stream<kChecks> stream(*this, write);
  const uint64_t piece_mask = piece_bytes_ - 1;
  for (uint64_t a = addr; a < end;) {
    // A round's pieces share its mapping; its whole blocks (an ICI chunk of 64 KiB is 64 of
    // them) go to one pseudo-channel after another.
    const Round round = round_at(timing_, a);
    const uint64_t stop = std::min(end, round.end);
    if (whole_blocks() && (a & piece_mask) == 0 && stop - a > piece_mask) {
      Blocks blocks = stream.blocks_at(round, a);
      if (stream.vector_blocks() && stop - a >= 8 * piece_bytes_)  // (fewer: the set-up costs more)
        done = std::max(done, book_whole_blocks(stream, blocks, a, stop, now_ps));
      for (; stop - a > piece_mask; a += piece_bytes_, ++stream.chunks_)
        done = std::max(done, stream.book_block(blocks, piece_bytes_, now_ps));
    }
    for (; a < stop; ++stream.chunks_) {
      const uint64_t next = std::min(stop, (a | piece_mask) + 1);
      done = std::max(done, stream.piece(round, a, next - a, now_ps));
      a = next;
    }
  }
  stream.count(bytes);
  return done;
}

uint64_t HbmCore::access(uint64_t addr, uint64_t bytes, bool write, uint64_t now_ps) {
  if (bytes == 0) return now_ps;
  if (addr >= config_.capacity_bytes || bytes > config_.capacity_bytes - addr)
    throw std::out_of_range(fmt::format("hbm: access [{:#x}, {:#x}) is past the capacity of {} B",
                                        addr, addr + bytes, config_.capacity_bytes));
  if (timing_mode_ == HbmTiming::ideal) {
    count_untimed(bytes, write);
    return now_ps;
  }
  if (piece_bytes_ != 0)  // the pieces through a Stream: shifts, counters in registers
    return plain() ? access_pieces<Checks::plain>(addr, bytes, write, now_ps)
                   : access_pieces<Checks::general>(addr, bytes, write, now_ps);
  const uint64_t end = addr + bytes;
  uint64_t done = now_ps;
  ++stats_.requests;
  (write ? stats_.bytes_written : stats_.bytes_read) += bytes;
  RowCounts rows;
  uint64_t chunks = 0;
  for (uint64_t a = addr; a < end; ++chunks) {
    const uint64_t next =
        std::min({end, (chunk_.div(a) + 1) * config_.chunk_bytes, (grain_.div(a) + 1) * grain_.d});
    done = std::max(done, piece(a, next - a, now_ps, rows));
    a = next;
  }
  stats_.chunks += chunks;
  add(rows, chunks);
  return done;
}

// All-bank refresh of one pseudo-channel: the one due (or, after an idle stretch, the latest
// one due by `now`) starts when the bus is free, closes every row and blocks for tRFC.
void HbmCore::refresh(uint64_t pc, uint64_t now) {
  const PcLane p = pc_lane(timing_, pc);
  uint64_t due = p.next_refresh();
  if (now >= due + t_refi_) {  // refreshes that came and went while the pseudo-channel idled
    const uint64_t skipped = (now - due) / t_refi_;
    due += skipped * t_refi_;
    stats_.refreshes += skipped;
  }
  // It waits for tRAS of every open bank. Their latest is the last ACT's: a pseudo-channel's
  // ACTs go forward in time (tRRD apart) and only a refresh closes a bank. With no ACT since
  // the previous refresh, the last one's tRAS ended before that refresh began, so before its
  // end, which bus_free has reached.
  const uint64_t start = std::max({due, p.bus_free(), p.ras_ready()});
  // Every bank's next command waits for the end (its `ready` is earlier: the slot after its
  // last transfer, which ended by bus_free <= start).
  const uint64_t end = start + t_rfc_;
  for (uint32_t b = 0; b < config_.banks; ++b) {
    const BankLane bank = bank_lane(pc, b);
    bank.set_open_row(-1);
    bank.ready() = end;
  }
  p.bus_free() = std::max(p.bus_free(), end);
  p.rrd_ready() = std::max(p.rrd_ready(), end);
  p.next_refresh() = due + t_refi_;
  ++stats_.refreshes;
}

}  // namespace systolic
