#pragma once
// Off-chip DRAM (HBM or DDR) as the timing core sees it: geometry, bus, timing, and how the
// address space is cut into chunks. A plain struct; validate() names the first impossible
// field, and the preset factories reproduce the reference chips' published bandwidths.
// Field names are the suffixes of the proposed config keys ("channels" -> `hbm.channels`).
// docs/memory.md describes the timing model these parameters drive.
#include <cstdint>
#include <optional>
#include <string>

#include "models/common/config_issue.hpp"

namespace systolic {

struct HbmConfig {
  std::string name = "custom";
  // Geometry. `channels` counts every channel of every stack (2 stacks x 8 = 16).
  uint32_t channels = 16;
  uint32_t pseudo_channels = 2;  // per channel; each has its own data bus and banks
  uint32_t banks = 16;           // per pseudo-channel (all bank groups together)
  uint64_t page_bytes = 1024;    // row-buffer size of one bank
  uint64_t capacity_bytes = 8ull << 30;  // addresses must stay below this

  // Data bus of one pseudo-channel; peak = channels * pseudo_channels * bus_bits / 8 * rate.
  uint32_t bus_bits = 64;
  double data_rate_gbps = 2.4;  // per pin (data rate, i.e. transfers per ns)
  uint32_t burst_length = 4;    // beats per burst; burst = bus_bits / 8 * burst_length bytes,
                                // tBURST = burst_length / data_rate_gbps ns

  // Timing, ns of real time. tRFC = 0 disables refresh.
  double t_rcd_ns = 14.0;   // ACT -> column command
  double t_rp_ns = 14.0;    // PRE -> ACT
  double t_cl_ns = 14.0;    // column command -> first data (reads and writes alike)
  double t_ras_ns = 28.0;   // ACT -> PRE of the same bank (tRC = tRAS + tRP)
  double t_rrd_ns = 4.0;    // ACT -> ACT, different banks of one pseudo-channel
  double t_faw_ns = 16.0;   // at most four ACTs per pseudo-channel in any tFAW window
  double t_refi_ns = 3900.0;  // all-bank refresh interval
  double t_rfc_ns = 350.0;    // pseudo-channel blocked per refresh

  // Mapping: consecutive `interleave_bytes` blocks rotate over every (channel, pseudo-channel);
  // within a pseudo-channel, consecutive pages rotate over its banks, then rows.
  uint64_t interleave_bytes = 1024;
  // The largest piece timed as one unit (a page by default): O(1) work per chunk, none per burst.
  uint64_t chunk_bytes = 1024;

  uint64_t burst_bytes() const { return uint64_t{bus_bits} / 8 * burst_length; }
  double burst_ns() const { return burst_length / data_rate_gbps; }
  uint64_t pseudo_channel_count() const { return uint64_t{channels} * pseudo_channels; }
  double peak_bytes_per_second() const {
    return static_cast<double>(pseudo_channel_count()) * (bus_bits / 8.0) * data_rate_gbps * 1e9;
  }
  double peak_gb_per_second() const { return peak_bytes_per_second() / 1e9; }

  // The first impossible value, or nothing: zero channels, a bus that is not whole bytes, a
  // chunk, page or interleave that is not whole bursts, tRFC >= tREFI, ...
  std::optional<ConfigIssue> validate() const;
};

// Presets, one file each in models/hbm/standards/ (sources and arithmetic there and in
// docs/memory.md); every one is registered as a DramStandard (models/hbm/dram_standard.hpp).
HbmConfig hbm2_tpu_v4i();   // 2 stacks x 8 ch x 128 bit @ 2.4 Gb/s = 614.4 GB/s, 8 GiB
HbmConfig hbm2e_tpu_v5p();  // 6 stacks x 8 ch x 128 bit @ 3.6 Gb/s = 2764.8 GB/s, 96 GiB
HbmConfig ddr3_tpu_v1();    // 2 ch x 64 bit DDR3-2133 = 34.1 GB/s, 8 GiB
// A registered standard by name or alias ("hbm2", "tpu-v4i", ...); nullopt when unknown.
std::optional<HbmConfig> hbm_preset(const std::string& name);

}  // namespace systolic
