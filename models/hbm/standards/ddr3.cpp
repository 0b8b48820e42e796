// DDR3 as in TPU v1 (config `hbm.preset: ddr3`, also `tpu-v1`).
#include "models/hbm/dram_standard.hpp"

namespace systolic {

// TPU v1: 8 GiB DDR3 at 34 GB/s (Jouppi et al., "In-Datacenter Performance Analysis of a
// Tensor Processing Unit", ISCA 2017, Table 2). Decomposition (assumed): two 64-bit DDR3-2133
// channels: 2 x 8 B x 2.133 GT/s = 34.1 GB/s. A rank of eight x8 devices: 8 banks, 8 KiB page,
// BL8 -> 64 B bursts. Timing of DDR3-2133N (JESD79-3F speed bin 14-14-14, tCK 0.9375 ns):
// tRCD = tRP = tCL = 13.125 ns, tRAS 33 ns, tRRD 5 ns, tFAW 25 ns (1 KiB device page),
// tREFI 7.8 us, tRFC 260 ns (4 Gb device).
HbmConfig ddr3_tpu_v1() {
  HbmConfig c;
  c.name = "ddr3";
  c.channels = 2, c.pseudo_channels = 1, c.banks = 8, c.page_bytes = 8192, c.capacity_bytes = 8ull << 30;  // a rank
  c.bus_bits = 64, c.data_rate_gbps = 2.133, c.burst_length = 8;  // bus
  c.t_rcd_ns = c.t_rp_ns = c.t_cl_ns = 13.125, c.t_ras_ns = 33;  // row cycle
  c.t_rrd_ns = 5, c.t_faw_ns = 25, c.t_refi_ns = 7800, c.t_rfc_ns = 260;  // activates, refresh
  c.interleave_bytes = c.chunk_bytes = c.page_bytes;
  return c;
}

const Registration<DramStandard> registration{
    "ddr3", 30, "34 GB/s, TPU v1", DramStandard{ddr3_tpu_v1(), 34, "Jouppi et al., ISCA 2017, Table 2"}, {"tpu-v1"}};

}  // namespace systolic
