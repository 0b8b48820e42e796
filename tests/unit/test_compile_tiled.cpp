// The tiled compiler (sim/compile/tiled.cpp, docs/memory.md). Fused attention: the scores stay
// on chip, HBM bytes and MACs are what a hand count gives, the VPU cost of the blocked (online)
// softmax is counted, every buffer and engine arrangement runs to the end. GEMM loop order:
// weights outer when it moves fewer bytes. The HBM footprint.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>

#include "models/common/error.hpp"
#include "sim/compile/compile.hpp"
#include "sim/compile/detail.hpp"
#include "sim/config/config.hpp"
#include "sim/simulate/simulate.hpp"
#include "sim/workload/workload.hpp"

namespace test_compile_tiled {

namespace {

using namespace systolic;

ChipConfig v4i(std::vector<std::string> overrides = {}) {
  overrides.insert(overrides.begin(), "memory.ideal=false");
  return load_config(std::string(SYSTOLIC_SOURCE_DIR) + "/configs/tpu-v4i.yaml", overrides);
}

// `instances` x (scores Q[m, hd] x K[hd, n] -> softmax -> context P[m, n] x V[n, hd]), bf16,
// as the transformer lowering writes attention.
Workload attention(int64_t m, int64_t hd, int64_t n, int64_t instances) {
  Workload w;
  w.name = "attention";
  w.gemms = {{"scores", m, hd, n, DType::bf16, instances, "t:1", LayerKind::attention},
             {"context", m, n, hd, DType::bf16, instances, "t:2", LayerKind::attention}};
  VectorWork softmax;
  softmax.name = "softmax";
  softmax.op = {VectorKind::softmax, instances * m, n, DType::bf16};
  softmax.after_gemms = 1;
  softmax.source = "t:3";
  w.vectors = {softmax};
  return w;
}

// What the program asks for, per layer: HBM bytes, MACs, VPU instructions and elements by kind.
struct LayerCounts {
  uint64_t hbm_read = 0, hbm_written = 0, macs = 0;
  std::map<VectorKind, uint64_t> vpu_ops, vpu_elements;
};

std::vector<LayerCounts> counts(const Program& p) {
  std::vector<LayerCounts> out(p.layers.size());
  for (const auto& s : p.streams)
    for (const auto& i : s.instructions) {
      LayerCounts& c = out.at(static_cast<size_t>(i.layer));
      if (const auto* mm = std::get_if<MatmulOp>(&i.op)) {
        c.macs += static_cast<uint64_t>(mm->m * mm->k * mm->n);
      } else if (const auto* v = std::get_if<VpuOp>(&i.op)) {
        ++c.vpu_ops[v->kind];
        c.vpu_elements[v->kind] += static_cast<uint64_t>(v->rows * v->cols);
      } else if (const auto* d = std::get_if<DmaOp>(&i.op)) {
        if (d->descriptor.src.is_hbm()) c.hbm_read += d->descriptor.total_bytes();
        if (d->descriptor.dst.is_hbm()) c.hbm_written += d->descriptor.total_bytes();
      }
    }
  return out;
}

// Compiles and simulates; checks the conservation every arrangement must keep: layers as in the
// workload, MACs issued = useful MACs, the VPU's softmax over every score exactly once per key
// block, HBM bytes counted by the HBM model = the descriptors'.
std::vector<LayerCounts> run(const ChipConfig& cfg, const Workload& w) {
  const Program p = compile(cfg, w);
  REQUIRE(p.layers.size() == 3);
  CHECK(p.layers[0].name == "scores");
  CHECK(p.layers[1].name == "softmax");
  CHECK(p.layers[2].name == "context");
  const auto c = counts(p);
  CHECK(c[0].macs == p.layers[0].useful_macs);
  CHECK(c[2].macs == p.layers[2].useful_macs);
  CHECK(c[1].vpu_elements.at(VectorKind::softmax) ==
        static_cast<uint64_t>(w.vectors[0].op.rows * w.vectors[0].op.cols));
  const SimResult r = simulate(cfg, p);  // throws on a deadlock
  CHECK(r.hbm.bytes_read == c[0].hbm_read + c[1].hbm_read + c[2].hbm_read);
  CHECK(r.hbm.bytes_written == c[0].hbm_written + c[1].hbm_written + c[2].hbm_written);
  return c;
}

}  // namespace

TEST_CASE("fused attention: Q, K, V and the context cross HBM, the scores do not", "[compile][attention]") {
  // Prefill-like: 4 heads of S = 1024, head_dim 128. One instance reads Q, K, V (256 KiB each)
  // and writes the context (256 KiB); the 1024 x 1024 scores (2 MiB in bf16, written and read
  // back through HBM before) stay in the accumulators and vmem.
  const int64_t S = 1024, hd = 128, heads = 4;
  const auto c = run(v4i(), attention(S, hd, S, heads));
  CHECK(c[0].hbm_read == heads * (S * hd + hd * S) * 2);  // Q and K
  CHECK(c[0].hbm_written == 0);
  CHECK(c[1].hbm_read + c[1].hbm_written == 0);
  CHECK(c[2].hbm_read == heads * S * hd * 2);              // V
  CHECK(c[2].hbm_written == heads * S * hd * 2);           // context
  // A row of scores fits: one softmax per block of query rows, no online rescaling.
  CHECK(c[1].vpu_ops.count(VectorKind::mul) == 0);
}

TEST_CASE("fused attention: keys in blocks when a row of scores does not fit", "[compile][attention]") {
  const int64_t S = 1024, hd = 128, heads = 2;
  SECTION("K and V resident: read once per instance, online softmax on the VPU") {
    // 16 KiB of accumulators per copy: 8 rows x (384 keys + 128 context columns) x 4 B. Keys in
    // 3 blocks of 384 (the last 256), 128 blocks of 8 query rows per instance.
    const auto c = run(v4i({"sram.accumulators_bytes=32 KiB"}), attention(S, hd, S, heads));
    CHECK(c[0].hbm_read == heads * (S * hd + hd * S) * 2);
    CHECK(c[2].hbm_read == heads * S * hd * 2);
    const uint64_t units = heads * (S / 8), blocks = 3;
    CHECK(c[1].vpu_ops.at(VectorKind::softmax) == units * blocks);
    // Per unit: a rescale of the context before each further block, and the final 1 / sum.
    CHECK(c[1].vpu_ops.at(VectorKind::mul) == units * blocks);
    CHECK(c[1].vpu_elements.at(VectorKind::mul) == units * blocks * 8 * hd);
  }
  SECTION("K and V streamed per block of query rows when they do not fit the weight buffer") {
    // 128 KiB per weight copy holds K and V for 256 keys (2 x 256 x 128 x 2 B), not all 1024;
    // 128 KiB per accumulator copy holds 80 rows of 256 scores and 128 context columns (32-bit):
    // 13 blocks of query rows, each streaming K and V again (FlashAttention's loop order).
    const auto c = run(v4i({"sram.weights_bytes=256 KiB", "sram.accumulators_bytes=256 KiB"}),
                       attention(S, hd, S, heads));
    const uint64_t q_blocks = 13;
    CHECK(c[0].hbm_read == heads * (S * hd + q_blocks * hd * S) * 2);
    CHECK(c[2].hbm_read == heads * q_blocks * S * hd * 2);
    CHECK(c[2].hbm_written == heads * S * hd * 2);
    CHECK(c[1].vpu_ops.at(VectorKind::softmax) == heads * q_blocks * 4);  // 4 blocks of 256 keys
  }
}

TEST_CASE("fused attention: MLA's context reads the latent the scores loaded, not HBM again", "[compile][attention]") {
  // Absorbed MLA decode, 2 slots: 16 heads' queries in the latent space [16, 576] against the
  // slot's cached latent [576, L = 1024] (keys), then the probabilities against the same latent's
  // first 512 columns (values), as sim/workload/transformer/lower.cpp writes it.
  const int64_t H = 16, c = 512, r = 64, L = 1024, slots = 2;
  Workload w = attention(H, c + r, L, slots);
  w.gemms[1].n = c;
  w.gemms[1].b_from_previous = true;
  const auto n = run(v4i(), w);
  CHECK(n[0].hbm_read == slots * (H * (c + r) + (c + r) * L) * 2);  // Q and the latent, once
  CHECK(n[2].hbm_read == 0);
  CHECK(n[2].hbm_written == slots * H * c * 2);  // the context
  // The KV cache is held once: the latent of each slot.
  CHECK(compile_detail::hbm_footprint(v4i(), w).kv_cache == slots * (c + r) * L * 2);
  SECTION("also when the latent streams block by block") {
    const auto b = run(v4i({"sram.weights_bytes=1 MiB"}), w);  // 512 KiB per copy: 240 keys of K and V
    CHECK(b[2].hbm_read == 0);
    CHECK(b[0].hbm_read >= slots * (H * (c + r) + (c + r) * L) * 2);
  }
}

TEST_CASE("fused attention runs to the end in every buffer and engine arrangement", "[compile][attention]") {
  for (const char* buffering : {"dma.double_buffer=true", "dma.double_buffer=false"})
    for (const char* engines : {"dma.engines=1", "dma.engines=2", "dma.engines=4"})
      for (const char* mxus : {"mxu.count=1", "mxu.count=4"})
        for (const char* acc : {"sram.accumulators_bytes=4 MiB", "sram.accumulators_bytes=32 KiB"})
          for (const char* weights : {"sram.weights_bytes=128 MiB", "sram.weights_bytes=256 KiB"}) {
            INFO(buffering << " " << engines << " " << mxus << " " << acc << " " << weights);
            const ChipConfig cfg = v4i({buffering, engines, mxus, acc, weights});
            run(cfg, attention(512, 64, 512, 3));  // prefill-like
            run(cfg, attention(1, 128, 640, 5));   // decode-like: one query row per slot
            run(cfg, attention(8, 128, 384, 2));   // grouped-query decode: 8 heads share K and V
          }
}

TEST_CASE("fused attention: small instances take the MXUs in turn", "[compile][attention]") {
  // Decode at L = 128: each instance's matmuls are one fold; eight instances on four MXUs give
  // each MXU four of the sixteen.
  const Program p = compile(v4i(), attention(1, 128, 128, 8));
  for (const auto& s : p.streams)
    if (s.engine.kind == EngineKind::mxu) CHECK(s.instructions.size() == 4);
}

TEST_CASE("GEMM entries that are not an attention chain are not fused", "[compile][attention]") {
  Workload w = attention(256, 64, 256, 2);
  w.gemms[1].kind = LayerKind::matmul;  // the context as a weight matmul: own weights, no softmax fusion
  const Program p = compile(v4i(), w);
  const auto c = counts(p);
  REQUIRE(p.layers.size() == 3);
  CHECK(p.layers[1].name == "softmax");  // on its own, between the two
  CHECK(c[1].vpu_ops.at(VectorKind::softmax) == 1);
  CHECK(c[0].hbm_written == 2 * 256 * 256 * 2);  // the scores go to HBM and come back
  CHECK(c[2].hbm_read >= 2 * 256 * 256 * 2);
}

TEST_CASE("GEMM loop order: weights outer when the activations come in blocks and that moves fewer bytes",
          "[compile][memory]") {
  // [4096, 4096] x [4096, 4096] bf16 on tpu-v4i: an activation block is 1024 rows (8 MiB of
  // vmem per copy). Activations outer would read W (32 MiB) once per block: 32 + 4 x 32 MiB.
  // All 4096 columns of W fit a 64 MiB weight-buffer copy: one panel, A and W read once each.
  const uint64_t mib = 1 << 20;
  Workload big;
  big.name = "big";
  big.gemms = {{"ws", 4096, 4096, 4096, DType::bf16, 1, "t:1", LayerKind::matmul}};
  for (const char* buffering : {"dma.double_buffer=true", "dma.double_buffer=false"})
    for (const char* engines : {"dma.engines=1", "dma.engines=4"}) {
      INFO(buffering << " " << engines);
      const ChipConfig cfg = v4i({buffering, engines});
      const Program p = compile(cfg, big);
      const auto c = counts(p);
      CHECK(c[0].macs == p.layers[0].useful_macs);
      // (Without double buffering a block is 2048 rows, W still one panel: the same bytes.)
      CHECK(c[0].hbm_read == 2 * 32 * mib);
      CHECK(c[0].hbm_written == 32 * mib);
      CHECK(simulate(cfg, p).hbm.bytes_read == c[0].hbm_read);  // and it runs to the end
    }
  // Several panels: 96 MiB of weights are two 48 MiB panels, A read twice (16 + 96 + 16 MiB);
  // activations outer would read W twice (16 + 2 x 96 MiB).
  Workload qkv;
  qkv.name = "qkv";
  qkv.gemms = {{"qkv", 2048, 4096, 12288, DType::bf16, 1, "t:1", LayerKind::matmul}};
  const ChipConfig cfg = v4i();
  const Program p = compile(cfg, qkv);
  CHECK(counts(p)[0].hbm_read == 2 * 16 * mib + 96 * mib);
  CHECK(simulate(cfg, p).hbm.bytes_read == 2 * 16 * mib + 96 * mib);
  // One block of rows (decode): activations outer, W streamed once past it.
  Workload decode;
  decode.name = "decode";
  decode.gemms = {{"qkv", 4, 4096, 12288, DType::bf16, 1, "t:1", LayerKind::matmul}};
  CHECK(counts(compile(cfg, decode))[0].hbm_read == 4 * 4096 * 2 + 96 * mib);
}

// (No commas in test names: Catch reads them as a list of names when ctest runs one test.)
TEST_CASE("HBM footprint: weights + KV cache + two activation regions; every address inside it",
          "[compile][memory]") {
  const std::string model = std::string(SYSTOLIC_SOURCE_DIR) + "/traces/models/llama2-7b.yaml";
  const Workload w = load_workload(model, {"1x4096", "decode"});
  const ChipConfig cfg = v4i();  // 8 GiB of HBM
  const compile_detail::HbmFootprint f = compile_detail::hbm_footprint(cfg, w);
  // Every weight matrix once (32 layers x 202.4 M + the LM head, bf16; all multiples of 4 KiB),
  // the KV cache of one slot at L = 4096 (2 GiB), and two regions for the largest activation.
  CHECK(f.weights == (32ull * 202375168 + 32000ull * 4096) * 2);
  CHECK(f.kv_cache == 2ull << 30);
  CHECK(f.activations == 2 * 65536);  // the LM head's logits row: 32000 x 2 B, 4 KiB aligned
  CHECK(f.total() > cfg.hbm.capacity_bytes);
  // GQA prefill: the 8 query heads of a KV head read one K and one V, held once. Llama-2-70B at
  // [1, 2048]: 80 layers x 8 KV heads x (K + V) x 2048 x 128 x 2 B = 640 MiB, not 64 heads' 5 GiB.
  const Workload gqa = load_workload(std::string(SYSTOLIC_SOURCE_DIR) + "/traces/models/llama2-70b.yaml", {"1x2048"});
  CHECK(compile_detail::hbm_footprint(cfg, gqa).kv_cache == 80ull * 8 * 2 * 2048 * 128 * 2);
  // It does not fit 8 GiB (sim/compile/capacity.hpp); on a 16 GiB part every address the program
  // touches lies inside the footprint.
  CHECK_THROWS_AS(compile(cfg, w), InputError);
  const Program p = compile(v4i({"hbm.capacity_bytes=16 GiB"}), w);
  uint64_t end = 0;
  for (const auto& s : p.streams)
    for (const auto& i : s.instructions)
      if (const auto* d = std::get_if<DmaOp>(&i.op))
        for (const DmaEndpoint* side : {&d->descriptor.src, &d->descriptor.dst})
          if (side->is_hbm()) end = std::max(end, side->base + d->descriptor.extent_bytes(*side));
  CHECK(end == f.total());  // the last region, the LM head's weights, read to its last byte
}

}  // namespace test_compile_tiled
