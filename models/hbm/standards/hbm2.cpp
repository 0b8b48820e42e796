// HBM2 as in TPU v4i (config `hbm.preset: hbm2`, also `tpu-v4i`).
#include "models/hbm/dram_standard.hpp"

namespace systolic {

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
  c.channels = 16, c.pseudo_channels = 2, c.banks = 16, c.page_bytes = 1024;  // geometry
  c.capacity_bytes = 8ull << 30;
  c.bus_bits = 64, c.data_rate_gbps = 2.4, c.burst_length = 4;  // bus
  c.t_rcd_ns = 14, c.t_rp_ns = 14, c.t_cl_ns = 14, c.t_ras_ns = 28;  // row cycle
  c.t_rrd_ns = 4, c.t_faw_ns = 16, c.t_refi_ns = 3900, c.t_rfc_ns = 350;  // activates, refresh
  c.interleave_bytes = c.chunk_bytes = 1024;  // a page
  return c;
}

const Registration<DramStandard> registration{
    "hbm2", 10, "614 GB/s, TPU v4i",
    DramStandard{hbm2_tpu_v4i(), 614, "Jouppi et al., ISCA 2021, Table 1"}, {"tpu-v4i"}};

}  // namespace systolic
