// Mixed precision (docs/precision.md): int4 storage, per-operand types and what the MXU
// computes them in, weight-only quantisation's dequantise op, bytes that follow each type
// (HBM footprint, DMA, KV cache), MACs that do not, fp8 scales in the trace.
#include <catch2/catch.hpp>

#include <string>

#include "fixtures.hpp"
#include "models/common/error.hpp"
#include "models/mxu/operands.hpp"
#include "sim/compile/compile.hpp"
#include "sim/compile/detail.hpp"
#include "sim/config/config.hpp"
#include "sim/simulate/simulate.hpp"
#include "sim/trace/trace.hpp"
#include "sim/workload/transformer/lower.hpp"
#include "sim/workload/workload.hpp"

namespace test_precision {

namespace {

using namespace systolic;
using Catch::Contains;
using systolic::testing::kRepo;


ChipConfig v4i(std::vector<std::string> overrides = {}) {
  overrides.insert(overrides.begin(), "memory.ideal=false");
  return load_config(kRepo + "/configs/tpu-v4i.yaml", overrides);
}

transformer::ModelSpec llama7b(DType weights, DType kv = DType::bf16) {
  transformer::ModelSpec m = transformer::load_model(kRepo + "/traces/models/llama2-7b.yaml");
  m.precision.weights = weights;
  m.precision.kv_cache = kv;
  return m;
}

Gemm gemm(int64_t m, int64_t k, int64_t n, DType a, DType b) {
  Gemm g;
  g.name = "g";
  g.m = m, g.k = k, g.n = n;
  g.a_dtype = a;
  g.b_dtype = b;
  g.source = "t:1";
  return g;
}

// HBM bytes the program's DMAs read and write, and the dequantise ops' elements.
struct Moved {
  uint64_t hbm_read = 0, hbm_written = 0, dequantize_ops = 0, dequantize_elements = 0;
  uint64_t weight_loads = 0, weight_bytes = 0;  // DMAs into the weight buffer
};
Moved moved(const Program& p) {
  Moved out;
  for (const auto& s : p.streams)
    for (const auto& i : s.instructions) {
      if (const auto* d = std::get_if<DmaOp>(&i.op)) {
        if (d->descriptor.src.is_hbm()) out.hbm_read += d->descriptor.total_bytes();
        if (d->descriptor.dst.is_hbm()) out.hbm_written += d->descriptor.total_bytes();
        if (!d->descriptor.dst.is_hbm() && d->descriptor.dst.space == kWeights) {
          ++out.weight_loads;
          out.weight_bytes += d->descriptor.total_bytes();
        }
      } else if (const auto* v = std::get_if<VpuOp>(&i.op); v && v->kind == VectorKind::dequantize) {
        ++out.dequantize_ops;
        out.dequantize_elements += static_cast<uint64_t>(v->rows * v->cols);
      }
    }
  return out;
}

}  // namespace

TEST_CASE("int4 is half a byte, packed, never rounded to zero, and the MXU never multiplies it", "[precision]") {
  CHECK(dtype_bits(DType::int4) == 4);
  CHECK(dtype_storage_bytes(DType::int4, 1) == 1);  // one value still takes a byte
  CHECK(dtype_storage_bytes(DType::int4, 2) == 1);
  CHECK(dtype_storage_bytes(DType::int4, 7) == 4);
  CHECK(dtype_storage_bytes(DType::bf16, 7) == 14);
  CHECK(dtype_storage_bytes(DType::fp32, 3) == 12);
  CHECK(kDTypeNames.parse("int4") == DType::int4);
  CHECK(kDTypeNames.choices() == "int8, fp8_e4m3, fp8_e5m2, bf16, fp16, fp32, int4");
  CHECK(!dtype_on_mxu(DType::int4));
}

TEST_CASE("operand pairs: what the MXU computes in, and the pairs it cannot", "[precision]") {
  const auto ok = [](DType a, DType b) { return std::get<MxuOperands>(mxu_operands(a, b)); };
  const auto why = [](DType a, DType b) { return std::get<std::string>(mxu_operands(a, b)); };
  CHECK(ok(DType::int8, DType::int8).compute == DType::int8);
  // Weight-only quantisation: bf16 compute after a dequantise.
  CHECK(ok(DType::bf16, DType::int8).compute == DType::bf16);
  CHECK(ok(DType::bf16, DType::int8).dequantize_b);
  CHECK(ok(DType::bf16, DType::int4).dequantize_b);
  CHECK(ok(DType::int8, DType::int4).compute == DType::int8);
  // Floats of different widths: the wider one's rate, no dequantise.
  CHECK(ok(DType::bf16, DType::fp8_e4m3).compute == DType::bf16);
  CHECK(!ok(DType::bf16, DType::fp8_e4m3).dequantize_b);
  CHECK(ok(DType::fp8_e4m3, DType::fp32).compute == DType::fp32);
  CHECK(ok(DType::fp8_e5m2, DType::fp8_e4m3).compute == DType::fp8_e4m3);
  CHECK_THAT(why(DType::int4, DType::int4), Contains("weight storage type"));
  CHECK_THAT(why(DType::int8, DType::fp8_e4m3), Contains("int8 activations multiply int8 or int4"));
  CHECK_THAT(why(DType::fp8_e4m3, DType::int8), Contains("16- or 32-bit float activations"));
  CHECK_THAT(why(DType::bf16, DType::fp16), Contains("two different 16-bit float formats"));
  CHECK(b_types_for(DType::bf16) == std::vector<std::string>{"int8", "fp8_e4m3", "fp8_e5m2", "bf16", "fp32", "int4"});
}

TEST_CASE("Llama-2-7B weights: W8A16 is half of bf16, W4A16 a quarter, to the byte", "[precision]") {
  using namespace transformer;
  const uint64_t params = 32ull * 202375168 + 2ull * 32000 * 4096;  // 6.738e9, docs/transformers.md
  CHECK(parameter_count(llama7b(DType::bf16)) == params);
  const auto weight_bytes = [](DType w) { return totals(lower(llama7b(w), Phase::prefill, {1, 1})).weight_bytes; };
  // The op list's weights (the LM head but not the embedding table) at each width.
  const uint64_t streamed = params - 32000ull * 4096;
  CHECK(weight_bytes(DType::bf16) == streamed * 2);
  CHECK(weight_bytes(DType::int8) == streamed);
  CHECK(weight_bytes(DType::int4) == streamed / 2);
  // The tiled compiler's HBM layout agrees (every matrix a multiple of 4 KiB at all widths).
  const ChipConfig cfg = v4i();
  const auto footprint = [&](const char* file) {
    return compile_detail::hbm_footprint(cfg, load_workload(kRepo + "/traces/models/" + file, {"1x1", "decode"}));
  };
  const uint64_t bf16 = footprint("llama2-7b.yaml").weights;
  CHECK(bf16 == streamed * 2);
  CHECK(footprint("llama2-7b-w8a16.yaml").weights * 2 == bf16);
}

TEST_CASE("fp8 KV cache: half of bf16, the closed form 2 x layers x kv_heads x head_dim x L x bytes",
          "[precision]") {
  using namespace transformer;
  const int64_t L = 1024;
  const uint64_t values = 2ull * 32 * 32 * 128 * L;
  CHECK(kv_cache_bytes_per_slot(llama7b(DType::bf16), L) == values * 2);
  CHECK(kv_cache_bytes_per_slot(llama7b(DType::bf16, DType::fp8_e4m3), L) == values);
  // Decode of 4 slots streams that much per step, and the compiler lays it out so.
  const Lowered fp8 = lower(llama7b(DType::bf16, DType::fp8_e4m3), Phase::decode, {4, L});
  CHECK(totals(fp8).kv_bytes == 4 * values);
  const ChipConfig cfg = v4i();
  const auto kv = [&](const char* file) {
    return compile_detail::hbm_footprint(cfg, load_workload(kRepo + "/traces/models/" + file, {"4x1024", "decode"}))
        .kv_cache;
  };
  CHECK(kv("llama2-7b.yaml") == 4 * values * 2);
  CHECK(kv("llama2-7b-fp8kv.yaml") == 4 * values);
}

TEST_CASE("W8A16 GEMM: DMA bytes per operand width, one dequantise of K x N per weight load", "[precision]") {
  // tests/data/workload_w8a16.yaml: [128, 512] x [512, 256], one block of rows on tpu-v4i (the
  // weights in a few tiles, each loaded once).
  const int64_t M = 128, K = 512, N = 256;
  const Workload list = load_workload(std::string(SYSTOLIC_TEST_DATA) + "/workload_w8a16.yaml");
  REQUIRE(list.gemms.size() == 2);
  CHECK(list.gemms[0].a_dtype == DType::bf16);
  CHECK(list.gemms[0].b_dtype == DType::int8);
  CHECK(list.gemms[1].a_type(DType::fp32) == DType::bf16);
  CHECK(list.gemms[1].b_type(DType::fp32) == DType::int4);
  Workload w = list;
  w.gemms = {list.gemms[0]};
  const ChipConfig cfg = v4i();
  const Program p = compile(cfg, w);
  const Moved m = moved(p);
  CHECK(m.hbm_read == M * K * 2 + K * N * 1);
  CHECK(m.hbm_written == M * N * 2);
  // Every weight tile loaded is dequantised once: K x N values in all (int8: one per byte).
  CHECK(m.dequantize_ops == m.weight_loads);
  CHECK(m.dequantize_elements == K * N);
  CHECK(m.weight_bytes == K * N);
  CHECK(p.layers[0].dtype == DType::bf16);  // the MXU computes in bf16
  // The VPU does K x N scale multiplies (whole vregs: K and N are multiples of 8 x 128).
  const SimResult r = simulate(cfg, p);
  uint64_t vpu_ops = 0, macs_bf16 = 0;
  for (const auto& e : r.engines) {
    vpu_ops += e.vpu.vreg_ops * static_cast<uint64_t>(cfg.vpu.lanes * cfg.vpu.sublanes);
    macs_bf16 += e.macs_by_dtype[static_cast<size_t>(DType::bf16)];
  }
  CHECK(vpu_ops == K * N);
  CHECK(macs_bf16 == M * K * N);
  CHECK(r.hbm.bytes_read == M * K * 2 + K * N);
  // The weight buffer: the DMA writes K x N int8 bytes, the dequantise reads them and writes
  // K x N bf16 in place, the MXUs read that once (one block of rows).
  CHECK(r.scratchpads[kWeights].bytes_written == K * N + 2 * K * N);
  CHECK(r.scratchpads[kWeights].bytes_read == K * N + 2 * K * N);
  // int4: half a byte per weight from HBM, the same dequantise.
  w.gemms = {list.gemms[1]};
  const Moved m4 = moved(compile(cfg, w));
  CHECK(m4.hbm_read == M * K * 2 + K * N / 2);
  CHECK(m4.dequantize_elements == K * N);
  CHECK(m4.weight_bytes == K * N / 2);
  // Weights read more than once (several blocks of rows or panels): each load dequantised again.
  w.gemms = {gemm(8192, 4096, 4096, DType::bf16, DType::int8)};
  const Moved big = moved(compile(cfg, w));
  CHECK(big.weight_bytes >= 4096ull * 4096);
  CHECK(big.dequantize_elements == big.weight_bytes);
  CHECK(big.dequantize_ops == big.weight_loads);
}

TEST_CASE("MACs do not depend on precision, and fast and exact agree on mixed operands", "[precision]") {
  using namespace transformer;
  for (DType w : {DType::int8, DType::int4}) {
    const Totals base = totals(lower(llama7b(DType::bf16), Phase::decode, {2, 64}));
    const Totals q = totals(lower(llama7b(w, DType::fp8_e4m3), Phase::decode, {2, 64}));
    CHECK(q.matmul_macs == base.matmul_macs);
    CHECK(q.attention_macs == base.attention_macs);
  }
  Workload wl;
  wl.name = "mixed";
  wl.gemms = {gemm(16, 256, 256, DType::bf16, DType::int8), gemm(16, 256, 128, DType::bf16, DType::fp8_e5m2)};
  uint64_t cycles[2] = {0, 0}, macs[2] = {0, 0};
  for (int model = 0; model < 2; ++model) {
    const ChipConfig cfg = v4i({model ? "mxu.model=exact" : "mxu.model=fast", "mxu.rows=16", "mxu.cols=16"});
    const SimResult r = simulate(cfg, compile(cfg, wl));
    cycles[model] = r.total_cycles;
    for (const auto& e : r.engines) macs[model] += e.macs_issued;
  }
  CHECK(cycles[0] == cycles[1]);
  CHECK(macs[0] == 16ull * 256 * 256 + 16ull * 256 * 128);
  CHECK(macs[1] == macs[0]);
}

TEST_CASE("fp8 operands carry their static scale through the trace", "[precision]") {
  Workload w;
  w.name = "fp8";
  w.gemms = {gemm(16, 256, 128, DType::bf16, DType::fp8_e4m3), gemm(16, 128, 128, DType::bf16, DType::int8)};
  w.gemms[0].fp8_scale = 0.5;
  const ChipConfig cfg = v4i();
  const Program p = compile(cfg, w);
  const std::string text = write_trace(p, cfg);
  CHECK_THAT(text, Contains("dtype=bf16 b=fp8_e4m3 b_scale=0.5"));
  CHECK_THAT(text, Contains("kind=dequantize rows=128 cols=128 dtype=int8 to=bf16"));
  const Program back = parse_trace(text, "fp8.trace", cfg).program;
  CHECK(write_trace(back, cfg) == text);
  // A matmul whose types the MXU cannot take as given is rejected, naming the line.
  std::string bad = text;
  bad.replace(bad.find("b=fp8_e4m3"), 10, "b=int8    ");
  CHECK_THROWS_WITH(parse_trace(bad, "bad.trace", cfg), Contains("after a dequantize op"));
}

TEST_CASE("bad precision in files: the key, the line and the allowed types", "[precision]") {
  const std::string base = "name: m\nlayers: 1\nd_model: 64\nheads: 4\nd_ff: 128\nvocab: 100\nnorm: rmsnorm\n"
                           "activation: silu\ngated_ffn: true\npositional: rope\n";
  const auto error = [&](const std::string& extra) {
    try {
      transformer::parse_model(base + extra, "m.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error("weight_dtype: int4\n").empty());
  CHECK_THAT(error("kv_dtype: int4\n"), Contains("m.yaml:11: key 'kv_dtype': int4 with activation_dtype bf16; "
                                                 "expected one of fp8_e4m3, fp8_e5m2, bf16, fp32"));
  CHECK_THAT(error("activation_dtype: int4\n"), Contains("m.yaml:11: key 'activation_dtype': int4 is a weight "
                                                         "storage type; expected one of int8,"));
  CHECK_THAT(error("dtype: int8\nweight_dtype: fp8_e4m3\n"),
             Contains("m.yaml:12: key 'weight_dtype': int8 activations multiply int8 or int4 weights") &&
                 Contains("expected one of int8, int4"));
  // A type inherited from dtype is reported at dtype.
  CHECK_THAT(error("dtype: int4\n"), Contains("m.yaml:11: key 'activation_dtype'"));
  CHECK_THAT(error("fp8_scale: 0\n"), Contains("m.yaml:11: key 'fp8_scale': expected a positive number"));
}

}  // namespace test_precision
