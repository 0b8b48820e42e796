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
//
// Why one header of about 500 lines: the core, its Stream and the inline chunk booking go
// together into the DMA engine's request loop, which must compile into one loop (what real
// memory costs: docs/performance.md); split, they would still be one unit.
#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "models/hbm/hbm_config.hpp"
#include "models/hbm/window_series.hpp"

namespace systolic {

// How the HBM is timed. `ideal` is memory.ideal's what-if: every access completes when it is
// issued (no bank, bus or refresh time) and only its bytes are counted, so energy still follows
// the bytes a program moves while time can only get shorter than with the modelled HBM.
enum class HbmTiming { modelled, ideal };

struct HbmStats {
  uint64_t bytes_read = 0;     // bytes the requests asked for (not rounded to bursts)
  uint64_t bytes_written = 0;
  uint64_t requests = 0;       // access() calls with bytes > 0
  uint64_t chunks = 0;         // timed pieces
  uint64_t row_hits = 0;       // chunks whose row was open
  uint64_t row_misses = 0;     // chunks that needed an ACT (bank closed or another row open)
  uint64_t row_conflicts = 0;  // the misses that first had to close another row
  uint64_t refreshes = 0;      // per pseudo-channel, summed
  uint64_t last_completion_ps = 0;        // the latest end of a chunk's data
  std::vector<uint64_t> channel_busy_ps;  // data-bus time, summed over the channel's pseudo-channels
  // Bytes whose transfer completed in each window of kWindowPs (bandwidth over time), when
  // HbmCore::record_activity() asked for it (timelines); empty otherwise.
  static constexpr uint64_t kWindowPs = 1000000;  // 1000 core cycles
  WindowSeries bytes_per_window;
  // Per channel, its data-bus time in each window (summed over its pseudo-channels), when
  // HbmCore::record_activity() asked for it; empty otherwise.
  std::vector<WindowSeries> channel_busy_per_window;

  auto fields() const {
    return std::tie(bytes_read, bytes_written, requests, chunks, row_hits, row_misses, row_conflicts,
                    refreshes, last_completion_ps, channel_busy_ps, bytes_per_window, channel_busy_per_window);
  }
  bool operator==(const HbmStats& o) const { return fields() == o.fields(); }
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
  // What booking a chunk tests at run time. `general`: whether tFAW binds and whether activity
  // is recorded; `plain`: neither, for an HBM where both are false (plain()), so a request loop
  // drops three tests a chunk (every HBM preset's tFAW is 4 tRRD: it never binds).
  enum class Checks { general, plain };
  template <Checks kChecks = Checks::general>
  class Stream;
  // A round of interleave blocks, one per pseudo-channel (piece_bytes() != 0): where it ends,
  // its first block's index, the rotation of its blocks over the pseudo-channels (less than
  // their count) and its rows' base (Stream::round_at).
  struct Round {
    uint64_t end, first_block, rotation, row_base;
  };

  // Throws std::invalid_argument with ConfigIssue::message() for an invalid config.
  explicit HbmCore(const HbmConfig& config, double core_clock_mhz = 1000.0,
                   HbmTiming timing = HbmTiming::modelled);
  HbmCore(const HbmCore&) = delete;  // timing_ points into the core's own state
  HbmCore& operator=(const HbmCore&) = delete;

  // Books [addr, addr + bytes) issued at now_ps; returns the completion time in ps (now_ps for
  // zero bytes). Throws std::out_of_range past capacity_bytes.
  uint64_t access(uint64_t addr, uint64_t bytes, bool write, uint64_t now_ps);

  // Also records the bytes and each channel's bus time per window (HbmStats::bytes_per_window,
  // channel_busy_per_window). Call before the first access; off by default, so the booking
  // loop pays one untaken branch.
  void record_activity();

  // Whether Stream<Checks::plain>::book_blocks books four blocks at once with AVX2: on by
  // default where the processor has AVX2. Tests turn it off to compare with the scalar booking,
  // which gives the same bookings.
  bool vector_booking() const { return vector_booking_; }
  void set_vector_booking(bool on);  // on only where the processor has AVX2 (else ignored)

  HbmLocation locate(uint64_t addr) const;
  HbmTiming timing() const { return timing_mode_; }
  // Chunks need no Checks::general tests: tFAW does not bind and no activity is recorded.
  bool plain() const { return !timing_.faw_binds && !timing_.channel_windows; }
  // Counts a transfer of `bytes` without timing it (HbmTiming::ideal): as access() there.
  void count_untimed(uint64_t bytes, bool write);
  const HbmConfig& config() const { return config_; }
  // The counters so far, with channel_busy_ps summed from the pseudo-channels' bus time and
  // last_completion_ps their latest bus_free (a pseudo-channel's bus frees when its latest
  // chunk's data ends: a refresh moves it only just before the chunk it delays).
  const HbmStats& stats() const;
  double ps_per_ns() const { return ps_per_ns_; }  // SystemC ps per real ns (= core MHz)
  uint64_t ns_to_ps(double ns) const;
  // Peak bandwidth in bytes per SystemC ps (e.g. 0.6144 for 614.4 GB/s at 1000 MHz).
  double peak_bytes_per_ps() const;
  // Bus time of one chunk of `bytes` starting on a burst boundary.
  uint64_t transfer_ps(uint64_t bytes) const;
  // When every size of the geometry but the pseudo-channel count is a power of two, pieces are
  // cut at the multiples of this (the smaller of chunk, page and interleave) and a request
  // inside one such block can go through Stream::book(); 0 otherwise. (The pseudo-channels'
  // division is taken once per round of blocks: TPU v5p's HBM has 96.)
  uint64_t piece_bytes() const { return piece_bytes_; }
  // Whether a piece is a whole interleave block (Stream::blocks_at).
  bool whole_blocks() const { return piece_bytes_ != 0 && piece_bytes_ == config_.interleave_bytes; }

 private:
  // Division by a constant without a divide instruction: a shift when it is a power of two,
  // else a multiply by a 64-bit reciprocal, exact for numerators below 2^32 (Lemire, Kaser and
  // Kurz, "Faster remainder by direct computation", 2019); larger numerators divide.
  struct Divider {
    uint64_t d = 1;
    uint64_t magic = 0;  // ceil(2^64 / d) when d is not a power of two
    uint32_t shift = 0;
    bool pow2 = true;
    explicit Divider(uint64_t v = 1);
    uint64_t div(uint64_t x) const {
      if (pow2) return x >> shift;
      if ((x >> 32) == 0)
        return static_cast<uint64_t>((static_cast<unsigned __int128>(magic) * x) >> 64);
      return x / d;
    }
    uint64_t mod(uint64_t x) const { return pow2 ? x & (d - 1) : x - div(x) * d; }
  };
  // Pseudo-channels and their banks are stored field by field in quads of four pseudo-
  // channels, so that four in a row load as one vector a field (book_blocks_avx2): field f of
  // pseudo-channel i is pc_[i / 4 * kPcQuad + 4 f + i % 4], of its bank j
  // bank_[(i / 4 * banks + j) * kBankQuad + 4 f + i % 4]. Scalar code reaches one through a
  // pointer to its lane (PcLane, BankLane), its fields 4 qwords apart.
  enum PcField : uint32_t {
    kBusFree,
    kNextRefresh,
    kRrdReady,
    kRasReady,
    kBusy,
    kFaw,
    kFawPos = kFaw + 4,
    kChannel,
    kPcFields
  };
  enum BankField : uint32_t { kOpenRow, kReady, kBankRas, kBankFields };
  static constexpr uint64_t kPcQuad = 4 * kPcFields;  // qwords
  static constexpr uint64_t kBankQuad = 16;           // 4 * kBankFields, padded to a power of two
  static_assert(kBankQuad >= 4 * kBankFields);
  struct PcLane {
    uint64_t* f;  // bus_free of the pseudo-channel, in its quad
    uint64_t& bus_free() const { return f[4 * kBusFree]; }
    uint64_t& next_refresh() const { return f[4 * kNextRefresh]; }  // UINT64_MAX with refresh off
    uint64_t& rrd_ready() const { return f[4 * kRrdReady]; }        // last ACT + tRRD
    // Last ACT + tRAS: the latest of its open banks' (refresh waits for it).
    uint64_t& ras_ready() const { return f[4 * kRasReady]; }
    uint64_t& busy_ps() const { return f[4 * kBusy]; }  // data-bus time (stats() sums a channel's)
    uint64_t& faw_ready(uint64_t i) const { return f[4 * (kFaw + i)]; }  // ACT i + tFAW, a ring
    uint64_t& faw_pos() const { return f[4 * kFawPos]; }                 // of the last four
    uint64_t& channel() const { return f[4 * kChannel]; }                // pseudo-channel index mod channels
  };
  struct BankLane {
    uint64_t* f;                                                                // its open_row
    int64_t open_row() const { return static_cast<int64_t>(f[4 * kOpenRow]); }  // -1: closed
    void set_open_row(int64_t row) const { f[4 * kOpenRow] = static_cast<uint64_t>(row); }
    // Earliest next command (the last transfer's column command slot).
    uint64_t& ready() const { return f[4 * kReady]; }
    uint64_t& ras_ready() const { return f[4 * kBankRas]; }  // earliest PRE (ACT + tRAS)
  };
  // Whole interleave blocks in address order, when a block is one piece (whole_blocks()): each
  // on the pseudo-channel after the previous one's, in the same bank and row of the round.
  // Walked by pointer: the next pseudo-channel's lane and its bank's (Stream::blocks_at,
  // book_block, book_blocks).
  struct Blocks {
    uint64_t index;        // the next block's pseudo-channel
    uint64_t* pc;          // its lane
    uint64_t* bank;        // and its bank's
    uint64_t* first_bank;  // the round's bank in pseudo-channel 0 (after the last pseudo-channel)
    uint64_t row, bursts;
  };
  // Row-buffer outcomes of chunks, summed by whoever books them and added to the stats once
  // (add()). The misses are the chunks that were not hits: whoever books chunks counts them
  // anyway, so a chunk needs no third counter.
  struct RowCounts {
    uint64_t hits = 0, conflicts = 0;
  };
  // What booking a chunk reads and never changes, and the power-of-two mapping. A Stream
  // copies it into its caller's frame: a local cannot alias the stores to banks and counters,
  // so the compiler keeps it in registers instead of reloading the core's members.
  struct Timing {
    uint64_t t_cl, t_rp, t_act_to_data, t_ras, t_rrd, t_faw;
    bool faw_binds;  // tFAW > 4 tRRD (else four ACTs spaced tRRD already span tFAW)
    uint64_t* pc;    // pc_.data()
    uint64_t* bank;  // bank_.data()
    uint64_t bank_quad_stride;  // banks * kBankQuad: a bank's lane in one quad to the next quad's
    const uint64_t* xfer_ps;                     // by burst count
    std::vector<WindowSeries>* channel_windows;  // null unless recording
    // With piece_bytes_ != 0: shifts and masks of the interleave block, the page, the banks and
    // the burst, and the pseudo-channel count with its divider (a round of blocks has one per
    // pseudo-channel: round_at divides once per round).
    uint32_t interleave_shift, page_shift, banks_shift, burst_shift;
    uint64_t interleave_mask, banks_mask, burst_mask;
    uint64_t pcs;            // pseudo-channels: any count (a round's division is per round)
    Divider pcs_div;         // by pcs (a copy: a pointer into the core would be reloaded after stores)
  };

  static Round round_at(const Timing& k, uint64_t addr) {
    const uint64_t round = k.pcs_div.div(addr >> k.interleave_shift);
    const uint64_t first = round * k.pcs;
    return {(first + k.pcs) << k.interleave_shift, first,
            k.pcs_div.mod((round * 0x9E3779B97F4A7C15ull) >> 40), round << k.interleave_shift};
  }
  // The pseudo-channel of interleave block `block` of `round` (pseudo_channel_of).
  static uint64_t pseudo_channel_in(const Timing& k, const Round& round, uint64_t block) {
    const uint64_t pc = block - round.first_block + round.rotation;
    return pc >= k.pcs ? pc - k.pcs : pc;
  }
  uint64_t pseudo_channel_of(uint64_t interleave_block) const;
  // The lanes of pseudo-channel `pc` and of its bank `bank`; bank_lane_pow2 with the banks a
  // power of two (piece_bytes_ != 0).
  static PcLane pc_lane(const Timing& k, uint64_t pc) { return {k.pc + (pc >> 2) * kPcQuad + (pc & 3)}; }
  static BankLane bank_lane_pow2(const Timing& k, uint64_t pc, uint64_t bank) {
    return {k.bank + (((pc >> 2) << k.banks_shift) | bank) * kBankQuad + (pc & 3)};
  }
  BankLane bank_lane(uint64_t pc, uint64_t bank) {
    return {bank_.data() + ((pc >> 2) * config_.banks + bank) * kBankQuad + (pc & 3)};
  }
  // The walk of whole blocks to the next pseudo-channel (its lane in this quad or the next's).
  static void step(const Timing& k, Blocks& blocks) {
    if ((++blocks.index & 3) != 0) {
      ++blocks.pc;
      ++blocks.bank;
    } else {
      blocks.pc += kPcQuad - 3;
      blocks.bank += k.bank_quad_stride - 3;
    }
    wrap(k, blocks);
  }
  // After the last pseudo-channel, the walk goes on at pseudo-channel 0.
  static void wrap(const Timing& k, Blocks& blocks) {
    if (blocks.index == k.pcs) {
      blocks.index = 0;
      blocks.pc = k.pc;
      blocks.bank = blocks.first_bank;
    }
  }
  // Books `bursts` on (pseudo-channel p, its bank b, row) from now and its bus time; returns
  // the data end (later than now).
  template <Checks kChecks>
  uint64_t chunk(const Timing& k, PcLane p, BankLane b, uint64_t row, uint64_t bursts, uint64_t now,
                 RowCounts& rows);
  // What a run of blocks booked: their row outcomes and their latest data end.
  struct BlocksBooked {
    RowCounts rows;
    uint64_t latest = 0;
  };
  // Stream<Checks::plain>::book_blocks with AVX2 (hbm_core_avx2.cpp): `count` blocks of
  // `blocks`, four at a time where they fill a quad of pseudo-channels (the others, a group
  // with a refresh due and times of 2^61 ps or more by chunk()).
  BlocksBooked book_blocks_avx2(Blocks& blocks, const uint64_t* ready, uint64_t* done, size_t count);
  static bool cpu_has_avx2();  // whether this processor runs book_blocks_avx2
  // chunk() when a refresh falls due before its data (about once per tREFI per pseudo-channel).
  [[gnu::noinline]] uint64_t refresh_then_chunk(PcLane p, BankLane b, uint64_t row, uint64_t bursts,
                                                uint64_t now);
  // Maps and books the piece [a, a + bytes) (one row of one bank) and counts its bytes'
  // window; returns its data end.
  uint64_t piece(uint64_t a, uint64_t bytes, uint64_t now, RowCounts& rows);
  // The booking of piece() with every division a shift or once per round (piece_bytes_ != 0),
  // no window count.
  template <Checks kChecks>
  uint64_t book_pow2(const Timing& k, const Round& round, uint64_t a, uint64_t bytes, uint64_t now,
                     RowCounts& rows);
  // access_pieces' whole blocks of one round, four at a time (Stream::vector_blocks()).
  template <Checks kChecks>
  uint64_t book_whole_blocks(Stream<kChecks>& stream, Blocks& blocks, uint64_t& a, uint64_t stop,
                             uint64_t now_ps);
  // access() when piece_bytes() != 0: its pieces through a Stream<kChecks>.
  template <Checks kChecks>
  uint64_t access_pieces(uint64_t addr, uint64_t bytes, bool write, uint64_t now_ps);
  void count_window(uint64_t t, uint64_t bytes);
  [[gnu::noinline]] static void count_channel_window(std::vector<WindowSeries>& windows, uint32_t channel,
                                                     uint64_t t, uint64_t ps);
  void add(const RowCounts& rows, uint64_t chunks);  // `chunks` booked, `rows` their outcomes
  void refresh(uint64_t pc, uint64_t now);

  HbmConfig config_;
  HbmTiming timing_mode_;
  double ps_per_ns_;
  uint64_t t_rcd_, t_rp_, t_cl_, t_ras_, t_rrd_, t_faw_, t_refi_, t_rfc_;
  bool refresh_on_;
  bool vector_booking_;
  Divider interleave_, pcs_, page_, banks_, chunk_, grain_, burst_;
  uint64_t piece_bytes_ = 0;  // piece_bytes()
  uint32_t channels_;
  std::vector<uint64_t> xfer_ps_;  // by burst count
  std::vector<uint64_t> pc_;       // in quads (PcLane)
  std::vector<uint64_t> bank_;     // in quads (BankLane)
  mutable HbmStats stats_;  // mutable: stats() brings channel_busy_ps up to date
  Timing timing_;           // points into xfer_ps_, pc_ and bank_ (never resized)
};

// Many requests in a row from one caller (a DMA engine's request loop): the same completion
// times, bookings and counters as HbmCore::access one by one, inline for a request inside one
// piece. The per-request counters are summed here and added to the core's stats when the
// stream ends: read stats() only after. access() and book() count each request; a loop over
// many uses book_in() or book_block() and counts them all at once with booked(). A
// Stream<Checks::plain> is only for an HBM that is plain().
template <HbmCore::Checks kChecks>
class HbmCore::Stream {
 public:
  Stream(HbmCore& hbm, bool write) : hbm_(hbm), k_(hbm.timing_), write_(write) {}
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (window_bytes_ != 0) hbm_.count_window(window_start_, window_bytes_);
    HbmStats& s = hbm_.stats_;
    s.requests += requests_;
    s.chunks += chunks_;
    (write_ ? s.bytes_written : s.bytes_read) += bytes_;
    s.row_hits += rows_.hits;  // not add(rows_): no address of a counter may escape, or the
    s.row_misses += chunks_ - rows_.hits;  // compiler keeps them in memory across the caller's calls
    s.row_conflicts += rows_.conflicts;
  }

  // Any request, as HbmCore::access.
  uint64_t access(uint64_t addr, uint64_t bytes, uint64_t now_ps) {
    const uint64_t last = addr + bytes - 1;
    // book() takes it when it lies in one piece (addr and last agree above the piece, so last
    // did not wrap) inside the capacity.
    if (hbm_.timing_mode_ == HbmTiming::modelled && hbm_.piece_bytes_ != 0 && bytes != 0 && ((addr ^ last) & ~(hbm_.piece_bytes_ - 1)) == 0 &&
        last < hbm_.config_.capacity_bytes)
      return book(addr, bytes, now_ps);
    return hbm_.access(addr, bytes, write_, now_ps);
  }
  // A request the caller knows to be non-empty, inside the capacity and inside one
  // piece_bytes()-aligned block (piece_bytes() != 0), without those checks.
  uint64_t book(uint64_t addr, uint64_t bytes, uint64_t now_ps) {
    const uint64_t done = book_in(round_at(addr), addr, bytes, now_ps);
    booked(1, bytes);
    return done;
  }
  // The blocks of one round of interleave blocks (one per pseudo-channel) share its rotation
  // and row base: a caller booking many requests in a row takes them once per round.
  Round round_at(uint64_t addr) const { return hbm_.round_at(k_, addr); }
  // Whether `addr` lies in `round` (false for a Round{}).
  bool in_round(const Round& round, uint64_t addr) const {
    return addr < round.end && addr >= round.first_block << k_.interleave_shift;
  }
  // book() for a request inside `round`, counted later with the others by booked(): a loop
  // over many requests keeps one count of them rather than one here and one of its own.
  [[gnu::always_inline]] uint64_t book_in(const Round& round, uint64_t addr, uint64_t bytes,
                                          uint64_t now_ps) {
    return piece(round, addr, bytes, now_ps);
  }
  using Blocks = HbmCore::Blocks;
  // The blocks from `addr` (the start of a block inside `round`) on.
  Blocks blocks_at(const Round& round, uint64_t addr) const {
    const uint64_t row_index = round.row_base >> k_.page_shift;
    const uint64_t pc = pseudo_channel_in(k_, round, addr >> k_.interleave_shift);
    uint64_t* const first_bank = k_.bank + (row_index & k_.banks_mask) * kBankQuad;
    return {pc,         pc_lane(k_, pc).f,           first_bank + (pc >> 2) * k_.bank_quad_stride + (pc & 3),
            first_bank, row_index >> k_.banks_shift, (k_.interleave_mask + 1) >> k_.burst_shift};
  }
  // book_in() for the next block of `blocks` (bytes: the block's size).
  [[gnu::always_inline]] uint64_t book_block(Blocks& blocks, uint64_t bytes, uint64_t now_ps) {
    const uint64_t done = counted(
        hbm_.chunk<kChecks>(k_, {blocks.pc}, {blocks.bank}, blocks.row, blocks.bursts, now_ps, rows_), bytes);
    step(k_, blocks);
    return done;
  }
  // Whether book_blocks() books four at a time (on a plain() HBM, with vector_booking()): one
  // by one, a caller's own loop of book_block() costs less than batches.
  bool vector_blocks() const { return kChecks == Checks::plain && hbm_.vector_booking_; }
  // book_block() for `count` blocks of `blocks` in a row, block i issued at ready[i]; done[i]
  // its data end. They must lie in one round (count <= the blocks left in it), so each is on a
  // different pseudo-channel and their bookings are independent: on a plain() HBM four at a
  // time with AVX2 (vector_booking()), the same bookings as one by one. Returns the latest
  // done[i] (0 for none).
  uint64_t book_blocks(Blocks& blocks, uint64_t bytes, const uint64_t* ready, uint64_t* done, size_t count) {
    if (vector_blocks()) {
      const BlocksBooked booked = hbm_.book_blocks_avx2(blocks, ready, done, count);
      rows_.hits += booked.rows.hits;
      rows_.conflicts += booked.rows.conflicts;
      return booked.latest;
    }
    uint64_t latest = 0;
    for (size_t i = 0; i < count; ++i)
      latest = std::max(latest, done[i] = book_block(blocks, bytes, ready[i]));
    return latest;
  }
  // Counts `requests` requests of `bytes` bytes in all, booked by book_in, book_block or
  // book_blocks (one piece each).
  void booked(uint64_t requests, uint64_t bytes) {
    requests_ += requests;
    chunks_ += requests;
    bytes_ += bytes;
  }

 private:
  friend class HbmCore;  // access() books its pieces through a Stream too

  // One piece of a request (piece_bytes() != 0): booked, its bytes counted in their window.
  [[gnu::always_inline]] uint64_t piece(const Round& round, uint64_t addr, uint64_t bytes, uint64_t now_ps) {
    return counted(hbm_.book_pow2<kChecks>(k_, round, addr, bytes, now_ps, rows_), bytes);
  }
  // A piece of `bytes` whose data ends at `end`: its bytes counted in their window.
  [[gnu::always_inline]] uint64_t counted(uint64_t end, uint64_t bytes) {
    if (kChecks == Checks::plain || !k_.channel_windows) return end;  // not recording
    // Bytes per window: summed here while the completions stay in one window (they rarely
    // leave it: a window is a thousand cycles), added to the stats when they do.
    if (end - window_start_ >= HbmStats::kWindowPs) {
      if (window_bytes_ != 0) hbm_.count_window(window_start_, window_bytes_);
      window_start_ = end / HbmStats::kWindowPs * HbmStats::kWindowPs;
      window_bytes_ = 0;
    }
    window_bytes_ += bytes;
    return end;
  }
  void count(uint64_t bytes) {  // one request
    ++requests_;
    bytes_ += bytes;
  }

  HbmCore& hbm_;
  const Timing k_;
  const bool write_;
  RowCounts rows_;
  uint64_t requests_ = 0, chunks_ = 0, bytes_ = 0;
  uint64_t window_start_ = 0, window_bytes_ = 0;  // bytes completed in [start, start + window)
};

// The hot path, inline so that a Stream's caller compiles into one loop.

template <HbmCore::Checks kChecks>
[[gnu::always_inline]] inline uint64_t HbmCore::chunk(const Timing& k, PcLane p, BankLane b, uint64_t row,
                                                      uint64_t bursts, uint64_t now, RowCounts& rows) {
  constexpr bool kGeneral = kChecks == Checks::general;
  const int64_t open_row = b.open_row();
  const bool hit = open_row == static_cast<int64_t>(row);
  const bool open = open_row >= 0;
  const uint64_t cmd = std::max(now, b.ready());
  uint64_t act = 0;
  uint64_t data_start;
  if (hit) {
    data_start = std::max(p.bus_free(), cmd + k.t_cl);
  } else {
    // An open bank precharges first: act = max(cmd, ras_ready) + tRP, else cmd. Without a
    // branch: whether the bank is open follows each pseudo-channel's refreshes, which close
    // its banks, and a mispredicted branch here cost 4 % of a real-memory run's time.
    const uint64_t open_mask = uint64_t{0} - static_cast<uint64_t>(open);  // all ones if open
    act = std::max(cmd + (k.t_rp & open_mask), (b.ras_ready() + k.t_rp) & open_mask);
    act = std::max(act, p.rrd_ready());
    if (kGeneral && k.faw_binds) act = std::max(act, p.faw_ready(p.faw_pos()));
    data_start = std::max(p.bus_free(), act + k.t_act_to_data);
  }
  if (data_start >= p.next_refresh()) return refresh_then_chunk(p, b, row, bursts, now);
  const uint64_t xfer = k.xfer_ps[bursts];
  const uint64_t data_end = data_start + xfer;
  if (hit) {
    ++rows.hits;
  } else {
    rows.conflicts += open;
    b.set_open_row(static_cast<int64_t>(row));
    b.ras_ready() = p.ras_ready() = act + k.t_ras;
    p.rrd_ready() = act + k.t_rrd;
    if (kGeneral && k.faw_binds) {
      p.faw_ready(p.faw_pos()) = act + k.t_faw;
      p.faw_pos() = (p.faw_pos() + 1) & 3;
    }
  }
  b.ready() = data_end - k.t_cl;  // a following hit's data can follow this one back to back
  p.bus_free() = data_end;
  p.busy_ps() += xfer;  // a channel's sum when stats() is read: one store here, not an index
  if (kGeneral && k.channel_windows) [[unlikely]]
    count_channel_window(*k.channel_windows, static_cast<uint32_t>(p.channel()), data_start, xfer);
  return data_end;
}

inline void HbmCore::count_window(uint64_t t, uint64_t bytes) {
  if (!timing_.channel_windows) return;  // record_activity() was not called
  const size_t window = static_cast<size_t>(t / HbmStats::kWindowPs);
  stats_.bytes_per_window.add(window, bytes);
}

// The mapping of piece() with every division a shift but the round's (pseudo_channel_of, locate).
template <HbmCore::Checks kChecks>
[[gnu::always_inline]] inline uint64_t HbmCore::book_pow2(const Timing& k, const Round& round, uint64_t a,
                                                          uint64_t bytes, uint64_t now, RowCounts& rows) {
  const uint64_t pc = pseudo_channel_in(k, round, a >> k.interleave_shift);
  const uint64_t row_index = (round.row_base | (a & k.interleave_mask)) >> k.page_shift;
  const uint64_t bursts = ((a & k.burst_mask) + bytes + k.burst_mask) >> k.burst_shift;
  return chunk<kChecks>(k, pc_lane(k, pc), bank_lane_pow2(k, pc, row_index & k.banks_mask),
                        row_index >> k.banks_shift, bursts, now, rows);
}

}  // namespace systolic
