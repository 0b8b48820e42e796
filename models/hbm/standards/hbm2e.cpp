// HBM2e as in TPU v5p (config `hbm.preset: hbm2e`, also `tpu-v5p`).
#include "models/hbm/dram_standard.hpp"

namespace systolic {

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

const Registration<DramStandard> registration{
    "hbm2e", 20, "2765 GB/s, TPU v5p",
    DramStandard{hbm2e_tpu_v5p(), 2765, "Google Cloud TPU documentation, \"TPU v5p\""}, {"tpu-v5p"}};

}  // namespace systolic
