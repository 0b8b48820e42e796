// Lowering a transformer to matmul, attention and vector ops (docs/transformers.md,
// "Lowering"). Shapes: T = B*S tokens in prefill, B tokens (one per slot) in decode;
// d = d_model, H = heads, KV = kv_heads, hd = head_dim, G = H / KV.
#include "sim/workload/transformer/lower.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "models/common/divide.hpp"
#include "models/common/error.hpp"

namespace systolic::transformer {
namespace {

using u128 = unsigned __int128;

std::optional<int64_t> parse_positive(std::string_view text) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value <= 0) return std::nullopt;
  return value;
}

// Builds one group's ops.
class Builder {
 public:
  explicit Builder(Lowered& out) : out_(out) {}

  void group(std::string name, int64_t count, int64_t first_layer) {
    out_.groups.push_back({std::move(name), count, first_layer});
  }
  void matmul(std::string name, OpRole role, int64_t m, int64_t k, int64_t n, int64_t repeat = 1) {
    gemm(std::move(name), OpKind::matmul, role, {m, k, n, Operand::weights, false}, repeat);
  }
  void attention(std::string name, int64_t m, int64_t k, int64_t n, Operand b, int64_t repeat,
                 bool reused = false, int64_t b_group = 1) {
    GemmShape shape{m, k, n, b, reused};
    shape.b_group = b_group;
    gemm(std::move(name), OpKind::attention, OpRole::attention, shape, repeat);
  }
  void vector(std::string name, OpRole role, VectorKind kind, int64_t rows, int64_t cols, int64_t repeat = 1) {
    TfOp op;
    op.name = std::move(name);
    op.kind = OpKind::vector;
    op.role = role;
    op.shape = VectorShape{kind, rows, cols};
    op.repeat = repeat;
    op.group = static_cast<int>(out_.groups.size()) - 1;
    out_.ops.push_back(std::move(op));
  }

  size_t op_count() const { return out_.ops.size(); }
  // Marks the matmuls from ops[first] on as padded: `rows` of their m x repeat carry tokens.
  void set_useful_rows(size_t first, int64_t rows) {
    for (size_t i = first; i < out_.ops.size(); ++i)
      if (auto* g = std::get_if<GemmShape>(&out_.ops[i].shape)) g->useful_rows = rows;
  }

 private:
  void gemm(std::string name, OpKind kind, OpRole role, GemmShape shape, int64_t repeat) {
    TfOp op;
    op.name = std::move(name);
    op.kind = kind;
    op.role = role;
    op.shape = shape;
    op.repeat = repeat;
    op.group = static_cast<int>(out_.groups.size()) - 1;
    out_.ops.push_back(std::move(op));
  }
  Lowered& out_;
};

VectorKind norm_kind(const ModelSpec& m) {
  return m.norm == NormKind::rmsnorm ? VectorKind::rmsnorm : VectorKind::layernorm;
}

VectorKind act_kind(const ModelSpec& m) {
  switch (m.activation) {
    case Activation::silu: return VectorKind::silu;
    case Activation::gelu: return VectorKind::gelu;
    case Activation::relu: return VectorKind::relu;
  }
  return VectorKind::silu;
}

// An FFN of width `ff` on `rows` tokens, `repeat` independent copies (experts), of which
// `useful_rows` in all carry tokens (-1: every row).
// Gated: gate and up (d -> ff), act(gate) * up, down (ff -> d). Plain: up, act, down.
void ffn(Builder& b, const ModelSpec& m, const std::string& prefix, FfnRoles roles, int64_t rows, int64_t ff,
         int64_t repeat, int64_t useful_rows = -1) {
  const int64_t d = m.d_model;
  const size_t first = b.op_count();
  if (m.gated_ffn) {
    b.matmul(prefix + "_gate", roles.in, rows, d, ff, repeat);
    b.matmul(prefix + "_up", roles.in, rows, d, ff, repeat);
    b.vector(prefix + "_act", roles.vector, act_kind(m), rows * repeat, ff);
    b.vector(prefix + "_mul", roles.vector, VectorKind::mul, rows * repeat, ff);
  } else {
    b.matmul(prefix + "_up", roles.in, rows, d, ff, repeat);
    b.vector(prefix + "_act", roles.vector, act_kind(m), rows * repeat, ff);
  }
  b.matmul(prefix + "_down", roles.out, rows, ff, d, repeat);
  if (useful_rows >= 0 && useful_rows < rows * repeat) b.set_useful_rows(first, useful_rows);
}

// Attention of one layer. T tokens (prefill: B sequences of S; decode: B slots at KV length L).
void attention(Builder& b, const ModelSpec& m, Phase phase, int64_t batch, int64_t len) {
  const int64_t d = m.d_model, H = m.heads, KV = m.kv_heads, hd = m.head_dim;
  const bool prefill = phase == Phase::prefill;
  const int64_t T = prefill ? batch * len : batch;
  const bool rope = m.positional == Positional::rope;
  if (!m.mla) {
    b.matmul("qkv_proj", OpRole::head_proj, T, d, (H + 2 * KV) * hd);
    if (rope) b.vector("rope", OpRole::rope, VectorKind::rope, T, (H + KV) * hd);
    if (prefill) {
      // Every query head against its KV group's keys: the full S x S rectangle. The G = H / KV
      // heads of a group read the same K and V.
      const int64_t G = H / KV;
      b.attention("attn_scores", len, hd, len, Operand::activations, batch * H, false, G);
      b.vector("softmax", OpRole::attention, VectorKind::softmax, len, len, batch * H);  // per head: it overlaps the next head's scores
      b.attention("attn_context", len, len, hd, Operand::activations, batch * H, false, G);
    } else {
      // Per slot and KV head, the G query heads sharing it read the cached K and V.
      const int64_t G = H / KV;
      b.attention("attn_scores", G, hd, len, Operand::kv_cache, batch * KV);
      b.vector("softmax", OpRole::attention, VectorKind::softmax, G, len, batch * KV);
      b.attention("attn_context", G, len, hd, Operand::kv_cache, batch * KV);
    }
    b.matmul("out_proj", OpRole::out_proj, T, H * hd, d);
    return;
  }
  // Multi-head latent attention (DeepSeek-V2/V3).
  const MlaSpec& a = *m.mla;
  const int64_t rd = a.rope_head_dim, vd = a.v_head_dim, c = a.kv_lora_rank;
  if (a.q_lora_rank > 0) {
    b.matmul("q_down", OpRole::latent_proj, T, d, a.q_lora_rank);
    b.vector("q_norm", OpRole::latent_proj, VectorKind::rmsnorm, T, a.q_lora_rank);
    b.matmul("q_up", OpRole::head_proj, T, a.q_lora_rank, H * (hd + rd));
  } else {
    b.matmul("q_proj", OpRole::head_proj, T, d, H * (hd + rd));
  }
  b.matmul("kv_down", OpRole::latent_proj, T, d, c + rd);
  b.vector("kv_norm", OpRole::latent_proj, VectorKind::rmsnorm, T, c);
  if (rd > 0) b.vector("rope", OpRole::rope, VectorKind::rope, T, (H + 1) * rd);
  if (prefill) {
    // Naive form: expand the latent to per-head keys and values, then standard attention.
    b.matmul("kv_up", OpRole::head_proj, T, c, H * (hd + vd));
    b.attention("attn_scores", len, hd + rd, len, Operand::activations, batch * H);
    b.vector("softmax", OpRole::attention, VectorKind::softmax, len, len, batch * H);
    b.attention("attn_context", len, len, vd, Operand::activations, batch * H);
  } else {
    // Absorbed form: queries move into the latent space (per head, W_uk), all H heads of a
    // slot attend to its latent cache [L, c + rd] like one shared KV head, and the context
    // leaves the latent space per head (W_uv).
    b.matmul("q_absorb", OpRole::per_head_latent, T, hd, c, H);
    b.attention("attn_scores", H, c + rd, len, Operand::kv_cache, batch);
    b.vector("softmax", OpRole::attention, VectorKind::softmax, H, len, batch);
    b.attention("attn_context", H, len, c, Operand::kv_cache, batch, /*reused=*/true);
    b.matmul("v_up", OpRole::per_head_latent, T, c, vd, H);
  }
  b.matmul("out_proj", OpRole::out_proj, T, H * vd, d);
}

void layer(Builder& b, const ModelSpec& m, Phase phase, int64_t batch, int64_t len, bool moe) {
  const int64_t d = m.d_model;
  const int64_t T = phase == Phase::prefill ? batch * len : batch;
  b.vector("attn_norm", OpRole::attn_norm, norm_kind(m), T, d);
  attention(b, m, phase, batch, len);
  b.vector("attn_residual", OpRole::attn_residual, VectorKind::add, T, d);
  b.vector("ffn_norm", OpRole::ffn_norm, norm_kind(m), T, d);
  if (!moe) {
    ffn(b, m, "ffn", kDenseFfn, T, m.d_ff, 1);
  } else {
    const MoeSpec& e = *m.moe;
    // Uniform routing: T * top_k token-expert assignments spread evenly over the experts;
    // with fewer assignments than experts, that many experts get one token each. Each
    // active expert runs ceil(assignments / active) tokens (static shapes pad to it).
    const int64_t assignments = T * e.top_k;
    const int64_t active = std::min(e.experts, assignments);
    const int64_t per_expert = ceil_div(assignments, active);
    b.matmul("router", OpRole::router, T, d, e.experts);
    b.vector("router_softmax", OpRole::router_softmax, VectorKind::softmax, T, e.experts);
    // The shared experts first: they need no routing, so with expert parallelism they run
    // while the dispatch moves the routed tokens (sim/workload/transformer/shard.cpp).
    if (e.shared_experts > 0) ffn(b, m, "shared", kSharedFfn, T, e.shared_experts * e.expert_ff, 1);
    ffn(b, m, "expert", kExpertFfn, per_expert, e.expert_ff, active, assignments);
    b.vector("moe_weight", OpRole::moe_weight, VectorKind::mul, assignments, d);
    b.vector("moe_combine", OpRole::moe_combine, VectorKind::add, assignments, d);
  }
  b.vector("ffn_residual", OpRole::ffn_residual, VectorKind::add, T, d);
}

void check_fits(const Lowered& l, const ModelSpec& m) {
  for (const auto& op : l.ops) {
    const int64_t count = l.groups[static_cast<size_t>(op.group)].count;
    u128 product = static_cast<u128>(op.repeat) * static_cast<u128>(count);
    if (const auto* g = op.gemm())
      product *= static_cast<u128>(g->m) * static_cast<u128>(g->k) * static_cast<u128>(g->n);
    else
      product *= static_cast<u128>(op.vector()->rows) * static_cast<u128>(op.vector()->cols);
    if (product > static_cast<u128>(INT64_MAX))
      throw InputError(fmt::format(
          "model '{}' at {} [{}, {}]: op '{}' has more than 2^63 multiply-adds or elements; "
          "expected a smaller bucket",
          m.name, kPhaseNames.name(l.phase), l.batch, l.length, op.name));
  }
}

uint64_t saturating(u128 v) {
  if (v > static_cast<u128>(UINT64_MAX)) throw std::overflow_error("transformer totals exceed 64 bits");
  return static_cast<uint64_t>(v);
}

}  // namespace

packing::Shape parse_bucket(std::string_view text, const std::string& where) {
  const std::string prefix = where.empty() ? "" : where + ": ";
  const auto bad = [&](const std::string& why) -> InputError {
    return InputError(fmt::format("{}bucket '{}': expected BxS, two positive integers joined by "
                                  "'x' (B sequences or slots, S tokens or KV length), e.g. "
                                  "4x2048{}",
                                  prefix, text, why.empty() ? "" : "; " + why));
  };
  const size_t x = text.find('x');
  if (x == std::string_view::npos || text.find('x', x + 1) != std::string_view::npos)
    throw bad("");
  const auto b = parse_positive(text.substr(0, x));
  const auto s = parse_positive(text.substr(x + 1));
  if (!b || !s) throw bad("");
  if (*b > packing::kMaxBatch) throw bad(fmt::format("B = {} is more than {}", *b, packing::kMaxBatch));
  if (*s > packing::kMaxTokens) throw bad(fmt::format("S = {} is more than {}", *s, packing::kMaxTokens));
  return {*b, *s};
}

DType GemmShape::b_type(const Precision& p) const {
  switch (b) {
    case Operand::weights: return p.weights;
    case Operand::kv_cache: return p.kv_cache;
    case Operand::activations: return p.activations;
  }
  return p.activations;
}

uint64_t GemmShape::hbm_bytes(const Precision& p) const {
  if (b == Operand::activations || b_reused) return 0;
  return dtype_storage_bytes(b_type(p), static_cast<uint64_t>(k) * static_cast<uint64_t>(n));
}

uint64_t TfOp::macs() const {
  const GemmShape* g = gemm();
  if (!g) return 0;
  return static_cast<uint64_t>(g->m) * static_cast<uint64_t>(g->k) * static_cast<uint64_t>(g->n) *
         static_cast<uint64_t>(repeat);
}

uint64_t TfOp::elements() const {
  const VectorShape* v = vector();
  if (!v) return 0;
  return static_cast<uint64_t>(v->rows) * static_cast<uint64_t>(v->cols) *
         static_cast<uint64_t>(repeat);
}

VpuOp TfOp::vpu_op(DType dtype) const {
  const VectorShape* v = vector();
  if (!v) throw std::logic_error("op '" + name + "' is not a vector op");
  return {v->kind, v->rows, v->cols, dtype};
}

Lowered lower(const ModelSpec& m, Phase phase, packing::Shape bucket, const LowerOptions& options) {
  validate_model(m);
  const std::string at = fmt::format("model '{}' at {} [{}, {}]", m.name, kPhaseNames.name(phase),
                                     bucket.batch, bucket.length);
  if (bucket.batch < 1 || bucket.batch > packing::kMaxBatch || bucket.length < 1 ||
      bucket.length > packing::kMaxTokens)
    throw InputError(fmt::format("{}: expected B in [1, {}] and {} in [1, {}]", at,
                                 packing::kMaxBatch, phase == Phase::prefill ? "S" : "L",
                                 packing::kMaxTokens));
  if (phase == Phase::decode && m.kind == ModelKind::encoder)
    throw InputError(
        fmt::format("{}: '{}' is an encoder (kind: encoder{}); it has no decode "
                    "phase, expected prefill",
                    at, m.name, m.path.empty() ? "" : " in " + m.path));
  if (m.max_seq && bucket.length > *m.max_seq)
    throw InputError(fmt::format(
        "{}: {} = {} is more than the model's max_seq = {}{}", at,
        phase == Phase::prefill ? "sequence length S" : "KV length L", bucket.length, *m.max_seq,
        m.max_seq_source.empty() ? "" : " (" + m.max_seq_source + ")"));

  Lowered l;
  l.model = m.name;
  l.phase = phase;
  l.batch = bucket.batch;
  l.length = bucket.length;
  l.precision = m.precision;
  l.source = m.path;
  Builder b(l);
  const int64_t B = bucket.batch, S = bucket.length;
  const int64_t T = phase == Phase::prefill ? B * S : B;

  if (m.positional == Positional::learned) {
    b.group("embed", 1, -1);
    b.vector("pos_embed_add", OpRole::embed_add, VectorKind::add, T, m.d_model);
  }
  if (m.dense_layer_count() > 0) {
    b.group(m.moe ? "dense_layer" : "layer", m.dense_layer_count(), 0);
    layer(b, m, phase, B, S, false);
  }
  if (m.moe_layer_count() > 0) {
    b.group("moe_layer", m.moe_layer_count(), m.dense_layer_count());
    layer(b, m, phase, B, S, true);
  }
  b.group("head", 1, -1);
  const bool every_token =
      phase == Phase::prefill && (options.all_logits || m.kind == ModelKind::encoder);
  const int64_t logit_rows = every_token ? T : B;
  b.vector("final_norm", OpRole::final_norm, norm_kind(m), logit_rows, m.d_model);
  b.matmul("lm_head", OpRole::lm_head, logit_rows, m.d_model, m.vocab);
  check_fits(l, m);
  return l;
}

Totals totals(const Lowered& l) {
  u128 mm = 0, at = 0, ve = 0, wb = 0, kb = 0;
  for (const auto& op : l.ops) {
    const u128 count = static_cast<u128>(l.groups[static_cast<size_t>(op.group)].count);
    if (const GemmShape* g = op.gemm()) {
      (op.kind == OpKind::attention ? at : mm) += count * op.macs();
      const u128 bytes = count * op.repeat * g->hbm_bytes(l.precision);
      (g->b == Operand::weights ? wb : kb) += bytes;
    } else {
      ve += count * op.elements();
    }
  }
  return {saturating(mm), saturating(at), saturating(ve), saturating(wb), saturating(kb)};
}

uint64_t weight_elements(const Lowered& l) {
  u128 sum = 0;
  for (const auto& op : l.ops) {
    const GemmShape* g = op.gemm();
    if (!g || g->b != Operand::weights) continue;
    sum += static_cast<u128>(l.groups[static_cast<size_t>(op.group)].count) * op.repeat *
           static_cast<uint64_t>(g->k) * static_cast<uint64_t>(g->n);
  }
  return saturating(sum);
}

uint64_t parameter_count(const ModelSpec& m) {
  // Enough tokens that uniform routing reaches every expert.
  int64_t tokens = m.moe ? ceil_div(m.moe->experts, m.moe->top_k) : 1;
  if (m.max_seq) tokens = std::min(tokens, *m.max_seq);
  const int64_t batch = m.moe ? ceil_div(ceil_div(m.moe->experts, m.moe->top_k), tokens) : 1;
  const Lowered l = lower(m, Phase::prefill, {batch, tokens});
  u128 sum = weight_elements(l);
  if (!m.tied_embeddings) sum += static_cast<u128>(m.vocab) * m.d_model;  // token embeddings
  if (m.positional == Positional::learned && m.max_seq)
    sum += static_cast<u128>(*m.max_seq) * m.d_model;
  return saturating(sum);
}

uint64_t kv_cache_bytes_per_slot(const ModelSpec& m, int64_t kv_length) {
  const u128 per_token = m.mla ? static_cast<u128>(m.mla->kv_lora_rank + m.mla->rope_head_dim)
                               : static_cast<u128>(2) * m.kv_heads * m.head_dim;
  const u128 values = per_token * m.layers * static_cast<u128>(kv_length);
  // Packed storage, rounded up to whole bytes once (dtype_storage_bytes without its 64-bit limit).
  return saturating((values * static_cast<u128>(dtype_bits(m.precision.kv_cache)) + 7) / 8);
}

MemoryFloor memory_floor(const Lowered& l, double bytes_per_second) {
  const Totals t = totals(l);
  MemoryFloor f;
  f.weight_bytes = t.weight_bytes;
  f.kv_bytes = t.kv_bytes;
  f.seconds = bytes_per_second > 0 ? static_cast<double>(f.bytes()) / bytes_per_second : 0.0;
  return f;
}

}  // namespace systolic::transformer
