// DMA: descriptors to contiguous runs (worked by hand), conservation of bytes between the
// descriptors and HBM, sustained bandwidth through the DMA, engines contending for HBM in
// SystemC (each simulation in a fresh simulation context), and the request loop's fast path
// against a one-request-at-a-time reference.
#include <catch2/catch.hpp>

#include <systemc>

#include <cstdlib>
#include <memory>
#include <random>
#include <stdexcept>
#include <variant>
#include <vector>

#include "driver.hpp"
#include "models/common/sim_context.hpp"
#include "models/dma/dma_core.hpp"
#include "models/dma/dma_engine.hpp"
#include "models/engine/semaphores.hpp"
#include "models/hbm/dram_standard.hpp"
#include "models/hbm/hbm_core.hpp"
#include "models/sram/scratchpad.hpp"

namespace test_dma {

using namespace systolic;

namespace {

struct RunResult {
  std::vector<uint64_t> end_ps;  // per engine: when its last descriptor completed
  std::vector<DmaStats> stats;
  std::vector<uint64_t> syncs;
  HbmStats hbm;
};

// Runs `work[e]` on engine e; all engines share one HBM and one scratchpad (id 0).
RunResult simulate_dma(const HbmConfig& hbm_config, const DmaConfig& dma,
                       const std::vector<std::vector<DmaDescriptor>>& work) {
  FreshContext context;
  HbmCore hbm(hbm_config);
  Scratchpad vmem({"vmem", 64ull << 20, 64, 8192, 4});
  SemaphoreBank semaphores(0);
  std::vector<std::unique_ptr<DmaEngine>> engines;
  std::vector<std::unique_ptr<testing::Driver<DmaDescriptor>>> drivers;
  for (size_t e = 0; e < work.size(); ++e) {
    engines.push_back(std::make_unique<DmaEngine>(("dma" + std::to_string(e)).c_str(), EngineId{},
                                                  std::vector<Instruction>{}, semaphores, hbm,
                                                  std::vector<Scratchpad*>{&vmem}, dma));
    DmaEngine& engine = *engines.back();
    drivers.push_back(std::make_unique<testing::Driver<DmaDescriptor>>(
        ("driver" + std::to_string(e)).c_str(), work[e], [&engine](const DmaDescriptor& d) {
          engine.transfer(d);
          return uint64_t{0};
        }));
  }
  sc_core::sc_start();
  RunResult r;
  for (size_t e = 0; e < work.size(); ++e) {
    r.end_ps.push_back(drivers[e]->done.empty() ? 0 : drivers[e]->done.back().value());
    r.stats.push_back(engines[e]->stats());
    r.syncs.push_back(engines[e]->syncs());
  }
  r.hbm = hbm.stats();
  return r;
}

// HBM [base, base + bytes) into the first MiB of scratchpad 0, rewritten over and over.
DmaDescriptor stream_to_sram(uint64_t base, uint64_t bytes) {
  DmaDescriptor d;
  const uint64_t row = 1 << 20;
  d.src = DmaEndpoint::hbm(base, {1, row, 0});
  d.dst = DmaEndpoint::sram(0, 0, {1, 0, 0});
  d.element_bytes = 1;
  d.shape = {row, bytes / row, 1};
  return d;
}

double fraction_of_peak(const HbmCore& hbm, uint64_t bytes, uint64_t ps) {
  return static_cast<double>(bytes) / static_cast<double>(ps) / hbm.peak_bytes_per_ps();
}


// DmaCore as it issued requests before its fast path, one at a time through HbmCore::access
// (itself pinned against a chunk-by-chunk reference in test_hbm.cpp): every run cut at
// request_bytes-aligned addresses, request i issued when request i - max_outstanding has
// completed, the two sides of HBM -> HBM alternating by bytes issued.
class ReferenceDma {
 public:
  ReferenceDma(HbmCore& hbm, std::vector<Scratchpad*> pads, const DmaConfig& c)
      : hbm_(hbm), pads_(std::move(pads)), window_(c.max_outstanding, 0),
        request_(c.request_bytes ? c.request_bytes : hbm.config().chunk_bytes) {}

  void start(const DmaDescriptor& d, uint64_t now) {
    auto pad = [&](const DmaEndpoint& e) { return e.is_hbm() ? nullptr : pads_[static_cast<size_t>(e.space)]; };
    src_ = pad(d.src);
    dst_ = pad(d.dst);
    std::vector<Request> sides[2];
    for (int side = 0; side < 2; ++side) {
      const DmaEndpoint& e = side == 0 ? d.src : d.dst;
      if (!e.is_hbm() && !(side == 0 && !d.dst.is_hbm())) continue;  // SRAM -> SRAM: the source
      for (const DmaRun& run : runs_of(d, e))
        for (uint64_t a = run.address; a < run.address + run.bytes;) {
          const uint64_t n = std::min(run.address + run.bytes, (a / request_ + 1) * request_) - a;
          sides[side].push_back({a, n, side == 1, e.is_hbm()});
          a += n;
        }
    }
    queue_.clear();
    uint64_t issued[2] = {0, 0};
    size_t next[2] = {0, 0};
    while (next[0] < sides[0].size() || next[1] < sides[1].size()) {
      const int side = next[0] == sides[0].size() ? 1 : next[1] == sides[1].size() ? 0 : issued[1] < issued[0];
      queue_.push_back(sides[side][next[side]++]);
      issued[side] += queue_.back().bytes;
    }
    head_ = 0;
    start_ = issue_ = completion_ = now;
    ++stats.descriptors;
    stats.bytes += d.total_bytes();
    counted_ = false;
  }

  uint64_t next_issue_ps() const { return std::max(issue_, window_[slot_]); }
  uint64_t completion_ps() const { return completion_; }

  bool issue_until(uint64_t horizon) {
    for (; head_ < queue_.size() && next_issue_ps() <= horizon; ++head_) {
      const Request& r = queue_[head_];
      const uint64_t t = next_issue_ps();
      uint64_t done;
      if (!r.hbm) {
        done = dst_->access(true, r.bytes, src_->access(false, r.bytes, t));
        stats.sram_bytes_read += r.bytes;
        stats.sram_bytes_written += r.bytes;
      } else if (!r.write) {
        done = hbm_.access(r.address, r.bytes, false, t);
        stats.hbm_bytes_read += r.bytes;
        if (dst_) {
          done = dst_->access(true, r.bytes, done);
          stats.sram_bytes_written += r.bytes;
        }
      } else {
        uint64_t ready = t;
        if (src_) {
          ready = src_->access(false, r.bytes, t);
          stats.sram_bytes_read += r.bytes;
        }
        done = hbm_.access(r.address, r.bytes, true, ready);
        stats.hbm_bytes_written += r.bytes;
      }
      issue_ = t;
      window_[slot_] = done;
      slot_ = (slot_ + 1) % window_.size();
      completion_ = std::max(completion_, done);
      ++stats.requests;
    }
    if (head_ == queue_.size() && !counted_) {
      stats.busy_ps += completion_ - start_;
      counted_ = true;
    }
    return head_ == queue_.size();
  }

  DmaStats stats;

 private:
  struct Request {
    uint64_t address, bytes;
    bool write, hbm;
  };
  HbmCore& hbm_;
  std::vector<Scratchpad*> pads_;
  std::vector<uint64_t> window_;
  uint64_t request_;
  size_t slot_ = 0, head_ = 0;
  std::vector<Request> queue_;
  Scratchpad* src_ = nullptr;
  Scratchpad* dst_ = nullptr;
  uint64_t start_ = 0, issue_ = 0, completion_ = 0;
  bool counted_ = true;
};

// Engines sharing one HBM and two scratchpads, stepped like DmaEngine::transfer: the engine
// that wakes first issues up to a quantum ahead, then sleeps until its next issue time (or
// takes its next descriptor once the last one has completed). Records every completion.
template <class Core>
struct Shared {
  Shared(const HbmConfig& hbm_config, double mhz, const DmaConfig& dma, size_t engines,
         uint32_t vmem_ports = 2)
      : hbm(hbm_config, mhz),
        vmem({"vmem", 1 << 22, 4, 512, vmem_ports}),
        weights({"weights", 1 << 22, 4, 1024, 3}) {
    for (size_t e = 0; e < engines; ++e)
      cores.push_back(std::make_unique<Core>(hbm, std::vector<Scratchpad*>{&vmem, &weights}, dma));
  }
  std::vector<uint64_t> run(const std::vector<std::vector<DmaDescriptor>>& work, uint64_t quantum) {
    std::vector<uint64_t> done, wake(work.size(), 0);
    std::vector<size_t> next(work.size(), 0);
    std::vector<bool> busy(work.size(), false);
    for (;;) {
      size_t e = work.size();
      for (size_t i = 0; i < work.size(); ++i)
        if ((busy[i] || next[i] < work[i].size()) && (e == work.size() || wake[i] < wake[e])) e = i;
      if (e == work.size()) return done;
      Core& core = *cores[e];
      if (!busy[e]) core.start(work[e][next[e]++], wake[e]);
      busy[e] = !core.issue_until(wake[e] + quantum);
      wake[e] = busy[e] ? core.next_issue_ps() : std::max(wake[e], core.completion_ps());
      if (!busy[e]) done.push_back(wake[e]);
    }
  }
  HbmCore hbm;
  Scratchpad vmem, weights;
  std::vector<std::unique_ptr<Core>> cores;
};

// A random descriptor between HBM (addresses below `span`) and the two scratchpads: dense,
// strided rows, element gathers; HBM -> SRAM, SRAM -> HBM, HBM -> HBM and SRAM -> SRAM.
DmaDescriptor random_descriptor(std::mt19937_64& rng, uint64_t span) {
  DmaDescriptor d;
  d.element_bytes = uint64_t{1} << (rng() % 4);
  const uint64_t shape = rng() % 4;
  d.shape = shape == 0   ? std::array<uint64_t, 3>{1 + rng() % 40000, 1, 1}
            : shape == 1 ? std::array<uint64_t, 3>{1 + rng() % 600, 1 + rng() % 24, 1 + rng() % 3}
            : shape == 2 ? std::array<uint64_t, 3>{1, 1 + rng() % 300, 1}
                         : std::array<uint64_t, 3>{1 + rng() % 70, 1 + rng() % 70, 1};
  const uint64_t s0 = rng() % 5 == 0 ? 2 + rng() % 3 : 1;
  const uint64_t s1 = d.shape[0] * s0 + (rng() % 2 ? 0 : rng() % 3000);
  const std::array<uint64_t, 3> strided = {s0, s1, s1 * d.shape[1] + rng() % 90};
  const std::array<uint64_t, 3> dense = {1, d.shape[0], d.shape[0] * d.shape[1]};
  auto hbm = [&](std::array<uint64_t, 3> stride) {
    DmaEndpoint e = DmaEndpoint::hbm(0, stride);
    e.base = rng() % (span - d.extent_bytes(e));
    return e;
  };
  auto sram = [&] {
    DmaEndpoint e = DmaEndpoint::sram(static_cast<int>(rng() % 2), 0, dense);
    e.base = rng() % ((1 << 22) - d.extent_bytes(e));
    return e;
  };
  switch (rng() % 6) {
    case 0: case 1: d.src = hbm(strided); d.dst = sram(); break;
    case 2: case 3: d.src = sram(); d.dst = hbm(strided); break;
    case 4: d.src = hbm(strided); d.dst = hbm(dense); break;
    default: d.src = sram(); d.dst = sram(); break;
  }
  return d;
}

}  // namespace

TEST_CASE("a 2-D strided descriptor becomes one run per row", "[memory][dma]") {
  // 3 rows of 4 bf16 out of a matrix whose rows are 16 elements (32 B) apart.
  DmaDescriptor d;
  d.src = DmaEndpoint::hbm(0x1000, {1, 16, 0});
  d.dst = DmaEndpoint::sram(0, 0, {1, 4, 0});  // dense
  d.element_bytes = 2;
  d.shape = {4, 3, 1};
  CHECK(d.total_bytes() == 24);
  CHECK(runs_of(d, d.src) == std::vector<DmaRun>{{0x1000, 8}, {0x1020, 8}, {0x1040, 8}});
  CHECK(runs_of(d, d.dst) == std::vector<DmaRun>{{0, 24}});  // dense side: one run
  CHECK(d.extent_bytes(d.src) == (3 + 2 * 16 + 1) * 2);
}

TEST_CASE("a 3-D strided descriptor merges what is contiguous", "[memory][dma]") {
  DmaDescriptor d;
  d.element_bytes = 2;
  d.shape = {3, 2, 2};
  // Rows of 3 elements, 8 apart; planes 32 apart: runs of 6 B at 0, 16, 64, 80 (+ base).
  d.src = DmaEndpoint::hbm(100, {1, 8, 32});
  CHECK(runs_of(d, d.src) == std::vector<DmaRun>{{100, 6}, {116, 6}, {164, 6}, {180, 6}});
  // Rows contiguous (stride 3 = d0) but planes 10 apart: runs of 6 elements (12 B).
  d.src = DmaEndpoint::hbm(0, {1, 3, 10});
  CHECK(runs_of(d, d.src) == std::vector<DmaRun>{{0, 12}, {20, 12}});
  // Innermost stride 4 (a transposing gather): every element is its own run.
  d.shape = {3, 2, 1};
  d.src = DmaEndpoint::hbm(0, {4, 1, 0});
  CHECK(runs_of(d, d.src) ==
        std::vector<DmaRun>{{0, 2}, {8, 2}, {16, 2}, {2, 2}, {10, 2}, {18, 2}});
  // Empty tensors have no runs.
  d.shape = {0, 5, 5};
  CHECK(runs_of(d, d.src).empty());
}

TEST_CASE("bytes counted at HBM equal the bytes the descriptors asked for", "[memory][dma]") {
  HbmCore hbm(hbm2_tpu_v4i());
  Scratchpad vmem({"vmem", 1 << 20, 8, 512, 2});
  Scratchpad acc({"accumulators", 1 << 20, 8, 512, 2});
  DmaCore dma(hbm, {&vmem, &acc}, DmaConfig{});
  uint64_t reads = 0, writes = 0;

  DmaDescriptor d2;  // 2-D: 3 rows of 1000 bf16 from a 4096-wide matrix
  d2.src = DmaEndpoint::hbm(12345, {1, 4096, 0});
  d2.dst = DmaEndpoint::sram(0, 0, {1, 1000, 0});
  d2.element_bytes = 2;
  d2.shape = {1000, 3, 1};
  dma.run(d2, 0);
  reads += d2.total_bytes();

  DmaDescriptor d3;  // 3-D write-back from the accumulators, strided on both sides
  d3.src = DmaEndpoint::sram(1, 64, {1, 40, 400});
  d3.dst = DmaEndpoint::hbm(1 << 20, {1, 512, 512 * 7});
  d3.element_bytes = 4;
  d3.shape = {33, 7, 5};
  dma.run(d3, 0);
  writes += d3.total_bytes();

  DmaDescriptor gather;  // element-wise transposing gather
  gather.src = DmaEndpoint::hbm(4 << 20, {300, 1, 0});
  gather.dst = DmaEndpoint::sram(0, 4096, {1, 17, 0});
  gather.element_bytes = 2;
  gather.shape = {17, 300, 1};
  dma.run(gather, 0);
  reads += gather.total_bytes();

  const auto copy = DmaDescriptor::linear(DmaEndpoint::hbm(8 << 20), DmaEndpoint::hbm(9 << 20), 5000);
  dma.run(copy, 0);  // HBM -> HBM: read and written once each
  reads += 5000;
  writes += 5000;

  const auto local = DmaDescriptor::linear(DmaEndpoint::sram(0, 0), DmaEndpoint::sram(1, 0), 3000);
  dma.run(local, 0);  // SRAM -> SRAM: no HBM traffic

  CHECK(hbm.stats().bytes_read == reads);
  CHECK(hbm.stats().bytes_written == writes);
  CHECK(dma.stats().hbm_bytes_read == reads);
  CHECK(dma.stats().hbm_bytes_written == writes);
  CHECK(dma.stats().bytes ==
        d2.total_bytes() + d3.total_bytes() + gather.total_bytes() + 5000 + 3000);
  CHECK(dma.stats().descriptors == 5);
  CHECK(vmem.bytes_written() == d2.total_bytes() + gather.total_bytes());
  CHECK(vmem.bytes_read() == 3000);
  CHECK(acc.bytes_read() == d3.total_bytes());
  CHECK(acc.bytes_written() == 3000);
  // The gather is 17 x 300 separate 2 B requests; d2 has 3 rows of 2000 B cut at 1 KiB lines.
  CHECK(dma.stats().requests > 17 * 300);
}

TEST_CASE("on an ideal HBM a descriptor takes no time and counts the bytes the modelled one does",
          "[memory][dma]") {
  struct Side {
    HbmCore hbm;
    Scratchpad vmem{{"vmem", 1 << 20, 8, 512, 2}};
    Scratchpad acc{{"accumulators", 1 << 20, 8, 512, 2}};
    DmaCore dma{hbm, {&vmem, &acc}, DmaConfig{}};
    explicit Side(HbmTiming t) : hbm(hbm2_tpu_v4i(), 1000.0, t) {}
  };
  Side real(HbmTiming::modelled), ideal(HbmTiming::ideal);
  DmaDescriptor strided;  // 3 rows of 1000 bf16 from a 4096-wide matrix
  strided.src = DmaEndpoint::hbm(12345, {1, 4096, 0});
  strided.dst = DmaEndpoint::sram(0, 0, {1, 1000, 0});
  strided.element_bytes = 2;
  strided.shape = {1000, 3, 1};
  const std::vector<DmaDescriptor> work = {
      strided,
      DmaDescriptor::linear(DmaEndpoint::sram(1, 0), DmaEndpoint::hbm(1 << 20), 7000),  // write-back
      DmaDescriptor::linear(DmaEndpoint::hbm(8 << 20), DmaEndpoint::hbm(9 << 20), 5000),
      DmaDescriptor::linear(DmaEndpoint::sram(0, 0), DmaEndpoint::sram(1, 0), 3000)};
  uint64_t t = 1000;
  for (const auto& d : work) {
    CHECK(ideal.dma.run(d, t) == t);  // completes when issued
    CHECK(real.dma.run(d, t) > t);
    t += 1000;
  }
  CHECK(ideal.hbm.stats().bytes_read == real.hbm.stats().bytes_read);
  CHECK(ideal.hbm.stats().bytes_written == real.hbm.stats().bytes_written);
  CHECK(ideal.hbm.stats().bytes_read == strided.total_bytes() + 5000);
  CHECK(ideal.hbm.stats().bytes_written == 7000 + 5000);
  CHECK(ideal.hbm.stats().chunks == 0);  // nothing timed
  for (auto f : {&DmaStats::bytes, &DmaStats::hbm_bytes_read, &DmaStats::hbm_bytes_written,
                 &DmaStats::sram_bytes_read, &DmaStats::sram_bytes_written, &DmaStats::descriptors})
    CHECK(ideal.dma.stats().*f == real.dma.stats().*f);
  CHECK(ideal.dma.stats().busy_ps == 0);
  CHECK(ideal.vmem.bytes_written() == real.vmem.bytes_written());
  CHECK(ideal.vmem.bytes_read() == real.vmem.bytes_read());
  CHECK(ideal.acc.bytes_read() == real.acc.bytes_read());
  CHECK(ideal.acc.bytes_written() == real.acc.bytes_written());
}

TEST_CASE("random descriptors conserve bytes", "[memory][dma]") {
  HbmCore hbm(hbm2_tpu_v4i());
  Scratchpad vmem({"vmem", 16 << 20, 8, 512, 2});
  DmaCore dma(hbm, {&vmem}, DmaConfig{});
  std::mt19937_64 rng(3);
  uint64_t asked = 0;
  uint64_t t = 0;
  for (int i = 0; i < 200; ++i) {
    DmaDescriptor d;
    d.element_bytes = 1u << (rng() % 3);
    d.shape = {1 + rng() % 64, 1 + rng() % 8, 1 + rng() % 4};
    const uint64_t s0 = 1 + rng() % 2;
    const uint64_t s1 = d.shape[0] * s0 + rng() % 50;
    const std::array<uint64_t, 3> hbm_stride = {s0, s1, s1 * d.shape[1] + rng() % 70};
    const std::array<uint64_t, 3> dense = {1, d.shape[0], d.shape[0] * d.shape[1]};
    const bool read = rng() % 2;
    const auto h = DmaEndpoint::hbm(rng() % (1 << 30), hbm_stride);
    const auto s = DmaEndpoint::sram(0, rng() % (1 << 20), dense);
    d.src = read ? h : s;
    d.dst = read ? s : h;
    t = dma.run(d, t);
    asked += d.total_bytes();
  }
  CHECK(hbm.stats().bytes_read + hbm.stats().bytes_written == asked);
  CHECK(vmem.bytes_read() + vmem.bytes_written() == asked);
}

TEST_CASE("a long sequential DMA sustains 85-100 % of peak on every preset", "[memory][dma]") {
  for (const auto& standard : DramRegistry::instance().entries()) {
    const HbmConfig& c = standard.impl->config;
    HbmCore hbm(c);
    Scratchpad vmem({"vmem", 1 << 20, 64, 8192, 4});
    DmaCore dma(hbm, {&vmem}, DmaConfig{});
    const uint64_t bytes = 256ull << 20;
    const uint64_t done = dma.run(stream_to_sram(0, bytes), 0);
    const double f = fraction_of_peak(hbm, bytes, done);
    INFO(c.name << ": " << f * 100 << " % of " << c.peak_gb_per_second() << " GB/s");
    CHECK(f >= 0.85);
    CHECK(f <= 1.0);
    CHECK(hbm.stats().bytes_read == bytes);
    CHECK(vmem.bytes_written() == bytes);
  }
}

TEST_CASE("a scattered 64 B gather through the DMA gets measurably less", "[memory][dma]") {
  const HbmConfig c = hbm2_tpu_v4i();
  HbmCore seq_hbm(c), gather_hbm(c);
  Scratchpad vmem1({"vmem", 1 << 20, 64, 8192, 4}), vmem2({"vmem", 1 << 20, 64, 8192, 4});
  DmaCore seq(seq_hbm, {&vmem1}, DmaConfig{});
  DmaCore gather(gather_hbm, {&vmem2}, DmaConfig{});
  const uint64_t bytes = 4 << 20;  // the gather spans 65536 x 33 KiB = 2.2 GB of HBM
  const double f_seq = fraction_of_peak(seq_hbm, bytes, seq.run(stream_to_sram(0, bytes), 0));
  // 64 B rows, 33 KiB + 64 B apart: each lands on another pseudo-channel and bank and needs
  // its own activation.
  DmaDescriptor d;
  d.element_bytes = 64;
  d.shape = {1, bytes / 64, 1};
  d.src = DmaEndpoint::hbm(0, {1, (33 * 1024 + 64) / 64, 0});
  d.dst = DmaEndpoint::sram(0, 0, {1, 0, 0});
  const double f_gather = fraction_of_peak(gather_hbm, bytes, gather.run(d, 0));
  INFO("sequential " << f_seq * 100 << " %, gather " << f_gather * 100 << " %");
  CHECK(f_gather < 0.8 * f_seq);
  CHECK(gather_hbm.stats().row_misses == bytes / 64);
}

TEST_CASE("descriptors that leave their memory are rejected", "[memory][dma]") {
  HbmCore hbm(hbm2_tpu_v4i());
  Scratchpad vmem({"vmem", 4096, 4, 512, 2});
  DmaCore dma(hbm, {&vmem}, DmaConfig{});
  auto too_long = DmaDescriptor::linear(DmaEndpoint::hbm(0), DmaEndpoint::sram(0, 1024), 4096);
  CHECK_THROWS_WITH(dma.run(too_long, 0), Catch::Contains("past the end of vmem"));
  REQUIRE(dma.check(too_long));
  CHECK(*dma.check(too_long) ==
        "dma descriptor: destination [1024, 5120) is past the end of vmem (4096 B (4 KiB))");
  CHECK_FALSE(dma.check(DmaDescriptor::linear(DmaEndpoint::hbm(0), DmaEndpoint::sram(0, 0), 4096)));
  auto unknown = DmaDescriptor::linear(DmaEndpoint::hbm(0), DmaEndpoint::sram(3, 0), 64);
  CHECK_THROWS_WITH(dma.run(unknown, 0), Catch::Contains("scratchpad 3"));
  auto past_hbm = DmaDescriptor::linear(DmaEndpoint::hbm(8ull << 30), DmaEndpoint::sram(0, 0), 64);
  CHECK_THROWS_WITH(dma.run(past_hbm, 0), Catch::Contains("HBM capacity"));
  DmaConfig bad;
  bad.max_outstanding = 0;
  CHECK_THROWS_WITH(DmaCore(hbm, {}, bad), Catch::Contains("dma.max_outstanding"));
  bad = DmaConfig{};
  bad.request_bytes = 100;
  CHECK_THROWS_WITH(DmaCore(hbm, {}, bad), Catch::Contains("dma.request_bytes"));
}

TEST_CASE("one DMA engine in SystemC streams at the rate of the core alone", "[memory][dma]") {
  const uint64_t bytes = 32 << 20;
  const RunResult r = simulate_dma(hbm2_tpu_v4i(), DmaConfig{}, {{stream_to_sram(0, bytes)}});
  HbmCore ref_hbm(hbm2_tpu_v4i());
  Scratchpad vmem({"vmem", 64ull << 20, 64, 8192, 4});
  DmaCore ref(ref_hbm, {&vmem}, DmaConfig{});
  const uint64_t alone = ref.run(stream_to_sram(0, bytes), 0);
  // Yielding every quantum does not change one engine's timing.
  CHECK(r.end_ps[0] == alone);
  CHECK(r.hbm.bytes_read == bytes);
  CHECK(r.stats[0].bytes == bytes);
  // 32 MiB at ~560 GB/s is ~60 us: about one yield per 1000-cycle quantum.
  CHECK(r.syncs[0] > alone / 1000 / 1000 / 2);
  CHECK(r.syncs[0] < alone / 1000 / 1000 * 2);
}

TEST_CASE("two DMA engines share the HBM: twice the bytes take twice as long", "[memory][dma]") {
  const uint64_t bytes = 32 << 20;
  const HbmConfig c = hbm2_tpu_v4i();
  const RunResult one = simulate_dma(c, DmaConfig{}, {{stream_to_sram(0, bytes)}});
  const RunResult two = simulate_dma(
      c, DmaConfig{}, {{stream_to_sram(0, bytes)}, {stream_to_sram(1ull << 30, bytes)}});
  const RunResult one_double = simulate_dma(c, DmaConfig{}, {{stream_to_sram(0, 2 * bytes)}});
  const double t1 = static_cast<double>(one.end_ps[0]);
  const double t2 = static_cast<double>(std::max(two.end_ps[0], two.end_ps[1]));
  INFO("one engine " << t1 / 1e6 << " us, two engines " << two.end_ps[0] / 1e6 << " / "
                     << two.end_ps[1] / 1e6 << " us");
  CHECK(t2 / t1 == Approx(2.0).epsilon(0.05));
  CHECK(t2 == Approx(static_cast<double>(one_double.end_ps[0])).epsilon(0.03));
  // Fair share: both finish close together.
  CHECK(static_cast<double>(std::min(two.end_ps[0], two.end_ps[1])) / t2 > 0.9);
  CHECK(two.hbm.bytes_read == 2 * bytes);
  CHECK(two.stats[0].hbm_bytes_read == bytes);
  CHECK(two.stats[1].hbm_bytes_read == bytes);
}

TEST_CASE("the quantum trades yields for ordering error, not for bandwidth", "[memory][dma]") {
  const uint64_t bytes = 8 << 20;
  const HbmConfig c = hbm2_tpu_v4i();
  const std::vector<std::vector<DmaDescriptor>> work = {{stream_to_sram(0, bytes)},
                                                       {stream_to_sram(1ull << 30, bytes)}};
  DmaConfig fine, coarse;
  fine.quantum_cycles = 100;
  coarse.quantum_cycles = 10000;
  const RunResult a = simulate_dma(c, fine, work);
  const RunResult b = simulate_dma(c, coarse, work);
  const double ta = static_cast<double>(std::max(a.end_ps[0], a.end_ps[1]));
  const double tb = static_cast<double>(std::max(b.end_ps[0], b.end_ps[1]));
  INFO("Q = 100 cycles: " << ta / 1e6 << " us, " << a.syncs[0] << " yields; Q = 10000: " << tb / 1e6
                          << " us, " << b.syncs[0] << " yields");
  CHECK(ta == Approx(tb).epsilon(0.03));
  CHECK(a.syncs[0] > 10 * b.syncs[0]);
}

TEST_CASE("engines sharing HBM issue exactly the requests of a one-at-a-time reference",
          "[memory][dma]") {
  struct Case {
    HbmConfig hbm;
    double mhz;
    uint64_t request_bytes;
    uint32_t max_outstanding;
    uint64_t quantum_ps;
    size_t engines;
    uint32_t vmem_ports = 2;  // weights has 3: DmaCore books 1 or 2 ports in a local, more in place
  };
  HbmConfig odd = hbm2_tpu_v4i();  // pieces that are not a power of two: no Stream::book
  odd.banks = 12;
  HbmConfig small_pieces = hbm2_tpu_v4i();
  small_pieces.chunk_bytes = 256;
  const std::vector<Case> cases = {
      {hbm2_tpu_v4i(), 1050.0, 0, 512, 1000000, 4},    // the presets' defaults
      {hbm2_tpu_v4i(), 1000.0, 64, 16, 37000, 3},      // small requests, a short quantum
      {hbm2_tpu_v4i(), 1000.0, 0, 128, 500000, 2, 1},  // a one-port vmem
      {hbm2_tpu_v4i(), 1000.0, 4096, 3, 250000, 2},    // requests of several pieces
      {small_pieces, 1000.0, 96, 1, 1000000, 2},       // requests not a power of two, one in flight
      {hbm2e_tpu_v5p(), 940.0, 0, 64, 100000000, 2},   // 96 pseudo-channels, a long quantum
      {ddr3_tpu_v1(), 700.0, 0, 512, 1000000, 3},     {odd, 1000.0, 512, 512, 1000000, 2},
  };
  std::mt19937_64 rng(29);
  for (const Case& c : cases) {
    DmaConfig dma;
    dma.request_bytes = c.request_bytes;
    dma.max_outstanding = c.max_outstanding;
    std::vector<std::vector<DmaDescriptor>> work(c.engines);
    for (auto& queue : work)
      for (int i = 0; i < 25; ++i) queue.push_back(random_descriptor(rng, 1ull << 30));
    // Whole blocks booked four at a time with AVX2 (where the processor has it) and one by one.
    for (const bool vector : {true, false}) {
      Shared<DmaCore> fast(c.hbm, c.mhz, dma, c.engines, c.vmem_ports);
      fast.hbm.set_vector_booking(vector);
      Shared<ReferenceDma> ref(c.hbm, c.mhz, dma, c.engines, c.vmem_ports);
      INFO(c.hbm.name << ", " << c.request_bytes << " B requests, " << c.max_outstanding << " in flight, "
                      << c.engines << " engines, " << c.vmem_ports << "-port vmem, vector booking "
                      << fast.hbm.vector_booking());
      CHECK(fast.run(work, c.quantum_ps) == ref.run(work, c.quantum_ps));
      for (size_t e = 0; e < c.engines; ++e) CHECK(fast.cores[e]->stats() == ref.cores[e]->stats);
      CHECK(fast.hbm.stats() == ref.hbm.stats());
      for (auto [a, b] : {std::pair{&fast.vmem, &ref.vmem}, std::pair{&fast.weights, &ref.weights}}) {
        CHECK(a->bytes_read() == b->bytes_read());
        CHECK(a->bytes_written() == b->bytes_written());
        CHECK(a->port_busy_ps() == b->port_busy_ps());
      }
    }
  }
}

}  // namespace test_dma
