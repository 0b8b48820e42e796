#include "models/hbm/hbm_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace systolic {
namespace {

std::optional<HbmConfigIssue> issue(std::string field, std::string expected, std::string got) {
  return HbmConfigIssue{std::move(field), std::move(expected), std::move(got)};
}

std::string num(double v) { return fmt::format("{}", v); }

}  // namespace

std::optional<HbmConfigIssue> HbmConfig::validate() const {
  if (channels < 1) return issue("channels", "an integer >= 1", num(channels));
  if (pseudo_channels < 1) return issue("pseudo_channels", "an integer >= 1", num(pseudo_channels));
  if (banks < 1) return issue("banks", "an integer >= 1", num(banks));
  if (bus_bits < 8 || bus_bits % 8 != 0)
    return issue("bus_bits", "a whole number of bytes (a multiple of 8, >= 8)", num(bus_bits));
  if (!(data_rate_gbps > 0) || !std::isfinite(data_rate_gbps))
    return issue("data_rate_gbps", "a number > 0", num(data_rate_gbps));
  if (burst_length < 1) return issue("burst_length", "an integer >= 1", num(burst_length));
  const uint64_t burst = burst_bytes();
  const std::string whole_bursts = fmt::format("a positive multiple of the burst size ({} B = {} "
                                               "bit / 8 x burst length {})",
                                               burst, bus_bits, burst_length);
  if (page_bytes == 0 || page_bytes % burst != 0) return issue("page_bytes", whole_bursts, num(page_bytes));
  if (interleave_bytes == 0 || interleave_bytes % burst != 0)
    return issue("interleave_bytes", whole_bursts, num(interleave_bytes));
  const uint64_t big = std::max(page_bytes, interleave_bytes);
  const uint64_t small = std::min(page_bytes, interleave_bytes);
  if (big % small != 0)
    return issue("interleave_bytes",
                 fmt::format("a divisor or a multiple of page_bytes ({} B)", page_bytes),
                 num(interleave_bytes));
  if (chunk_bytes == 0 || chunk_bytes % burst != 0) return issue("chunk_bytes", whole_bursts, num(chunk_bytes));
  if (capacity_bytes == 0) return issue("capacity_bytes", "an integer >= 1", num(capacity_bytes));
  const std::pair<const char*, double> timings[] = {
      {"t_rcd_ns", t_rcd_ns}, {"t_rp_ns", t_rp_ns},   {"t_cl_ns", t_cl_ns},
      {"t_ras_ns", t_ras_ns}, {"t_rrd_ns", t_rrd_ns}, {"t_faw_ns", t_faw_ns},
      {"t_refi_ns", t_refi_ns}, {"t_rfc_ns", t_rfc_ns}};
  for (const auto& [field, v] : timings)
    if (!(v >= 0) || !std::isfinite(v) || v > 1e9) return issue(field, "a number of ns in [0, 1e9]", num(v));
  if (t_rfc_ns > 0 && !(t_refi_ns > t_rfc_ns))
    return issue("t_refi_ns",
                 fmt::format("more than t_rfc_ns ({} ns), or t_rfc_ns = 0 to disable refresh", t_rfc_ns),
                 num(t_refi_ns));
  return std::nullopt;
}

// TPU v4i: 614 GB/s of HBM2, 8 GiB (Jouppi et al., "Ten Lessons From Three Generations Shaped
// Google's TPUv4i", ISCA 2021, Table 1). Decomposition (assumed, standard HBM2 JESD235A
// organisation): 2 stacks x 8 channels x 128 bit in pseudo-channel mode (2 x 64 bit) at
// 2.4 Gb/s per pin: 32 pseudo-channels x 8 B x 2.4 GT/s = 614.4 GB/s. BL4 -> 32 B bursts,
// 1 KiB page per pseudo-channel, 16 banks (4 bank groups x 4). Timing: the HBM2 class values of
// DRAMSys' HBM2 memspec (tRCD/tRP ~14 ns, tRAS 28 ns, tRRDS 4 ns, tFAW 16 ns, tREFI 3.9 us);
// tRFC 350 ns is the JEDEC value of an 8 Gb die (refresh costs ~9 % of the bus).
HbmConfig hbm2_tpu_v4i() {
  HbmConfig c;
  c.name = "hbm2";
  c.channels = 16;
  c.pseudo_channels = 2;
  c.banks = 16;
  c.page_bytes = 1024;
  c.capacity_bytes = 8ull << 30;
  c.bus_bits = 64;
  c.data_rate_gbps = 2.4;
  c.burst_length = 4;
  c.t_rcd_ns = 14;
  c.t_rp_ns = 14;
  c.t_cl_ns = 14;
  c.t_ras_ns = 28;
  c.t_rrd_ns = 4;
  c.t_faw_ns = 16;
  c.t_refi_ns = 3900;
  c.t_rfc_ns = 350;
  c.interleave_bytes = 1024;
  c.chunk_bytes = 1024;
  return c;
}

// TPU v5p: 2765 GB/s of HBM2e, 95 GB (Google Cloud TPU documentation, "TPU v5p"). Decomposition
// (assumed): 6 HBM2e stacks x 1024 bit at 3.6 Gb/s per pin (the top HBM2e speed grade, e.g.
// SK hynix HBM2E 3.6 Gbps): 96 pseudo-channels x 8 B x 3.6 GT/s = 2764.8 GB/s; 6 x 16 GiB.
// Core timing as HBM2 (the array timings in ns barely changed between the generations).
HbmConfig hbm2e_tpu_v5p() {
  HbmConfig c = hbm2_tpu_v4i();
  c.name = "hbm2e";
  c.channels = 48;
  c.data_rate_gbps = 3.6;
  c.capacity_bytes = 96ull << 30;
  return c;
}

// TPU v1: 8 GiB DDR3 at 34 GB/s (Jouppi et al., "In-Datacenter Performance Analysis of a
// Tensor Processing Unit", ISCA 2017, Table 2). Decomposition (assumed): two 64-bit DDR3-2133
// channels: 2 x 8 B x 2.133 GT/s = 34.1 GB/s. A rank of eight x8 devices: 8 banks, 8 KiB page,
// BL8 -> 64 B bursts. Timing of DDR3-2133N (JESD79-3F speed bin 14-14-14, tCK 0.9375 ns):
// tRCD = tRP = tCL = 13.125 ns, tRAS 33 ns, tRRD 5 ns, tFAW 25 ns (1 KiB device page),
// tREFI 7.8 us, tRFC 260 ns (4 Gb device).
HbmConfig ddr3_tpu_v1() {
  HbmConfig c;
  c.name = "ddr3";
  c.channels = 2;
  c.pseudo_channels = 1;
  c.banks = 8;
  c.page_bytes = 8192;
  c.capacity_bytes = 8ull << 30;
  c.bus_bits = 64;
  c.data_rate_gbps = 2.133;
  c.burst_length = 8;
  c.t_rcd_ns = 13.125;
  c.t_rp_ns = 13.125;
  c.t_cl_ns = 13.125;
  c.t_ras_ns = 33;
  c.t_rrd_ns = 5;
  c.t_faw_ns = 25;
  c.t_refi_ns = 7800;
  c.t_rfc_ns = 260;
  c.interleave_bytes = 8192;
  c.chunk_bytes = 8192;
  return c;
}

std::optional<HbmConfig> hbm_preset(const std::string& name) {
  if (name == "hbm2" || name == "tpu-v4i") return hbm2_tpu_v4i();
  if (name == "hbm2e" || name == "tpu-v5p") return hbm2e_tpu_v5p();
  if (name == "ddr3" || name == "tpu-v1") return ddr3_tpu_v1();
  return std::nullopt;
}

}  // namespace systolic
