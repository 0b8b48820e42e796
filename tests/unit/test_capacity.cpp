// HBM capacity (sim/compile/capacity.hpp, docs/memory.md "HBM layout and footprint"): the footprint of
// a small model worked by hand, the boundary (a workload that fills the HBM exactly runs, one
// byte less is refused), the message's split and hints, a compiled program's footprint from the
// addresses it touches. Test names have no commas: ctest runs each one by name.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/common/error.hpp"
#include "models/ici/topology.hpp"
#include "sim/compile/capacity.hpp"
#include "sim/compile/compile.hpp"
#include "sim/compile/detail.hpp"
#include "sim/config/config.hpp"
#include "sim/workload/workload.hpp"
#include "tests/unit/fixtures.hpp"

namespace test_capacity {

namespace {

using namespace systolic;
using Catch::Contains;
using systolic::testing::kRepo;

const std::string kSmallModel = kRepo + "/tests/data/models/capacity-lm.yaml";


// capacity-lm (2 layers, d 256, 4 query heads and 2 KV heads of 64, gated FFN 512, vocab
// 1024, bf16) decoding 4 slots of L = 512, worked by hand:
//   weights = parameters x 2 B = (2 x (256x256 + 2 x 256x128 + 256x256 + 3 x 256x512) + 256x1024) x 2
//   KV cache = 2 (K, V) x layers x kv_heads x head_dim x tokens x 2 B, tokens = 4 x 512
//   activations = two regions of the largest activation: the logits, 4 x 1024 x 2 B = 8 KiB
constexpr uint64_t kWeightBytes = (2 * (256 * 256 + 2 * 256 * 128 + 256 * 256 + 3 * 256 * 512) + 256 * 1024) * 2;
constexpr uint64_t kKvBytes = 2ull * 2 * 2 * 64 * (4 * 512) * 2;
constexpr uint64_t kActivationBytes = 2 * 4 * 1024 * 2;
constexpr uint64_t kTotalBytes = kWeightBytes + kKvBytes + kActivationBytes;

}  // namespace

TEST_CASE("HBM footprint of a small decoder worked by hand", "[capacity]") {
  const Workload w = load_workload(kSmallModel, {"4x512", "decode"});
  for (const char* ideal : {"memory.ideal=true", "memory.ideal=false"}) {
    const compile_detail::HbmFootprint f = compile_detail::hbm_footprint(testing::config_preset("tpu-v4i", {ideal}), w);
    CHECK(f.weights == 2883584);  // 1,441,792 parameters
    CHECK(f.weights == kWeightBytes);
    CHECK(f.kv_cache == kKvBytes);
    CHECK(f.activations == kActivationBytes);
    CHECK(f.total() == 4997120);
  }
  // Prefill of one 512-token prompt: the keys and values it computes are the cache.
  const Workload prefill = load_workload(kSmallModel, {"1x512", "prefill"});
  CHECK(compile_detail::hbm_footprint(testing::config_preset("tpu-v4i"), prefill).kv_cache == 2ull * 2 * 2 * 64 * 512 * 2);
}

TEST_CASE("a workload that fills the HBM exactly compiles and one byte less is refused", "[capacity]") {
  const Workload w = load_workload(kSmallModel, {"4x512", "decode"});
  for (const char* ideal : {"memory.ideal=true", "memory.ideal=false"}) {
    const ChipConfig exact = testing::config_preset("tpu-v4i", {ideal, "hbm.capacity_bytes=" + std::to_string(kTotalBytes)});
    CHECK_NOTHROW(require_hbm_fits(exact, w));
    CHECK_NOTHROW(compile(exact, w));
    const ChipConfig short_by_one = testing::config_preset("tpu-v4i", {ideal, "hbm.capacity_bytes=" + std::to_string(kTotalBytes - 1)});
    CHECK_THROWS_WITH(compile(short_by_one, w),
                      Contains(kSmallModel + ": workload 'capacity-lm@decode-4x512' needs 0.00 GB (4997120 B) of HBM") &&
                          Contains("but hbm.capacity_bytes = 4997119 B") && Contains("it does not fit"));
  }
}

TEST_CASE("Llama-2-70B decode 64x4096 on TPU v4i: the bytes split and what would fit", "[capacity]") {
  // Weights: 68.71 G parameters without the embedding table, 2 B each. KV: 2 x 80 layers x 8
  // KV heads x 128 x (64 x 4096) tokens x 2 B = 85.90 GB. Sharding the 223.3 GB over N chips
  // of 8 GiB (less the activations) needs N >= 223.33 / 8.58 -> 27. TP may be 8 at most (8 KV
  // heads): the fewest chips a power of two with a split is 32, tp=8 x pp=4 (80 layers / 4).
  const Workload w = load_workload(kRepo + "/traces/models/llama2-70b.yaml", {"64x4096", "decode"});
  CHECK(compile_detail::hbm_footprint(testing::config_preset("tpu-v4i"), w).kv_cache == 2ull * 80 * 8 * 128 * 64 * 4096 * 2);
  for (const char* ideal : {"memory.ideal=true", "memory.ideal=false"})
    CHECK_THROWS_WITH(
        compile(testing::config_preset("tpu-v4i", {ideal}), w),
        Contains("llama2-70b.yaml: workload 'llama2-70b@decode-64x4096' needs 223.33 GB") &&
            Contains("(weights 137.43 GB, KV cache 85.90 GB, activations 0.01 GB)") &&
            Contains("hbm.capacity_bytes = 8589934592 B (8 GiB)") &&
            Contains("shard it over 32 or more chips: --mesh pp=4,tp=8 on a system of that many") &&
            Contains("tp=8 is the most that divides the model's heads, KV heads and FFN width") &&
            Contains("int8 weights (weight_dtype: int8 or --weight-dtype int8; the weights would take 68.71 "
                     "GB)") &&
            !Contains("fewer decode slots") &&  // the weights alone do not fit
            Contains("--set \"hbm.capacity_bytes=208 GiB\""));
}

TEST_CASE("each chip's share is checked after sharding and the hint names this config's chips", "[capacity]") {
  // Llama-2-7B prefill [1, 2048] (14.4 GB) on 8 chips given 8 GiB each (a what-if): unsharded
  // every chip holds it all and it does not fit; --tp 8 splits it 8 ways and it does.
  const ChipConfig cfg = testing::config_preset("tpu-v5e-8", {"hbm.capacity_bytes=8 GiB"});
  const std::string model = kRepo + "/traces/models/llama2-7b.yaml";
  WorkloadOptions options{"1x2048", "prefill"};
  CHECK_THROWS_WITH(compile_system(cfg, load_system_workloads(model, options, 8)),
                    Contains("(chip 0's share, --tp 1) needs 14.39 GB") &&
                        Contains("shard it over this config's 8 chips: --tp 8"));
  options.tp = 8;
  const std::vector<Workload> shares = load_system_workloads(model, options, 8);
  CHECK(shares[3].tp == 8);
  CHECK_NOTHROW(compile_system(cfg, shares));
}

TEST_CASE("the hinted split is one the sharder takes and it fits", "[capacity]") {
  const std::string model = kRepo + "/traces/models/gpt2.yaml";
  SECTION("this config's chips: gpt2's 12 heads leave tp=4 x pp=2 on 8") {
    // Capacity for a sixth of the weights: 6 or 7 chips' worth, so all 8 of tpu-v5e-8. --tp 8
    // does not divide the 12 heads, and 12 layers take pp=2.
    const Workload w = load_workload(model, {"1x128", "prefill"});
    const compile_detail::HbmFootprint f = compile_detail::hbm_footprint(testing::config_preset("tpu-v5e-8"), w);
    const std::string capacity =
        "hbm.capacity_bytes=" + std::to_string(f.activations + (f.weights + f.kv_cache) / 6);
    const ChipConfig cfg = testing::config_preset("tpu-v5e-8", {capacity});
    CHECK_THROWS_WITH(require_hbm_fits(cfg, w),
                      Contains("shard it over this config's 8 chips: --mesh pp=2,tp=4 "
                               "(the weights and KV cache split 8 ways)"));
    WorkloadOptions options{"1x128", "prefill"};
    options.mesh = "pp=2,tp=4";
    for (const Workload& share :
         load_system_workloads(model, options, Topology({2, 4}, Topology::Wrap::mesh)))
      CHECK_NOTHROW(require_hbm_fits(cfg, share));
  }
  SECTION("a larger system: Llama-2-70B's split over 32 chips fits each of them") {
    WorkloadOptions options{"64x4096", "decode"};
    options.mesh = "pp=4,tp=8";
    const ChipConfig cfg = testing::config_preset("tpu-v4i");
    const std::vector<Workload> shares = load_system_workloads(
        kRepo + "/traces/models/llama2-70b.yaml", options, Topology({4, 8}, Topology::Wrap::torus));
    for (const size_t chip : {size_t{0}, shares.size() - 1})
      CHECK_NOTHROW(require_hbm_fits(cfg, shares[chip]));
  }
  SECTION("one chip: a hinted --tp divides the heads") {
    // gpt2 needing 5 chips: 8 (a power of two) as tp=4 x pp=2, never --tp 5 or --tp 8.
    const Workload w = load_workload(model, {"1x128", "prefill"});
    const compile_detail::HbmFootprint f = compile_detail::hbm_footprint(testing::config_preset("tpu-v4i"), w);
    const std::string capacity =
        "hbm.capacity_bytes=" + std::to_string(f.activations + (f.weights + f.kv_cache) / 5);
    CHECK_THROWS_WITH(require_hbm_fits(testing::config_preset("tpu-v4i", {capacity}), w),
                      Contains("shard it over 8 or more chips: --mesh pp=2,tp=4 on a system of that many"));
  }
}

TEST_CASE("operands whose bytes overflow 64 bits are refused naming the layer", "[capacity]") {
  const Workload w = testing::gemm_workload({{"wide", 4, int64_t(1) << 40, int64_t(1) << 40, {}, 1, "w.yaml:3"}});
  CHECK_THROWS_WITH(require_hbm_fits(testing::tiny_chip(1, MxuModel::fast), w),
                    "w.yaml:3: layer 'wide': the bytes of its operands overflow 64 bits");
}

TEST_CASE("a compiled program's footprint is the highest HBM byte its DMA and ICI instructions touch", "[capacity]") {
  Program p;
  p.streams.push_back({{EngineKind::dma, 0}, {}});
  p.streams[0].instructions.push_back(
      {DmaOp{DmaDescriptor::linear(DmaEndpoint::hbm(1 << 20), DmaEndpoint::sram(0, 0), 4096)}, -1, {}, {}});
  CHECK(program_hbm_footprint(p) == (1 << 20) + 4096);
  IciCopy copy;
  copy.to = 1;
  copy.bytes = 512;
  copy.via_hbm = true;
  copy.src_addr = 64;
  copy.dst_addr = 2 << 20;  // the receiving chip's address: the same layout on every chip
  p.streams.push_back({{EngineKind::ici, 0}, {Instruction{IciOp{{copy}}, -1, {}, {}}}});
  CHECK(program_hbm_footprint(p) == (2 << 20) + 512);

  ChipConfig cfg = testing::tiny_chip(1, MxuModel::fast);
  cfg.hbm.capacity_bytes = (2 << 20) + 512;
  CHECK_NOTHROW(require_program_fits(cfg, p, "p.trace"));
  cfg.hbm.capacity_bytes -= 1;
  CHECK_THROWS_WITH(require_program_fits(cfg, p, "p.trace"),
                    Contains("p.trace: the compiled trace needs 0.00 GB (2097664 B) of HBM") &&
                        Contains("up to address 0x200200") && Contains("hbm.capacity_bytes = 2097663 B"));
}

}  // namespace test_capacity
