// Checks of a model spec beyond each key's own range: the relations between keys (kv_heads
// divides heads, heads x head_dim = d_model, ...), the precision, and validate_model for specs
// built in code.
#include <algorithm>

#include <fmt/format.h>

#include "models/common/error.hpp"
#include "models/mxu/operands.hpp"
#include "sim/workload/transformer/model_checks.hpp"

namespace systolic::transformer {
namespace model_detail {
namespace {

[[noreturn]] void fail(const Locate& at, const std::string& key, const std::string& message) {
  throw InputError(at(key) + message);
}

}  // namespace

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : ", ") + w;
  return s;
}

void check_relations(const ModelSpec& m, const std::set<std::string>& given, const Locate& at) {
  if (!given.count("head_dim") && m.heads > 0 && m.attention_dim % m.heads != 0)
    fail(at, "heads",
         fmt::format("key 'heads': {} = {} is not a multiple of heads = {}; give head_dim",
                     given.count("attention_dim") ? "attention_dim" : "d_model", m.attention_dim,
                     m.heads));
  if (m.heads * m.head_dim != m.attention_dim) {
    const bool declared = given.count("attention_dim") > 0;
    fail(at, "head_dim",
         fmt::format("key 'head_dim': heads x head_dim = {} x {} = {}, expected {} = {}{}", m.heads,
                     m.head_dim, m.heads * m.head_dim, declared ? "attention_dim" : "d_model",
                     m.attention_dim,
                     declared ? ""
                              : fmt::format(" (if the attention really is wider or narrower than "
                                            "d_model, as in DeepSeek-V3, declare "
                                            "attention_dim: {})",
                                            m.heads * m.head_dim)));
  }
  if (m.mla && given.count("kv_heads") && m.kv_heads != m.heads)
    fail(at, "kv_heads",
         fmt::format("key 'kv_heads': {} with mla: latent attention shares one compressed KV "
                     "cache among all heads; omit kv_heads or set it to heads = {}",
                     m.kv_heads, m.heads));
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
    fail(at, "kv_heads",
         fmt::format("key 'kv_heads': {} does not divide heads = {} (each KV head serves "
                     "heads / kv_heads query heads); expected a divisor of {}",
                     m.kv_heads, m.heads, m.heads));
  if (m.moe) {
    if (m.moe->top_k > m.moe->experts)
      fail(at, "moe.top_k",
           fmt::format("key 'moe.top_k': {} is more than moe.experts = {}; expected an integer "
                       "in [1, {}]",
                       m.moe->top_k, m.moe->experts, m.moe->experts));
    if (m.moe->dense_layers >= m.layers)
      fail(at, "moe.dense_layers",
           fmt::format("key 'moe.dense_layers': {} leaves no MoE layer of layers = {}; expected "
                       "an integer in [0, {}]",
                       m.moe->dense_layers, m.layers, m.layers - 1));
  }
  if (m.d_ff == 0 && m.dense_layer_count() > 0)
    fail(at, "",
         m.moe ? fmt::format("missing key 'd_ff' (the dense FFN width of the first "
                             "moe.dense_layers = {} layers)",
                             m.moe->dense_layers)
               : std::string("missing key 'd_ff' (the FFN width)"));
  if (m.mla && m.mla->rope_head_dim > 0 && m.positional != Positional::rope)
    fail(at, "mla.rope_head_dim",
         fmt::format("key 'mla.rope_head_dim': {} needs positional: rope, got positional: {}",
                     m.mla->rope_head_dim, kPositionalNames.name(m.positional)));
  if (m.positional == Positional::learned && !m.max_seq)
    fail(at, "positional",
         "key 'positional': learned positions need max_seq (the size of the position table)");
}

}  // namespace model_detail

using namespace model_detail;

std::optional<PrecisionIssue> check_precision(const Precision& p) {
  const auto names = [](const std::vector<std::string>& v) { return join(v); };
  if (!dtype_on_mxu(p.activations))
    return PrecisionIssue{"activation_dtype",
                          fmt::format("key 'activation_dtype': {} is a weight storage type; expected one of {}",
                                      kDTypeNames.name(p.activations), names(activation_types()))};
  const auto weights = mxu_operands(p.activations, p.weights);
  if (const auto* why = std::get_if<std::string>(&weights))
    return PrecisionIssue{"weight_dtype",
                          fmt::format("key 'weight_dtype': {}; with activation_dtype {} expected one of {}", *why,
                                      kDTypeNames.name(p.activations), names(b_types_for(p.activations)))};
  // The fused attention reads K and V as the MXU does: a KV type that needs a dequantise op
  // (integers under float queries, int4) is not modelled.
  std::vector<std::string> kv_types;
  for (const auto& name : b_types_for(p.activations)) {
    const auto ops = mxu_operands(p.activations, *kDTypeNames.parse(name));
    if (!std::get<MxuOperands>(ops).dequantize_b) kv_types.push_back(name);
  }
  const std::string kv(kDTypeNames.name(p.kv_cache));
  if (std::find(kv_types.begin(), kv_types.end(), kv) == kv_types.end())
    return PrecisionIssue{"kv_dtype",
                          fmt::format("key 'kv_dtype': {} with activation_dtype {}; expected one of {}{}", kv,
                                      kDTypeNames.name(p.activations), names(kv_types),
                                      dtype_is_float(p.activations)
                                          ? " (an integer KV cache under float queries would need a dequantise "
                                            "step inside attention, which is not modelled)"
                                          : " (int8 queries read an int8 cache)")};
  return std::nullopt;
}

void validate_model(const ModelSpec& m) {
  std::string who = fmt::format("model '{}': ", m.name);
  const auto bad = [&](const std::string& key, int64_t value, int64_t lo, int64_t hi) {
    if (value < lo || value > hi)
      throw InputError(fmt::format("{}key '{}': expected an integer in [{}, {}], got {}", who, key,
                                   lo, hi, value));
  };
  bad("layers", m.layers, 1, kMaxLayers);
  bad("d_model", m.d_model, 1, kMaxDim);
  bad("heads", m.heads, 1, kMaxDim);
  bad("kv_heads", m.kv_heads, 1, kMaxDim);
  bad("head_dim", m.head_dim, 1, kMaxDim);
  bad("attention_dim", m.attention_dim, 1, kMaxDim);
  bad("d_ff", m.d_ff, 0, kMaxDim);
  bad("vocab", m.vocab, 1, kMaxDim);
  if (m.max_seq) bad("max_seq", *m.max_seq, 1, kMaxDim);
  if (m.moe) {
    bad("moe.experts", m.moe->experts, 1, kMaxExperts);
    bad("moe.top_k", m.moe->top_k, 1, kMaxExperts);
    bad("moe.expert_ff", m.moe->expert_ff, 1, kMaxDim);
    bad("moe.shared_experts", m.moe->shared_experts, 0, kMaxExperts);
    bad("moe.dense_layers", m.moe->dense_layers, 0, kMaxLayers);
  }
  if (m.mla) {
    bad("mla.q_lora_rank", m.mla->q_lora_rank, 0, kMaxDim);
    bad("mla.kv_lora_rank", m.mla->kv_lora_rank, 1, kMaxDim);
    bad("mla.rope_head_dim", m.mla->rope_head_dim, 0, kMaxDim);
    bad("mla.v_head_dim", m.mla->v_head_dim, 1, kMaxDim);
  }
  if (!(m.precision.fp8_scale > 0) || m.precision.fp8_scale > 1e30)
    throw InputError(fmt::format("{}key 'fp8_scale': expected a positive number, got {}", who, m.precision.fp8_scale));
  if (const auto issue = check_precision(m.precision)) throw InputError(who + issue->message);
  // In code every field is explicit: head_dim, attention_dim and kv_heads count as given.
  check_relations(m, {"head_dim", "attention_dim", "kv_heads"},
                  [&](const std::string&) { return who; });
}

}  // namespace systolic::transformer
