// Transformer models and their lowering (sim/workload/transformer/, docs/transformers.md): presets load,
// op shapes match hand-computed GEMMs, parameter counts match the published sizes, KV cache
// and decode floor, and every bad input is reported with file:line.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "models/common/error.hpp"
#include "sim/workload/transformer/lower.hpp"
#include "sim/workload/transformer/model.hpp"
#include "sim/workload/workload.hpp"

namespace test_transformer {

using namespace systolic;
using namespace systolic::transformer;
using Catch::Contains;
using Catch::StartsWith;
using systolic::testing::kGemms;
using systolic::testing::temp_file;

namespace {

const std::string kModels = std::string(SYSTOLIC_SOURCE_DIR) + "/traces/models";

ModelSpec preset(const std::string& name) { return load_model(kModels + "/" + name + ".yaml"); }

// Weights of one repeated layer (group 0) of a lowered model, from its op list.
uint64_t layer_weights(const Lowered& l) {
  uint64_t layer = 0;
  for (const auto& op : l.ops)
    if (op.group == 0 && op.gemm() && op.gemm()->b == Operand::weights)
      layer += static_cast<uint64_t>(op.gemm()->k) * op.gemm()->n * op.repeat;
  return layer;
}


// The one-line InputError of loading `content` as m.yaml ("" and a failed check if none).
std::string model_error(const std::string& content) {
  const std::string path = temp_file("m.yaml", content);
  try {
    load_model(path);
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK(msg.find('\n') == std::string::npos);
    return msg.substr(path.size() - std::string("m.yaml").size());  // "m.yaml:3: ..."
  }
  FAIL_CHECK("expected an InputError for:\n" << content);
  return "";
}

// A valid Llama-like model; tests replace one line.
const std::string kBase =
    "name: tiny\n"           // 1
    "layers: 2\n"            // 2
    "d_model: 64\n"          // 3
    "heads: 4\n"             // 4
    "kv_heads: 2\n"          // 5
    "head_dim: 16\n"         // 6
    "d_ff: 128\n"            // 7
    "vocab: 1000\n"          // 8
    "norm: rmsnorm\n"        // 9
    "activation: silu\n"     // 10
    "gated_ffn: true\n"      // 11
    "positional: rope\n";    // 12

std::string replace_line(const std::string& text, int line, const std::string& with) {
  size_t begin = 0;
  for (int i = 1; i < line; ++i) begin = text.find('\n', begin) + 1;
  const size_t end = text.find('\n', begin);
  return text.substr(0, begin) + with + text.substr(end);
}

const TfOp& op_named(const Lowered& l, const std::string& group, const std::string& name) {
  for (const auto& op : l.ops)
    if (op.name == name && l.groups[static_cast<size_t>(op.group)].name == group) return op;
  FAIL("no op " << group << "." << name);
  throw std::logic_error("unreachable");
}

void check_gemm(const TfOp& op, int64_t m, int64_t k, int64_t n, int64_t repeat, Operand b) {
  INFO(op.name);
  REQUIRE(op.gemm());
  CHECK(op.gemm()->m == m);
  CHECK(op.gemm()->k == k);
  CHECK(op.gemm()->n == n);
  CHECK(op.repeat == repeat);
  CHECK(op.gemm()->b == b);
}

void check_vector(const TfOp& op, VectorKind kind, int64_t rows, int64_t cols, int64_t repeat = 1) {
  INFO(op.name);
  CHECK(op.repeat == repeat);
  REQUIRE(op.vector());
  CHECK(op.kind == OpKind::vector);
  CHECK(op.vector()->kind == kind);
  CHECK(op.vector()->rows == rows);
  CHECK(op.vector()->cols == cols);
}

}  // namespace

TEST_CASE("buckets are BxS", "[transformer]") {
  CHECK(parse_bucket("4x2048", "--bucket") == packing::Shape{4, 2048});
  CHECK(parse_bucket("1x1", "") == packing::Shape{1, 1});
  for (const char* bad : {"4*2048", "x2048", "4x", "0x16", "4x0", "4x2048x2", "-1x4", "4 x 2048",
                          "4X2048", "", "4", "ax4", "1.5x4", "+4x4"}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse_bucket(bad, "--bucket"),
                      StartsWith(std::string("--bucket: bucket '") + bad + "': expected BxS"));
  }
  CHECK_THROWS_WITH(parse_bucket("5000x16", "b.yaml:3"),
                    StartsWith("b.yaml:3: bucket '5000x16'") && Contains("B = 5000 is more than 4096"));
  CHECK_THROWS_WITH(parse_bucket("1x99999999", "x"), Contains("S = 99999999 is more than"));
  CHECK(kPhaseNames.parse("decode") == Phase::decode);
  CHECK(!kPhaseNames.parse("Decode"));
}

TEST_CASE("every preset loads and lowers", "[transformer]") {
  for (const char* name : {"gpt2", "bert-base", "llama2-7b", "llama2-70b", "llama3-8b", "deepseek-v3-moe"}) {
    INFO(name);
    const ModelSpec m = preset(name);
    CHECK(m.name == name);
    const Lowered p = lower(m, Phase::prefill, {2, 128});
    CHECK(!p.ops.empty());
    CHECK(p.groups.back().name == "head");
    if (m.kind == ModelKind::decoder) CHECK(!lower(m, Phase::decode, {4, 256}).ops.empty());
    int64_t layers = 0;
    for (const auto& g : p.groups)
      if (g.first_layer >= 0) layers += g.count;
    CHECK(layers == m.layers);
  }
}

TEST_CASE("GPT-2 prefill at [1, 1024] matches traces/gemms/gpt2.yaml", "[transformer]") {
  const ModelSpec m = preset("gpt2");
  CHECK(m.head_dim == 64);
  CHECK(m.kv_heads == 12);
  const Lowered l = lower(m, Phase::prefill, {1, 1024});
  const Workload ref = load_workload(kGemms + "/gpt2.yaml");
  REQUIRE(l.groups.size() == 3);
  CHECK(l.groups[0].name == "embed");
  CHECK(l.groups[1].name == "layer");
  CHECK(l.groups[1].count == 12);
  std::vector<const TfOp*> layer_gemms;
  for (const auto& op : l.ops)
    if (op.group == 1 && op.gemm()) layer_gemms.push_back(&op);
  REQUIRE(layer_gemms.size() == ref.gemms.size());
  for (size_t i = 0; i < ref.gemms.size(); ++i) {
    INFO(ref.gemms[i].name);
    CHECK(layer_gemms[i]->name == ref.gemms[i].name);
    check_gemm(*layer_gemms[i], ref.gemms[i].m, ref.gemms[i].k, ref.gemms[i].n,
               ref.gemms[i].repeat,
               layer_gemms[i]->kind == OpKind::attention ? Operand::activations : Operand::weights);
  }
  // The vector work of a layer, in order.
  std::vector<std::string> vectors;
  for (const auto& op : l.ops)
    if (op.group == 1 && op.vector()) vectors.push_back(op.name);
  CHECK(vectors == std::vector<std::string>{"attn_norm", "softmax", "attn_residual", "ffn_norm",
                                            "ffn_act", "ffn_residual"});
  check_vector(op_named(l, "layer", "softmax"), VectorKind::softmax, 1024, 1024, 12);  // per head
  check_vector(op_named(l, "layer", "ffn_act"), VectorKind::gelu, 1024, 3072);
  check_vector(op_named(l, "layer", "attn_norm"), VectorKind::layernorm, 1024, 768);
  check_vector(op_named(l, "embed", "pos_embed_add"), VectorKind::add, 1024, 768);
  // LM head: only the last token by default, every token on request.
  check_gemm(op_named(l, "head", "lm_head"), 1, 768, 50257, 1, Operand::weights);
  LowerOptions all;
  all.all_logits = true;
  check_gemm(op_named(lower(m, Phase::prefill, {1, 1024}, all), "head", "lm_head"), 1024, 768,
             50257, 1, Operand::weights);
  // 8.86 G multiply-adds per layer (docs/workloads.md).
  const Totals t = totals(l);
  CHECK(t.attention_macs == 12 * 2 * 12ull * 1024 * 64 * 1024);
  CHECK(t.matmul_macs == 12 * (1024ull * 768 * (2304 + 768 + 2 * 3072)) + 768ull * 50257);
  CHECK(t.kv_bytes == 0);
  // As a workload: layer by layer (12 x 5 GEMMs, then the LM head), each attention GEMM one
  // instance per head, every vector op after the GEMM it reads.
  WorkloadOptions options;
  options.bucket = "1x1024";
  const Workload w = load_workload(kModels + "/gpt2.yaml", options);
  REQUIRE(w.gemms.size() == 12 * 6 + 1);
  CHECK(w.gemms[0].name == "layer.qkv_proj");
  CHECK(w.gemms[1].name == "layer.attn_scores");
  CHECK(w.gemms[1].repeat == 12);
  CHECK(w.gemms[0].repeat == 1);
  CHECK(w.gemms[6].name == "layer.qkv_proj");  // the second layer
  CHECK(w.gemms[72].name == "head.lm_head");
  CHECK(w.gemms[0].dtype == DType::bf16);
  for (size_t i = 1; i < w.vectors.size(); ++i) CHECK(w.vectors[i - 1].after_gemms <= w.vectors[i].after_gemms);
  CHECK(w.vectors.back().after_gemms == 72);  // the final norm, before the LM head
  CHECK(parameter_count(m) == 124318464);  // 124 M
}

TEST_CASE("Llama-2-7B: 6.74 G parameters from the op list", "[transformer]") {
  const ModelSpec m = preset("llama2-7b");
  const Lowered l = lower(m, Phase::prefill, {1, 2048});
  const uint64_t layer = layer_weights(l);
  CHECK(layer == 4ull * 4096 * 4096 + 3ull * 4096 * 11008);  // 202.4 M
  const uint64_t params = layer * 32 + 2ull * 32000 * 4096;  // + embeddings and LM head
  CHECK(params == 6738149376ull);
  CHECK(static_cast<double>(params) == Approx(6.74e9).epsilon(0.001));
  CHECK(parameter_count(m) == params);
  // Gated FFN: gate, up, silu, mul, down; rope on queries and keys.
  check_gemm(op_named(l, "layer", "qkv_proj"), 2048, 4096, 3 * 4096, 1, Operand::weights);
  check_vector(op_named(l, "layer", "rope"), VectorKind::rope, 2048, 2 * 4096);
  check_gemm(op_named(l, "layer", "ffn_gate"), 2048, 4096, 11008, 1, Operand::weights);
  check_gemm(op_named(l, "layer", "ffn_up"), 2048, 4096, 11008, 1, Operand::weights);
  check_vector(op_named(l, "layer", "ffn_act"), VectorKind::silu, 2048, 11008);
  check_vector(op_named(l, "layer", "ffn_mul"), VectorKind::mul, 2048, 11008);
  check_gemm(op_named(l, "layer", "ffn_down"), 2048, 11008, 4096, 1, Operand::weights);
  check_gemm(op_named(l, "layer", "attn_scores"), 2048, 128, 2048, 32, Operand::activations);
  check_gemm(op_named(l, "layer", "attn_context"), 2048, 2048, 128, 32, Operand::activations);
}

TEST_CASE("Llama-2-7B decode: 2 GiB of KV per slot at L = 4096 and the memory floor",
          "[transformer]") {
  const ModelSpec m = preset("llama2-7b");
  CHECK(kv_cache_bytes_per_slot(m, 4096) == 2ull * 32 * 32 * 128 * 4096 * 2);
  CHECK(kv_cache_bytes_per_slot(m, 4096) == 2ull << 30);
  const Lowered l = lower(m, Phase::decode, {4, 4096});
  check_gemm(op_named(l, "layer", "qkv_proj"), 4, 4096, 3 * 4096, 1, Operand::weights);
  check_gemm(op_named(l, "layer", "attn_scores"), 1, 128, 4096, 4 * 32, Operand::kv_cache);
  check_gemm(op_named(l, "layer", "attn_context"), 1, 4096, 128, 4 * 32, Operand::kv_cache);
  check_vector(op_named(l, "layer", "softmax"), VectorKind::softmax, 1, 4096, 4 * 32);
  check_vector(op_named(l, "layer", "attn_norm"), VectorKind::rmsnorm, 4, 4096);
  check_gemm(op_named(l, "head", "lm_head"), 4, 4096, 32000, 1, Operand::weights);
  // Weights streamed once per step (embedding table excluded: a lookup reads B rows).
  const uint64_t weight_bytes = (32ull * 202375168 + 32000ull * 4096) * 2;
  const MemoryFloor f = memory_floor(l, 614.4e9);
  CHECK(f.weight_bytes == weight_bytes);
  CHECK(f.kv_bytes == 4 * (2ull << 30));
  CHECK(f.seconds == Approx(static_cast<double>(weight_bytes + 4 * (2ull << 30)) / 614.4e9));
  // B = 1: 13.2 GB + 2.1 GB over 614.4 GB/s = 25.0 ms per token.
  const MemoryFloor one = memory_floor(lower(m, Phase::decode, {1, 4096}), 614.4e9);
  CHECK(one.seconds == Approx(0.02500).epsilon(0.002));
  // Decode is memory-bound on tpu-v4i: ~1 multiply-add per weight byte read, far below the
  // chip's 138e12 / 2 / 614e9 = 112 MAC per byte.
  const Totals t = totals(lower(m, Phase::decode, {1, 4096}));
  const double macs_per_byte = static_cast<double>(t.matmul_macs + t.attention_macs) /
                               static_cast<double>(t.weight_bytes + t.kv_bytes);
  CHECK(macs_per_byte < 1.0);
}

TEST_CASE("Llama-2-70B: grouped-query attention shapes", "[transformer]") {
  const ModelSpec m = preset("llama2-70b");
  CHECK(m.kv_heads == 8);
  const Lowered p = lower(m, Phase::prefill, {2, 1024});
  // K and V have kv_heads * head_dim = 1024 columns each.
  check_gemm(op_named(p, "layer", "qkv_proj"), 2048, 8192, (64 + 2 * 8) * 128, 1, Operand::weights);
  check_gemm(op_named(p, "layer", "attn_scores"), 1024, 128, 1024, 2 * 64, Operand::activations);
  check_gemm(op_named(p, "layer", "out_proj"), 2048, 8192, 8192, 1, Operand::weights);
  check_vector(op_named(p, "layer", "rope"), VectorKind::rope, 2048, (64 + 8) * 128);
  // Decode: the 8 query heads of each KV head share one read of its cache.
  const Lowered d = lower(m, Phase::decode, {3, 2000});
  check_gemm(op_named(d, "layer", "attn_scores"), 8, 128, 2000, 3 * 8, Operand::kv_cache);
  check_gemm(op_named(d, "layer", "attn_context"), 8, 2000, 128, 3 * 8, Operand::kv_cache);
  check_vector(op_named(d, "layer", "softmax"), VectorKind::softmax, 8, 2000, 3 * 8);
  CHECK(kv_cache_bytes_per_slot(m, 1) == 2 * 80 * 8 * 128 * 2);  // 320 KiB per token
  CHECK(totals(d).kv_bytes == 3 * kv_cache_bytes_per_slot(m, 2000));
  CHECK(parameter_count(m) == 68975329280ull);  // 69.0 G
}

TEST_CASE("Llama-3-8B: 8.03 G parameters from the op list, 128 KiB of KV per token", "[transformer]") {
  const ModelSpec m = preset("llama3-8b");
  const Lowered l = lower(m, Phase::prefill, {1, 2048});
  const uint64_t layer = layer_weights(l);
  // QKV 4096 -> (32 + 2 x 8) x 128, out 4096 x 4096, SwiGLU 3 x 4096 x 14336: 218.1 M.
  CHECK(layer == 4096ull * 6144 + 4096ull * 4096 + 3ull * 4096 * 14336);
  const uint64_t params = layer * 32 + 2ull * 128256 * 4096;  // + embeddings and LM head
  CHECK(params == 8029995008ull);
  CHECK(static_cast<double>(params) == Approx(8.03e9).epsilon(0.001));  // Meta: 8.03 B
  CHECK(parameter_count(m) == params);
  check_gemm(op_named(l, "layer", "qkv_proj"), 2048, 4096, 6144, 1, Operand::weights);
  check_gemm(op_named(l, "layer", "ffn_down"), 2048, 14336, 4096, 1, Operand::weights);
  check_gemm(op_named(l, "head", "lm_head"), 1, 4096, 128256, 1, Operand::weights);
  CHECK(kv_cache_bytes_per_slot(m, 1) == 2 * 32 * 8 * 128 * 2);  // 131,072 B per token
  // traces/buckets/llama3-8k.yaml: each decode pool holds 32768 tokens, 4.29 GB of KV; with
  // int8 weights (8.03 GB) that fits 16 GiB with 4.86 GB to spare.
  CHECK(kv_cache_bytes_per_slot(m, 2048) * 16 == 4294967296ull);
  CHECK(params + kv_cache_bytes_per_slot(m, 2048) * 16 < 16ull * 1024 * 1024 * 1024);
}

TEST_CASE("DeepSeek-V3-like MoE: expert, shared expert and MLA shapes", "[transformer]") {
  const ModelSpec m = preset("deepseek-v3-moe");
  REQUIRE(m.moe);
  REQUIRE(m.mla);
  CHECK(m.attention_dim == 128 * 128);
  CHECK(m.kv_heads == 128);
  const Lowered p = lower(m, Phase::prefill, {1, 4096});
  REQUIRE(p.groups.size() == 3);
  CHECK(p.groups[0].name == "dense_layer");
  CHECK(p.groups[0].count == 3);
  CHECK(p.groups[1].name == "moe_layer");
  CHECK(p.groups[1].count == 58);
  CHECK(p.groups[1].first_layer == 3);
  // Dense layers: an 18432-wide SwiGLU FFN.
  check_gemm(op_named(p, "dense_layer", "ffn_gate"), 4096, 7168, 18432, 1, Operand::weights);
  // 4096 tokens x top-8 over 256 experts: 128 tokens per expert.
  check_gemm(op_named(p, "moe_layer", "router"), 4096, 7168, 256, 1, Operand::weights);
  check_vector(op_named(p, "moe_layer", "router_softmax"), VectorKind::softmax, 4096, 256);
  check_gemm(op_named(p, "moe_layer", "expert_gate"), 128, 7168, 2048, 256, Operand::weights);
  check_gemm(op_named(p, "moe_layer", "expert_up"), 128, 7168, 2048, 256, Operand::weights);
  check_vector(op_named(p, "moe_layer", "expert_act"), VectorKind::silu, 256 * 128, 2048);
  check_gemm(op_named(p, "moe_layer", "expert_down"), 128, 2048, 7168, 256, Operand::weights);
  check_gemm(op_named(p, "moe_layer", "shared_gate"), 4096, 7168, 2048, 1, Operand::weights);
  check_gemm(op_named(p, "moe_layer", "shared_down"), 4096, 2048, 7168, 1, Operand::weights);
  check_vector(op_named(p, "moe_layer", "moe_combine"), VectorKind::add, 4096 * 8, 7168);
  // MLA prefill (naive form).
  check_gemm(op_named(p, "moe_layer", "q_down"), 4096, 7168, 1536, 1, Operand::weights);
  check_gemm(op_named(p, "moe_layer", "q_up"), 4096, 1536, 128 * 192, 1, Operand::weights);
  check_gemm(op_named(p, "moe_layer", "kv_down"), 4096, 7168, 576, 1, Operand::weights);
  check_gemm(op_named(p, "moe_layer", "kv_up"), 4096, 512, 128 * 256, 1, Operand::weights);
  check_gemm(op_named(p, "moe_layer", "attn_scores"), 4096, 192, 4096, 128, Operand::activations);
  check_gemm(op_named(p, "moe_layer", "attn_context"), 4096, 4096, 128, 128, Operand::activations);
  check_gemm(op_named(p, "moe_layer", "out_proj"), 4096, 16384, 7168, 1, Operand::weights);
  // 671 G parameters (MTP module excluded).
  CHECK(parameter_count(m) == 671025397760ull);
  CHECK(static_cast<double>(parameter_count(m)) == Approx(671e9).epsilon(0.001));

  // Decode with one slot: 8 experts get one token each; absorbed MLA over the latent cache.
  const Lowered d = lower(m, Phase::decode, {1, 4096});
  check_gemm(op_named(d, "moe_layer", "expert_gate"), 1, 7168, 2048, 8, Operand::weights);
  check_gemm(op_named(d, "moe_layer", "q_absorb"), 1, 128, 512, 128, Operand::weights);
  check_gemm(op_named(d, "moe_layer", "attn_scores"), 128, 576, 4096, 1, Operand::kv_cache);
  const TfOp& ctx = op_named(d, "moe_layer", "attn_context");
  check_gemm(ctx, 128, 4096, 512, 1, Operand::kv_cache);
  CHECK(ctx.gemm()->b_reused);
  CHECK(ctx.gemm()->hbm_bytes(Precision{}) == 0);
  check_gemm(op_named(d, "moe_layer", "v_up"), 1, 512, 128, 128, Operand::weights);
  CHECK(kv_cache_bytes_per_slot(m, 4096) == 61ull * 576 * 4096 * 2);
  CHECK(totals(d).kv_bytes == kv_cache_bytes_per_slot(m, 4096));
  // Active parameters per token: ~37 G (dense weights + 8 routed + 1 shared expert).
  CHECK(static_cast<double>(weight_elements(d)) == Approx(37.0e9).epsilon(0.03));
  // 64 slots x top-8 = 512 assignments: 2 tokens for each of the 256 experts.
  check_gemm(op_named(lower(m, Phase::decode, {64, 128}), "moe_layer", "expert_up"), 2, 7168,
             2048, 256, Operand::weights);
  // Uneven: 5 tokens x 8 = 40 assignments over 40 experts; 40 tokens -> 320 over 256: 2 each.
  check_gemm(op_named(lower(m, Phase::decode, {5, 128}), "moe_layer", "expert_up"), 1, 7168,
             2048, 40, Operand::weights);
  check_gemm(op_named(lower(m, Phase::decode, {40, 128}), "moe_layer", "expert_up"), 2, 7168,
             2048, 256, Operand::weights);
  // ... of those 512 rows, 320 carry tokens: the rest pads the static shape (useful MACs).
  CHECK(op_named(lower(m, Phase::decode, {40, 128}), "moe_layer", "expert_up").gemm()->useful_rows == 320);
  CHECK(op_named(lower(m, Phase::decode, {64, 128}), "moe_layer", "expert_up").gemm()->useful_rows == -1);
}

TEST_CASE("BERT is an encoder: every token's logits, no decode", "[transformer]") {
  const ModelSpec m = preset("bert-base");
  CHECK(m.kind == ModelKind::encoder);
  const Lowered l = lower(m, Phase::prefill, {8, 512});
  check_gemm(op_named(l, "head", "lm_head"), 8 * 512, 768, 30522, 1, Operand::weights);
  CHECK(parameter_count(m) == 108768768);  // 110 M with the parts not modelled
  CHECK_THROWS_WITH(lower(m, Phase::decode, {1, 128}),
                    Contains("'bert-base' is an encoder") && Contains("no decode phase"));
  CHECK_THROWS_WITH(lower(m, Phase::prefill, {1, 1024}),
                    Contains("sequence length S = 1024 is more than the model's max_seq = 512") &&
                        Contains("bert-base.yaml:"));
}

TEST_CASE("model files: every bad input names file:line and what was expected",
          "[transformer]") {
  // Inconsistent dimensions.
  CHECK(model_error(replace_line(kBase, 6, "head_dim: 32")) ==
        "m.yaml:6: key 'head_dim': heads x head_dim = 4 x 32 = 128, expected d_model = 64 (if "
        "the attention really is wider or narrower than d_model, as in DeepSeek-V3, declare "
        "attention_dim: 128)");
  CHECK(model_error(kBase + "attention_dim: 128\n") ==
        "m.yaml:6: key 'head_dim': heads x head_dim = 4 x 16 = 64, expected attention_dim = 128");
  CHECK(model_error(replace_line(kBase, 5, "kv_heads: 3")) ==
        "m.yaml:5: key 'kv_heads': 3 does not divide heads = 4 (each KV head serves heads / "
        "kv_heads query heads); expected a divisor of 4");
  CHECK_THAT(model_error(replace_line(kBase, 5, "kv_heads: 8")),
             StartsWith("m.yaml:5: key 'kv_heads': 8 does not divide heads = 4"));
  CHECK(model_error(replace_line(kBase, 2, "layers: 0")) ==
        "m.yaml:2: key 'layers': expected an integer in [1, 65536] (number of layers), got '0'");
  CHECK(model_error(replace_line(replace_line(kBase, 3, "d_model: 66"), 6, "#")) ==
        "m.yaml:4: key 'heads': d_model = 66 is not a multiple of heads = 4; give head_dim");
  CHECK_THAT(model_error(replace_line(kBase, 3, "d_model: -64")),
             StartsWith("m.yaml:3: key 'd_model': expected an integer in [1, 16777216]"));
  CHECK(model_error(replace_line(kBase, 2, "layers: '2'")) ==
        "m.yaml:2: key 'layers': expected an integer in [1, 65536] (number of layers), got the "
        "string '2'");
  // Keys and values.
  CHECK_THAT(model_error(replace_line(kBase, 6, "head_dims: 16")),
             StartsWith("m.yaml:6: unknown key 'head_dims' (did you mean 'head_dim'?); allowed: "
                        "name, kind, layers,"));
  CHECK(model_error(kBase + "dtype: bf61\n") ==
        "m.yaml:13: key 'dtype': expected one of int8, fp8_e4m3, fp8_e5m2, bf16, fp16, fp32, int4, got "
        "'bf61' (did you mean 'bf16'?)");
  CHECK(model_error(replace_line(kBase, 11, "gated_ffn: yes")) ==
        "m.yaml:11: key 'gated_ffn': expected true or false, got 'yes'");
  CHECK(model_error(replace_line(kBase, 9, "norm: rmsnrom")) ==
        "m.yaml:9: key 'norm': expected one of rmsnorm, layernorm, got 'rmsnrom' (did you mean "
        "'rmsnorm'?)");
  CHECK_THAT(model_error(kBase + "kind: decodr\n"),
             StartsWith("m.yaml:13: key 'kind': expected one of decoder, encoder, got 'decodr' "
                        "(did you mean 'decoder'?)"));
  CHECK_THAT(model_error(replace_line(kBase, 8, "#")),
             StartsWith("m.yaml:1: missing key 'vocab' (required: layers, d_model, heads, vocab,"));
  CHECK(model_error(replace_line(kBase, 7, "#")) == "m.yaml:1: missing key 'd_ff' (the FFN width)");
  CHECK(model_error(kBase + "layers: 3\n") == "m.yaml:13: duplicate key 'layers' (first on line 2)");
  CHECK(model_error(replace_line(kBase, 12, "positional: learned")) ==
        "m.yaml:12: key 'positional': learned positions need max_seq (the size of the position "
        "table)");
  // MoE.
  CHECK(model_error(kBase + "moe: {experts: 4, top_k: 8, expert_ff: 32}\n") ==
        "m.yaml:13: key 'moe.top_k': 8 is more than moe.experts = 4; expected an integer in [1, 4]");
  CHECK(model_error(kBase + "moe:\n  experts: 4\n  top_k: 2\n  expert_ff: 32\n  dense_layers: 2\n") ==
        "m.yaml:17: key 'moe.dense_layers': 2 leaves no MoE layer of layers = 2; expected an "
        "integer in [0, 1]");
  CHECK_THAT(model_error(kBase + "moe:\n  experts: 4\n  topk: 2\n"),
             StartsWith("m.yaml:15: unknown key 'topk' in 'moe' (did you mean 'top_k'?)"));
  CHECK(model_error(kBase + "moe:\n  experts: 4\n  top_k: 2\n") ==
        "m.yaml:13: key 'moe': missing key 'expert_ff' (required: experts, top_k, expert_ff)");
  CHECK(model_error(replace_line(kBase, 7, "#") +
                    "moe: {experts: 4, top_k: 2, expert_ff: 32, dense_layers: 1}\n") ==
        "m.yaml:1: missing key 'd_ff' (the dense FFN width of the first moe.dense_layers = 1 "
        "layers)");
  CHECK_THAT(model_error(kBase + "moe: 4\n"),
             StartsWith("m.yaml:13: key 'moe': expected a map with keys experts, top_k,"));
  // MLA.
  CHECK_THAT(model_error(kBase + "mla: {kv_lora_rank: 32}\n"),
             StartsWith("m.yaml:5: key 'kv_heads': 2 with mla"));
  // Not a model at all.
  CHECK_THAT(model_error(""), StartsWith("m.yaml: empty file"));
  CHECK_THAT(model_error("- a\n- b\n"), StartsWith("m.yaml:1: expected a map of model dimensions"));
  CHECK_THAT(model_error("layers: [2\n"), StartsWith("m.yaml:") && Contains("malformed YAML"));
  CHECK_THROWS_WITH(load_model("/nonexistent/m.yaml"), "/nonexistent/m.yaml: cannot open model file");
}

TEST_CASE("models built in code are validated like files", "[transformer]") {
  ModelSpec m = preset("llama2-70b");
  m.kv_heads = 7;
  CHECK_THROWS_WITH(validate_model(m), StartsWith("model 'llama2-70b': key 'kv_heads': 7 does not divide heads = 64"));
  CHECK_THROWS_WITH(lower(m, Phase::prefill, {1, 16}), Contains("kv_heads"));
  m = preset("llama2-70b");
  m.layers = 0;
  CHECK_THROWS_WITH(validate_model(m), "model 'llama2-70b': key 'layers': expected an integer in [1, 65536], got 0");
  m = preset("llama2-70b");
  CHECK_THROWS_WITH(lower(m, Phase::decode, {1, 5000}),
                    Contains("KV length L = 5000 is more than the model's max_seq = 4096"));
  CHECK_THROWS_WITH(lower(m, Phase::decode, {0, 16}), Contains("expected B in [1, 4096]"));
}

TEST_CASE("model files: the base file is valid", "[transformer]") {
  const ModelSpec m = load_model(temp_file("ok.yaml", kBase));
  CHECK(m.name == "tiny");
  CHECK(m.kv_heads == 2);
  CHECK(m.attention_dim == 64);
  CHECK(!m.moe);
  const Lowered l = lower(m, Phase::decode, {2, 10});
  check_gemm(op_named(l, "layer", "attn_scores"), 2, 16, 10, 2 * 2, Operand::kv_cache);
  // Defaults: kv_heads = heads, head_dim = d_model / heads.
  const std::string plain = replace_line(replace_line(kBase, 5, "#"), 6, "#");
  const ModelSpec p = parse_model(plain, "p.yaml");
  CHECK(p.kv_heads == 4);
  CHECK(p.head_dim == 16);
  CHECK(p.precision.weights == DType::bf16);
  CHECK(p.precision.activations == DType::bf16);
  CHECK(p.precision.kv_cache == DType::bf16);
}

}  // namespace test_transformer
