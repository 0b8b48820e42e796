// The HBM/DDR timing core: preset bandwidths by hand, sustained bandwidth of sequential and
// scattered traffic, hand-worked latencies on a tiny part, refresh cost, address mapping,
// conservation of bytes, rejection of impossible configs, and the fast paths (shifts for
// power-of-two geometries, HbmCore::Stream) against a plain chunk-by-chunk reference.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "fixtures.hpp"
#include "models/hbm/dram_standard.hpp"
#include "models/hbm/hbm_core.hpp"

namespace test_hbm {

using namespace systolic;

namespace {

constexpr uint64_t kNs = 1000;  // ps per ns at the default 1000 MHz core clock

// Issues `count` requests of `bytes` at addresses from `address(i)`, keeping at most `window` in
// flight (request i issues when request i - window has completed); returns the achieved
// bandwidth as a fraction of the part's peak.
template <class Address>
double achieved_fraction(HbmCore& hbm, uint64_t count, uint64_t bytes, size_t window, Address address) {
  std::vector<uint64_t> ring(window, 0);
  uint64_t t = 0, end = 0;
  for (uint64_t i = 0; i < count; ++i) {
    t = std::max(t, ring[i % window]);
    const uint64_t done = hbm.access(address(i), bytes, false, t);
    ring[i % window] = done;
    end = std::max(end, done);
  }
  return static_cast<double>(count * bytes) / static_cast<double>(end) / hbm.peak_bytes_per_ps();
}

double sequential_fraction(const HbmConfig& c, uint64_t total = 256ull << 20) {
  HbmCore hbm(c);
  const uint64_t n = total / c.chunk_bytes;
  return achieved_fraction(hbm, n, c.chunk_bytes, 512, [&](uint64_t i) { return i * c.chunk_bytes; });
}

double scattered_fraction(const HbmConfig& c, uint64_t count = 200000) {
  HbmCore hbm(c);
  std::mt19937_64 rng(7);
  const uint64_t slots = c.capacity_bytes / 64;
  return achieved_fraction(hbm, count, 64, 512, [&](uint64_t) { return (rng() % slots) * 64; });
}


// The timing model of docs/memory.md written plainly, one chunk at a time, with / and %
// everywhere: what HbmCore computed before its fast paths, kept as the oracle they must match
// to the picosecond and to the byte.
class ReferenceHbm {
 public:
  explicit ReferenceHbm(const HbmConfig& c, double mhz = 1000.0) : c_(c), mhz_(mhz) {
    const uint64_t pcs = uint64_t{c.channels} * c.pseudo_channels;
    pcs_.assign(pcs, Pc{});
    for (auto& p : pcs_) p.next_refresh = ps(c.t_refi_ns);
    banks_.assign(pcs * c.banks, Bank{});
    stats.channel_busy_ps.assign(c.channels, 0);
  }

  uint64_t access(uint64_t addr, uint64_t bytes, bool write, uint64_t now) {
    if (bytes == 0) return now;
    ++stats.requests;
    (write ? stats.bytes_written : stats.bytes_read) += bytes;
    const uint64_t grain = std::min(c_.page_bytes, c_.interleave_bytes);
    const uint64_t pcs = pcs_.size();
    uint64_t done = now;
    for (uint64_t a = addr; a < addr + bytes;) {
      const uint64_t next = std::min({addr + bytes, (a / c_.chunk_bytes + 1) * c_.chunk_bytes,
                                      (a / grain + 1) * grain});
      const uint64_t unit = a / c_.interleave_bytes, round = unit / pcs;
      const uint64_t pc = (unit % pcs + ((round * 0x9E3779B97F4A7C15ull) >> 40) % pcs) % pcs;
      const uint64_t row_index = (round * c_.interleave_bytes + a % c_.interleave_bytes) / c_.page_bytes;
      const uint64_t burst = c_.burst_bytes();
      const uint64_t end = chunk(pc, row_index % c_.banks, row_index / c_.banks,
                                 (next - 1) / burst - a / burst + 1, now);
      const uint64_t w = end / HbmStats::kWindowPs;
      stats.bytes_per_window.add(w, next - a);
      ++stats.chunks;
      done = std::max(done, end);
      a = next;
    }
    stats.last_completion_ps = std::max(stats.last_completion_ps, done);
    return done;
  }

  HbmStats stats;

 private:
  struct Bank {
    int64_t row = -1;
    uint64_t ready = 0, ras = 0;
  };
  struct Pc {
    uint64_t bus = 0, next_refresh = 0, rrd = 0, faw[4] = {0, 0, 0, 0};
    int oldest = 0;
  };
  uint64_t ps(double ns) const { return static_cast<uint64_t>(std::llround(ns * mhz_)); }

  uint64_t chunk(uint64_t pc, uint64_t bank, uint64_t row, uint64_t bursts, uint64_t now) {
    Pc& p = pcs_[pc];
    Bank& b = banks_[pc * c_.banks + bank];
    const bool refreshing = c_.t_rfc_ns > 0;
    uint64_t act = 0, start = 0;
    for (;;) {
      const uint64_t cmd = std::max(now, b.ready);
      if (b.row == static_cast<int64_t>(row)) {
        start = std::max(p.bus, cmd + ps(c_.t_cl_ns));
      } else {
        act = b.row < 0 ? cmd : std::max(cmd, b.ras) + ps(c_.t_rp_ns);
        act = std::max({act, p.rrd, p.faw[p.oldest]});
        start = std::max(p.bus, act + ps(c_.t_rcd_ns) + ps(c_.t_cl_ns));
      }
      if (!refreshing || start < p.next_refresh) break;
      refresh(pc, now);
    }
    const double burst_ps = c_.burst_ns() * mhz_;
    const uint64_t xfer = static_cast<uint64_t>(std::ceil(static_cast<double>(bursts) * burst_ps - 1e-6));
    if (b.row == static_cast<int64_t>(row)) {
      ++stats.row_hits;
    } else {
      ++stats.row_misses;
      if (b.row >= 0) ++stats.row_conflicts;
      b.row = static_cast<int64_t>(row);
      b.ras = act + ps(c_.t_ras_ns);
      p.rrd = act + ps(c_.t_rrd_ns);
      p.faw[p.oldest] = act + ps(c_.t_faw_ns);
      p.oldest = (p.oldest + 1) % 4;
    }
    b.ready = start + xfer - ps(c_.t_cl_ns);
    p.bus = start + xfer;
    stats.channel_busy_ps[pc % c_.channels] += xfer;
    return start + xfer;
  }

  void refresh(uint64_t pc, uint64_t now) {
    Pc& p = pcs_[pc];
    const uint64_t refi = ps(c_.t_refi_ns);
    uint64_t due = p.next_refresh;
    if (now >= due + refi) {
      stats.refreshes += (now - due) / refi;
      due += (now - due) / refi * refi;
    }
    uint64_t start = std::max(due, p.bus);
    for (uint32_t i = 0; i < c_.banks; ++i) {
      const Bank& b = banks_[pc * c_.banks + i];
      if (b.row >= 0) start = std::max(start, b.ras);
    }
    const uint64_t end = start + ps(c_.t_rfc_ns);
    for (uint32_t i = 0; i < c_.banks; ++i) {
      Bank& b = banks_[pc * c_.banks + i];
      b.row = -1;
      b.ready = std::max(b.ready, end);
    }
    p.bus = std::max(p.bus, end);
    p.rrd = std::max(p.rrd, end);
    p.next_refresh = due + refi;
    ++stats.refreshes;
  }

  HbmConfig c_;
  double mhz_;
  std::vector<Pc> pcs_;
  std::vector<Bank> banks_;
};

// `windows`: whether `got` recorded its activity (HbmCore::record_activity) as `want` does.
void check_same(const HbmStats& got, const HbmStats& want, bool windows = true) {
  CHECK(got.bytes_read == want.bytes_read);
  CHECK(got.bytes_written == want.bytes_written);
  CHECK(got.requests == want.requests);
  CHECK(got.chunks == want.chunks);
  CHECK(got.row_hits == want.row_hits);
  CHECK(got.row_misses == want.row_misses);
  CHECK(got.row_conflicts == want.row_conflicts);
  CHECK(got.refreshes == want.refreshes);
  CHECK(got.last_completion_ps == want.last_completion_ps);
  CHECK(got.channel_busy_ps == want.channel_busy_ps);
  if (windows)
    CHECK(got.bytes_per_window == want.bytes_per_window);
  else
    CHECK(got.bytes_per_window.empty());
}

// Geometries for the fast paths and the general one: the presets (hbm2e has 96 pseudo-channels,
// not a power of two), tFAW binding (more than 4 tRRD), pages larger and smaller than the
// interleave, chunks smaller than a page, odd bank and channel counts, no refresh, slow clocks.
struct Geometry {
  HbmConfig config;
  double mhz;
};

std::vector<Geometry> geometries() {
  auto with = [](HbmConfig c, auto change) {
    change(c);
    return c;
  };
  return {
      {hbm2_tpu_v4i(), 1050.0},
      {hbm2e_tpu_v5p(), 940.0},
      {ddr3_tpu_v1(), 700.0},
      {with(testing::tiny_hbm(),  // tFAW binds: four ACTs 3 ns apart span 9 ns of its 20
            [](HbmConfig& c) {
              c.channels = c.pseudo_channels = 2;
              c.t_rrd_ns = 3, c.t_faw_ns = 20, c.t_refi_ns = 700, c.t_rfc_ns = 90;
            }),
       1000.0},
      {with(hbm2_tpu_v4i(),  // a page spans two interleave blocks; 12 banks
            [](HbmConfig& c) { c.page_bytes = 2048, c.chunk_bytes = 256, c.banks = 12; }),
       1000.0},
      {with(hbm2_tpu_v4i(),  // an interleave block spans two pages; no refresh
            [](HbmConfig& c) {
              c.page_bytes = 512, c.interleave_bytes = 2048, c.chunk_bytes = 4096, c.t_rfc_ns = 0;
            }),
       500.0},
      {with(hbm2_tpu_v4i(),  // 6 pseudo-channels, the rest powers of two; addresses past 2^32
            [](HbmConfig& c) { c.channels = 3, c.capacity_bytes = 48ull << 30; }),
       1000.0},
      {with(testing::tiny_hbm(),  // nothing a power of two but the burst; addresses past 2^32
            [](HbmConfig& c) {
              c.channels = 3, c.pseudo_channels = 2, c.banks = 6, c.capacity_bytes = 64ull << 30;
              c.interleave_bytes = 768, c.chunk_bytes = 384, c.t_refi_ns = 1900, c.t_rfc_ns = 160;
            }),
       1000.0},
  };
}

// A mix of traffic: sequential runs of requests of one size (aligned or not), scattered small
// requests, long accesses across many pieces; issue times mostly rising, with jumps (idle
// stretches with missed refreshes) and some going back (another engine booking behind).
class Traffic {
 public:
  Traffic(uint64_t capacity, uint64_t seed) : rng_(seed), capacity_(capacity) {}
  void next(uint64_t& addr, uint64_t& bytes, bool& write, uint64_t& at) {
    if (left_ == 0) {
      const uint64_t kind = rng_() % 4;
      left_ = kind == 0 ? 1 + rng_() % 3 : 1 + rng_() % 400;
      size_ = kind == 1 ? 1 + rng_() % 96 : kind == 2 ? 1 + rng_() % 70000 : uint64_t{32} << (rng_() % 7);
      at_ = rng_() % capacity_;
      if (rng_() % 2) at_ -= at_ % size_;
    }
    --left_;
    if (at_ + size_ > capacity_) at_ = rng_() % (capacity_ - size_);
    addr = at_;
    bytes = size_;
    at_ += size_;
    write = rng_() % 3 == 0;
    const uint64_t r = rng_() % 100;
    now_ += r < 2 ? 5000000 + rng_() % 20000000 : rng_() % 3000;
    at = r < 8 && now_ > 50000 ? now_ - rng_() % 50000 : now_;
  }

 private:
  std::mt19937_64 rng_;
  uint64_t capacity_, left_ = 0, size_ = 0, at_ = 0, now_ = 0;
};

bool pow2(uint64_t v) { return (v & (v - 1)) == 0; }

// The core and the reference side by side, fed the same traffic.
struct Twin {
  Twin(const Geometry& g, uint64_t seed, bool record = true)
      : hbm(g.config, g.mhz), ref(g.config, g.mhz), traffic(g.config.capacity_bytes, seed) {
    if (record) hbm.record_activity();  // bytes_per_window, compared with the reference's
  }
  void access() {  // the next request through both
    uint64_t addr, bytes, at;
    bool write;
    traffic.next(addr, bytes, write, at);
    if (hbm.access(addr, bytes, write, at) != ref.access(addr, bytes, write, at)) ++mismatches;
  }
  HbmCore hbm;
  ReferenceHbm ref;
  Traffic traffic;
  uint64_t mismatches = 0;
};

}  // namespace

TEST_CASE("every registered DRAM standard's peak bandwidth is its cited figure", "[memory][hbm][registry]") {
  const auto& standards = DramRegistry::instance().entries();
  REQUIRE(standards.size() >= 3);
  for (const auto& e : standards) {
    const DramStandard& d = *e.impl;
    INFO(e.name << ": " << d.config.peak_gb_per_second() << " GB/s vs " << d.cited_gb_per_s << " GB/s cited in "
                << d.source);
    CHECK(d.config.name == e.name);
    CHECK_FALSE(d.config.validate());
    CHECK_FALSE(d.source.empty());
    // Published figures are rounded (614, 2765, 34): the decomposition is within 0.5 % of them.
    CHECK(std::abs(d.config.peak_gb_per_second() - d.cited_gb_per_s) <= 0.005 * d.cited_gb_per_s);
    CHECK(hbm_preset(e.name)->peak_gb_per_second() == d.config.peak_gb_per_second());
  }
}

TEST_CASE("preset peak bandwidths match the reference chips", "[memory][hbm]") {
  // HBM2 (TPU v4i): 2 stacks x 8 channels x 2 pseudo-channels x 8 B x 2.4 GT/s = 614.4 GB/s.
  CHECK(hbm2_tpu_v4i().peak_gb_per_second() == Approx(2 * 8 * 2 * 8 * 2.4));
  CHECK(hbm2_tpu_v4i().peak_gb_per_second() == Approx(614.4));
  // HBM2e (v5p-like): 6 stacks x 8 x 2 x 8 B x 3.6 GT/s = 2764.8 GB/s (published: 2765).
  CHECK(hbm2e_tpu_v5p().peak_gb_per_second() == Approx(2764.8));
  // DDR3 (TPU v1): 2 channels x 8 B x 2.133 GT/s = 34.128 GB/s (published: 34).
  CHECK(ddr3_tpu_v1().peak_gb_per_second() == Approx(34.128));
  CHECK(hbm2_tpu_v4i().burst_bytes() == 32);
  CHECK(ddr3_tpu_v1().burst_bytes() == 64);
  REQUIRE(hbm_preset("tpu-v5p"));
  CHECK(hbm_preset("tpu-v5p")->channels == 48);
  CHECK_FALSE(hbm_preset("hbm9"));
}

TEST_CASE("a long sequential stream sustains 85-100 % of peak on every preset", "[memory][hbm]") {
  for (const auto& standard : DramRegistry::instance().entries()) {
    const HbmConfig& c = standard.impl->config;
    const double f = sequential_fraction(c);
    INFO(c.name << ": " << f * 100 << " % of peak");
    CHECK(f >= 0.85);
    CHECK(f <= 1.0);
  }
}

TEST_CASE("scattered 64 B accesses get measurably less than a sequential stream", "[memory][hbm]") {
  for (const auto& standard : DramRegistry::instance().entries()) {
    const HbmConfig& c = standard.impl->config;
    const double seq = sequential_fraction(c, 64ull << 20);
    const double scattered = scattered_fraction(c);
    INFO(c.name << ": sequential " << seq * 100 << " %, scattered " << scattered * 100 << " %");
    CHECK(scattered < 0.75 * seq);
    CHECK(scattered > 0.0);
  }
}

TEST_CASE("single-access latencies on a tiny part, worked by hand", "[memory][hbm]") {
  // Burst: 8 B x 4 beats = 32 B in 4 ns; a 64 B access moves 2 bursts = 8 ns.
  // Rows: address / 256 = row index; bank = index % 2, row = index / 2.
  HbmCore hbm(testing::tiny_hbm());
  CHECK(hbm.transfer_ps(64) == 8 * kNs);
  // Bank 0 closed: ACT at 0, data after tRCD + tCL = 17 ns, 8 ns on the bus.
  CHECK(hbm.access(0, 64, false, 0) == 25 * kNs);
  // Row 0 of bank 0 is open: a hit, data tCL after the column command.
  CHECK(hbm.access(64, 64, false, 100 * kNs) == (100 + 7 + 8) * kNs);
  // Address 512: bank 0, row 1: a conflict: PRE, tRP, ACT, tRCD, then tCL.
  CHECK(hbm.access(512, 64, false, 200 * kNs) == (200 + 12 + 10 + 7 + 8) * kNs);
  // Address 256: bank 1, closed: tRCD + tCL.
  CHECK(hbm.access(256, 64, true, 300 * kNs) == (300 + 10 + 7 + 8) * kNs);
  CHECK(hbm.stats().row_hits == 1);
  CHECK(hbm.stats().row_misses == 3);
  CHECK(hbm.stats().row_conflicts == 1);
  CHECK(hbm.stats().bytes_read == 192);
  CHECK(hbm.stats().bytes_written == 64);
}

TEST_CASE("tRAS holds a row open, and a second bank's activation hides behind a transfer", "[memory][hbm]") {
  {
    HbmCore hbm(testing::tiny_hbm());
    CHECK(hbm.access(0, 64, false, 0) == 25 * kNs);  // ACT at 0
    // Conflict issued at 1 ns: PRE waits for tRAS (20 ns), ACT at 32, data at 49, done at 57.
    CHECK(hbm.access(512, 64, false, 1 * kNs) == (20 + 12 + 10 + 7 + 8) * kNs);
  }
  {
    HbmCore hbm(testing::tiny_hbm());
    // A whole row (8 bursts, 32 ns) of bank 0: data 17..49.
    CHECK(hbm.access(0, 256, false, 0) == 49 * kNs);
    // Bank 1 activates at 0 as well; its data waits only for the bus: 49..81.
    CHECK(hbm.access(256, 256, false, 0) == 81 * kNs);
  }
}

TEST_CASE("a refresh blocks the pseudo-channel for tRFC and closes its rows", "[memory][hbm]") {
  HbmConfig c = testing::tiny_hbm();
  c.t_refi_ns = 1000;
  c.t_rfc_ns = 100;
  HbmCore hbm(c);
  CHECK(hbm.access(0, 64, false, 0) == 25 * kNs);
  // Due at 1000 ns: refresh 1000..1100, then row 0 is closed again: tRCD + tCL + 8.
  CHECK(hbm.access(64, 64, false, 1000 * kNs) == (1100 + 10 + 7 + 8) * kNs);
  CHECK(hbm.stats().refreshes == 1);
  CHECK(hbm.stats().row_hits == 0);
  // Long idle: the refreshes due at 2000..9000 happened while idle; at 9050 the one due at
  // 9000 is still running (until 9100).
  CHECK(hbm.access(64, 64, false, 9050 * kNs) == (9100 + 10 + 7 + 8) * kNs);
  CHECK(hbm.stats().refreshes == 9);
}

TEST_CASE("refresh costs about tRFC / tREFI of a sequential stream", "[memory][hbm]") {
  HbmConfig on = hbm2_tpu_v4i();
  HbmConfig off = on;
  off.t_rfc_ns = 0;
  const double with = sequential_fraction(on, 128ull << 20);
  const double without = sequential_fraction(off, 128ull << 20);
  const double loss = 1.0 - with / without;
  const double expected = on.t_rfc_ns / on.t_refi_ns;  // 350 / 3900 = 9.0 %
  INFO("without refresh " << without * 100 << " %, with " << with * 100 << " %, loss " << loss * 100
                          << " %");
  CHECK(without > 0.97);
  // Plus re-opening the rows after each refresh (tRCD + tCL per tREFI: ~0.7 %).
  CHECK(loss >= expected);
  CHECK(loss <= expected + 0.02);
}

TEST_CASE("addresses interleave over channels, pseudo-channels, banks, then rows", "[memory][hbm]") {
  HbmCore hbm(hbm2_tpu_v4i());  // 1 KiB blocks over 16 channels x 2 pseudo-channels
  auto at = [&](uint64_t a) { return hbm.locate(a); };
  CHECK(at(0).channel == 0);
  CHECK(at(1024).channel == 1);
  CHECK(at(1023).column == 1023);
  CHECK(at(15 * 1024).channel == 15);
  CHECK(at(16 * 1024).channel == 0);
  CHECK(at(16 * 1024).pseudo_channel == 1);
  // Later rounds of 32 blocks are rotations of the first: still one block per pseudo-channel.
  for (uint64_t round : {1, 2, 7, 1000}) {
    std::set<std::pair<uint32_t, uint32_t>> seen;
    for (uint64_t b = 0; b < 32; ++b) {
      const auto loc = at((round * 32 + b) * 1024);
      seen.insert({loc.channel, loc.pseudo_channel});
    }
    CHECK(seen.size() == 32);
  }
  // A column walk of a row-major matrix with 8 KiB rows lands on 4 pseudo-channels per round;
  // the rotation spreads it over all 32 within a few dozen rows.
  std::set<std::pair<uint32_t, uint32_t>> strided;
  for (uint64_t row = 0; row < 256; ++row) strided.insert({at(row * 8192).channel, at(row * 8192).pseudo_channel});
  CHECK(strided.size() == 32);
  CHECK(at(32 * 1024).bank == 1);
  CHECK(at(32 * 1024 * 16).bank == 0);
  CHECK(at(32 * 1024 * 16).row == 1);
}

TEST_CASE("HBM counts exactly the bytes asked for, in chunks of at most a page", "[memory][hbm]") {
  HbmCore hbm(hbm2_tpu_v4i());
  hbm.access(100, 1 << 20, false, 0);  // unaligned: 1025 chunks
  hbm.access(5, 3, true, 0);
  hbm.access(0, 0, true, 0);
  CHECK(hbm.stats().bytes_read == (1u << 20));
  CHECK(hbm.stats().bytes_written == 3);
  CHECK(hbm.stats().requests == 2);
  CHECK(hbm.stats().chunks == 1025 + 1);
  uint64_t busy = 0;
  for (uint64_t b : hbm.stats().channel_busy_ps) busy += b;
  // 1 MiB moves as whole 32 B bursts (+1 for the unaligned tail and +1 for the 3 B write),
  // 5/3 ns each (rounded up per chunk).
  CHECK(busy >= (32768 + 2) * 5000 / 3);
  CHECK(busy <= (32768 + 2) * 5000 / 3 + 1026);
  CHECK_THROWS_AS(hbm.access((8ull << 30) - 10, 64, false, 0), std::out_of_range);
}

TEST_CASE("HBM timing scales with the core clock", "[memory][hbm]") {
  // At 500 MHz one SystemC ns (a cycle) lasts 2 real ns, so 1 real ns = 500 SystemC ps.
  HbmCore hbm(testing::tiny_hbm(), 500.0);
  CHECK(hbm.access(0, 64, false, 0) == 25 * 500);
  CHECK(hbm.peak_bytes_per_ps() == Approx(8.0 / 500));
}

TEST_CASE("impossible memory configs are rejected with the key named", "[memory][hbm]") {
  auto field_of = [](HbmConfig c) { return c.validate() ? c.validate()->field : std::string("ok"); };
  HbmConfig c = hbm2_tpu_v4i();
  CHECK(field_of(c) == "ok");
  c.channels = 0;
  CHECK(field_of(c) == "channels");
  CHECK_THROWS_WITH(HbmCore(c), Catch::Contains("hbm.channels") && Catch::Contains(">= 1"));
  c = hbm2_tpu_v4i();
  c.pseudo_channels = 0;
  CHECK(field_of(c) == "pseudo_channels");
  c = hbm2_tpu_v4i();
  c.bus_bits = 12;  // not a whole number of bytes
  CHECK(field_of(c) == "bus_bits");
  c = hbm2_tpu_v4i();
  c.chunk_bytes = 48;  // bursts are 32 B
  CHECK(field_of(c) == "chunk_bytes");
  CHECK(c.validate()->message().find("multiple of the burst size (32 B") != std::string::npos);
  c = hbm2_tpu_v4i();
  c.page_bytes = 1000;
  CHECK(field_of(c) == "page_bytes");
  c = hbm2_tpu_v4i();
  c.interleave_bytes = 768;  // neither divides nor is a multiple of the 1 KiB page
  CHECK(field_of(c) == "interleave_bytes");
  c = hbm2_tpu_v4i();
  c.data_rate_gbps = 0;
  CHECK(field_of(c) == "data_rate_gbps");
  c = hbm2_tpu_v4i();
  c.t_rfc_ns = 4000;  // longer than the refresh interval
  CHECK(field_of(c) == "t_refi_ns");
  c = hbm2_tpu_v4i();
  c.t_cl_ns = -1;
  CHECK(field_of(c) == "t_cl_ns");
}

TEST_CASE("access() matches the chunk-by-chunk reference on random traffic in every geometry",
          "[memory][hbm]") {
  for (const Geometry& g : geometries()) {
    Twin twin(g, 11);
    for (int i = 0; i < 30000; ++i) twin.access();
    INFO(g.config.name << " at " << g.mhz << " MHz, " << g.config.banks << " banks");
    CHECK(twin.mismatches == 0);
    check_same(twin.hbm.stats(), twin.ref.stats);
    CHECK((twin.hbm.stats().refreshes > 0) == (g.config.t_rfc_ns > 0));
  }
}

TEST_CASE("a Stream books exactly as access() one by one and adds its counters when it ends",
          "[memory][hbm]") {
  for (const Geometry& g : geometries())
    for (const bool record : {true, false}) {
      const HbmConfig& c = g.config;
      Twin twin(g, 5, record);
      const uint64_t piece = twin.hbm.piece_bytes();
      INFO(c.name << ", pieces of " << piece << " B, " << (record ? "recording" : "not recording"));
      // Set exactly when every size of the geometry but the pseudo-channel count is a power of
      // two: the smallest of them (v5p's 96 pseudo-channels are divided once per round).
      const bool all_pow2 =
          pow2(c.chunk_bytes) && pow2(c.page_bytes) && pow2(c.interleave_bytes) && pow2(c.banks);
      CHECK(piece == (all_pow2 ? std::min({c.chunk_bytes, c.page_bytes, c.interleave_bytes}) : 0));
      uint64_t booked = 0, plain_streams = 0;
      // 700 requests through a Stream<kChecks>.
      auto stream_requests = [&](auto checks, bool write) {
        HbmCore::Stream<decltype(checks)::value> stream(twin.hbm, write);
        for (int i = 0; i < 700; ++i) {
          uint64_t addr, bytes, at;
          bool ignored;
          twin.traffic.next(addr, bytes, ignored, at);
          uint64_t got;
          if (piece != 0 && i % 2 == 0) {  // book(): non-empty, inside one piece and the capacity
            bytes = std::min(bytes, piece - addr % piece);
            got = stream.book(addr, bytes, at);
            ++booked;
          } else {  // access(): anything
            got = stream.access(addr, bytes, at);
          }
          if (got != twin.ref.access(addr, bytes, write, at)) ++twin.mismatches;
        }
      };
      using Checks = HbmCore::Checks;
      for (int round = 0; round < 40; ++round) {
        const bool write = round % 3 == 0;
        if (twin.hbm.plain() && round % 2 == 1) {  // without the tests a plain() HBM needs not
          stream_requests(std::integral_constant<Checks, Checks::plain>{}, write);
          ++plain_streams;
        } else {
          stream_requests(std::integral_constant<Checks, Checks::general>{}, write);
        }
        // Between streams the counters are whole again, and plain access() interleaves.
        check_same(twin.hbm.stats(), twin.ref.stats, record);
        twin.access();
      }
      CHECK(twin.mismatches == 0);
      CHECK((booked > 0) == (piece != 0));
      CHECK((plain_streams > 0) == twin.hbm.plain());
      check_same(twin.hbm.stats(), twin.ref.stats, record);
    }
}

TEST_CASE("a round's whole blocks booked together match the reference one by one, with and without AVX2",
          "[memory][hbm]") {
  uint64_t vector_geometries = 0;
  for (const Geometry& g : geometries())
    for (const bool vector : {true, false}) {
      Twin twin(g, 17, false);
      if (!twin.hbm.whole_blocks() || !twin.hbm.plain()) continue;
      twin.hbm.set_vector_booking(vector);
      vector_geometries += twin.hbm.vector_booking();
      const uint64_t block = g.config.interleave_bytes;
      const uint64_t pcs = g.config.pseudo_channel_count();
      INFO(g.config.name << ", " << pcs << " pseudo-channels, vector booking " << twin.hbm.vector_booking());
      std::mt19937_64 rng(3);
      uint64_t now = 0, blocks_booked = 0;
      for (int batch = 0; batch < 460; ++batch) {
        // The last 60 batches come after 2^63 ps, and the banks' and buses' times before it: from
        // 2^62 on, the vector booking hands a group to the scalar one (its lanes compare signed).
        if (batch == 400) now = (uint64_t{1} << 63) + 1000000;
        // A few rounds again and again, so that some rows are still open (hits), between other
        // traffic; now and then an idle stretch, so that refreshes fall due in a batch.
        const uint64_t round = rng() % 24, first = rng() % pcs;
        const uint64_t addr = (round * pcs + first) * block;
        const size_t count = 1 + rng() % (pcs - first);
        now += rng() % 16 == 0 ? 3000000 + rng() % 9000000 : rng() % 4000;
        std::vector<uint64_t> ready(count), done(count);
        for (uint64_t& t : ready) t = now + rng() % 3000;  // any order: the blocks are independent
        {
          HbmCore::Stream<HbmCore::Checks::plain> stream(twin.hbm, false);
          HbmCore::Stream<HbmCore::Checks::plain>::Blocks blocks =
              stream.blocks_at(stream.round_at(addr), addr);
          stream.book_blocks(blocks, block, ready.data(), done.data(), count);
          stream.booked(count, count * block);
        }
        for (size_t i = 0; i < count; ++i)
          if (done[i] != twin.ref.access(addr + i * block, block, false, ready[i])) ++twin.mismatches;
        blocks_booked += count;
        for (int i = 0; i < 3; ++i) twin.access();
      }
      CHECK(blocks_booked > 400 * pcs / 4);
      CHECK(twin.mismatches == 0);
      check_same(twin.hbm.stats(), twin.ref.stats, false);
      CHECK(twin.hbm.stats().refreshes > 0);
      CHECK(twin.hbm.stats().row_hits > 0);
    }
  if (vector_geometries == 0) WARN("this processor has no AVX2: only the scalar booking was checked");
}

TEST_CASE("plain(): tFAW does not bind and nothing is recorded", "[memory][hbm]") {
  HbmCore hbm2(hbm2_tpu_v4i());  // tFAW 16 ns = 4 tRRD: four ACTs tRRD apart already span it
  CHECK(hbm2.plain());
  hbm2.record_activity();
  CHECK_FALSE(hbm2.plain());
  CHECK(HbmCore(hbm2e_tpu_v5p()).plain());
  CHECK_FALSE(HbmCore(ddr3_tpu_v1()).plain());  // tFAW 25 ns > 4 x tRRD 5 ns
}

}  // namespace test_hbm
