// The area and cost model (docs/area.md): published dies (TPU v1 at 28 nm, TPU v4i at 7 nm)
// within 20 % and their large blocks in the published order, block areas adding up to the
// total, the per-unit figures worked by hand, and SRAM energy growing with the bank.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "fixtures.hpp"
#include "models/area/die_cost.hpp"
#include "models/area/pe_area.hpp"
#include "models/area/sram_model.hpp"
#include "models/chip/chip_area.hpp"
#include "sim/config/config.hpp"

namespace test_area {

using namespace systolic;
using Catch::Detail::Approx;

namespace {


}  // namespace

TEST_CASE("TPU v1: total within 20 % of the published die, blocks in the floorplan's order", "[area]") {
  // Jouppi et al., ISCA 2017: die <= 331 mm^2; Unified Buffer 29 %, matrix unit 24 %,
  // accumulators 6 % (Figure 2). The PE and SRAM calibrations come from this die, so its total is
  // a consistency check; the accumulators' share is not calibrated.
  const ChipArea a = chip_area(testing::config_preset("tpu-v1"));
  CHECK(std::abs(a.total() - 331.0) / 331.0 < 0.20);
  CHECK(a.of(AreaBlock::vmem) > a.of(AreaBlock::mxu));
  CHECK(a.of(AreaBlock::mxu) > a.of(AreaBlock::accumulators));
  CHECK(a.of(AreaBlock::accumulators) / a.total() == Approx(0.06).margin(0.02));
}

TEST_CASE("TPU v4i: total within 20 % of the published die (nothing calibrated on it)", "[area]") {
  // Jouppi et al., ISCA 2021, Table 1 and Figure 6: 7 nm, die < 400 mm^2, "CMEM is 28% of the
  // area". The preset's 128 MiB weight buffer is the CMEM.
  const ChipArea a = chip_area(testing::config_preset("tpu-v4i"));
  CHECK(std::abs(a.total() - 400.0) / 400.0 < 0.20);
  CHECK(a.of(AreaBlock::weights) / a.total() == Approx(0.28).margin(0.03));
  // 144 MiB of SRAM outweighs the four bf16 MXUs, which outweigh the vector unit.
  const double sram = a.of(AreaBlock::vmem) + a.of(AreaBlock::weights) + a.of(AreaBlock::accumulators);
  CHECK(sram > a.of(AreaBlock::mxu));
  CHECK(a.of(AreaBlock::mxu) > a.of(AreaBlock::vpu));
}

TEST_CASE("Block areas add up to the total and the uncore is its configured share", "[area]") {
  for (const char* name : {"tpu-v1", "tpu-v4i", "tpu-v5e-8", "tiny-4x4"}) {
    const ChipConfig c = testing::config_preset(name);
    const ChipArea a = chip_area(c);
    double sum = 0;
    for (double v : a.mm2) sum += v;
    CHECK(sum == Approx(a.total()).epsilon(1e-12));
    CHECK(a.of(AreaBlock::uncore) / a.total() == Approx(c.area.uncore_fraction).epsilon(1e-12));
  }
}

TEST_CASE("Per-unit areas worked by hand", "[area]") {
  // Horowitz 2014 (45 nm): 8b mult 282 + 32b add 137 um^2, plus 56 register bits (two 8-bit
  // weights, an 8-bit activation, a 32-bit partial sum) at 4.522 um^2 (NanGate45 DFF_X1).
  CHECK(pe_um2_at_45nm(DType::int8) == Approx(282 + 137 + 56 * 4.522));
  // bf16: the fp16 multiplier (1640) x 64/121, the fp32 adder (4184), 80 register bits.
  CHECK(pe_um2_at_45nm(DType::bf16) == Approx(1640.0 * 64 / 121 + 4184 + 80 * 4.522));
  // 1 MiB of 0.027 um^2 cells at 27 % efficiency: 8 Mi bits x 0.027 / 0.27 = 0.8389 mm^2.
  CHECK(sram_mm2(1 << 20, node_factors(TechNode::n7), 0.27) == Approx(8388608 * 0.027e-6 / 0.27));
  CHECK(sram_mm2(2 << 20, node_factors(TechNode::n7), 0.27) ==
        Approx(2 * sram_mm2(1 << 20, node_factors(TechNode::n7), 0.27)));
  // Doubling the array doubles the MXU area; moving 45 -> 7 nm multiplies it by the logic factor.
  const ChipConfig v4i = testing::config_preset("tpu-v4i");
  const double mxu7 = chip_area(v4i).of(AreaBlock::mxu);
  CHECK(chip_area(testing::config_preset("tpu-v4i", {"mxu.count=8"})).of(AreaBlock::mxu) == Approx(2 * mxu7));
  CHECK(chip_area(testing::config_preset("tpu-v4i", {"area.node=45nm"})).of(AreaBlock::mxu) *
            node_factors(TechNode::n7).logic_area ==
        Approx(mxu7));
}

TEST_CASE("SRAM access energy grows with the bank as Horowitz's three sizes", "[area][energy]") {
  // 8 KiB: 10 pJ per 64 bits = 1.25 pJ/B; 32 KiB: 20 pJ; 1 MiB: ~100 pJ (the fit gives 113).
  CHECK(sram_pj_per_byte(8 << 10, 10.0, 0.5) == Approx(1.25));
  CHECK(sram_pj_per_byte(32 << 10, 10.0, 0.5) == Approx(2.5));
  CHECK(sram_pj_per_byte(1 << 20, 10.0, 0.5) == Approx(12.5).epsilon(0.14));
  CHECK(sram_pj_per_byte(4 << 20, 10.0, 0.5) > sram_pj_per_byte(1 << 20, 10.0, 0.5));
}

TEST_CASE("Die cost: gross dies, Poisson yield, wafer price", "[area]") {
  // 100 mm^2 on a 300 mm wafer: pi 150^2 / 100 - pi 300 / sqrt(200) = 706.86 - 66.64 = 640.2;
  // yield exp(-1 cm^2 x 0.1) = 0.9048; 7 nm wafer 9346 USD / (640.2 x 0.9048) = 16.13 USD.
  const DieCost c = die_cost(100.0, node_factors(TechNode::n7), 0.1);
  CHECK(c.dies_per_wafer == Approx(640.22).epsilon(1e-4));
  CHECK(c.yield == Approx(std::exp(-0.1)));
  CHECK(c.usd == Approx(9346.0 / (640.22 * std::exp(-0.1))).epsilon(1e-4));
}

TEST_CASE("Off-die interfaces: HBM stacks and ICI bandwidth as LLMCompass measured them", "[area]") {
  // Zhang et al., ISCA 2024, Table II / cost_model.py, at 7 nm (96.3 MTr/mm^2): an HBM2e stack's
  // PHY 10.45 mm^2 + controller 552.743 MTr = 16.19 mm^2; an NVLink3 link (25 GB/s a direction)
  // 1.888 mm^2 + 74.632 MTr = 2.663 mm^2.
  const double stack = 10.45 + 552.743 / 96.3, per_gbps = (1.888 + 74.632 / 96.3) / 25.0;
  CHECK(stack == Approx(16.19).epsilon(1e-3));
  // TPU v4i: two stacks (16 channels x 2 pseudo-channels x 64 bit = 2048 bits); HBM2E at 4 stacks.
  CHECK(chip_area(testing::config_preset("tpu-v4i")).of(AreaBlock::memory_phy) == Approx(2 * stack));
  CHECK(chip_area(testing::config_preset("tpu-v4i", {"hbm.channels=32"})).of(AreaBlock::memory_phy) == Approx(4 * stack));
  // tpu-v5e-8: 4 ports of 45 GB/s; twice the bandwidth, twice the SerDes; one chip alone has none.
  const double ici = 4 * 45 * per_gbps;
  CHECK(chip_area(testing::config_preset("tpu-v5e-8")).of(AreaBlock::ici) == Approx(ici));
  CHECK(ici == Approx(19.17).epsilon(1e-3));
  CHECK(chip_area(testing::config_preset("tpu-v5e-8", {"ici.link_gbps=90"})).of(AreaBlock::ici) == Approx(2 * ici));
  CHECK(chip_area(testing::config_preset("tpu-v5e")).of(AreaBlock::ici) == 0.0);
}

}  // namespace test_area
