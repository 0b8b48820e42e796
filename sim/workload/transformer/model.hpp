#pragma once
// Transformer model descriptions (docs/transformers.md, "Model files"): the dimensions a
// lowering to matmul, attention and vector ops needs. Presets live in traces/models/.
//
//   name: llama2-7b
//   layers: 32
//   d_model: 4096
//   heads: 32
//   kv_heads: 32            # optional (default heads); must divide heads (GQA / MQA)
//   head_dim: 128           # optional (default d_model / heads)
//   attention_dim: 4096     # optional (default d_model); heads * head_dim must equal it
//   d_ff: 11008
//   vocab: 32000
//   dtype: bf16             # optional (default bf16): weights, activations and KV cache
//   weight_dtype: int8      # optional overrides of dtype (docs/precision.md): W8A16, W4A16,
//   activation_dtype: bf16  #   an fp8 KV cache; the pairs models/mxu/operands.hpp allows
//   kv_dtype: fp8_e4m3
//   fp8_scale: 1.0          # optional: static scale of every fp8 tensor (a compile-time constant)
//   norm: rmsnorm           # rmsnorm | layernorm
//   activation: silu        # silu | gelu | relu
//   gated_ffn: true         # true: SwiGLU/GeGLU (gate, up, down); false: up, down
//   positional: rope        # rope | learned
//   # optional: kind (decoder | encoder), max_seq, tied_embeddings, moe {...}, mla {...}
//
// Every problem is an InputError "path:line: message" naming the key and what was expected;
// unknown keys get a "did you mean" hint.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/common/dtype.hpp"
#include "models/common/names.hpp"

namespace systolic::transformer {

enum class NormKind { rmsnorm, layernorm };
enum class Activation { silu, gelu, relu };
enum class Positional { rope, learned };
enum class ModelKind { decoder, encoder };  // encoder (BERT): prefill only, no decode phase
inline constexpr auto kNormKindNames = name_table<NormKind>({{NormKind::rmsnorm, "rmsnorm"}, {NormKind::layernorm, "layernorm"}});
inline constexpr auto kActivationNames = name_table<Activation>({{Activation::silu, "silu"}, {Activation::gelu, "gelu"}, {Activation::relu, "relu"}});
inline constexpr auto kPositionalNames = name_table<Positional>({{Positional::rope, "rope"}, {Positional::learned, "learned"}});
inline constexpr auto kModelKindNames = name_table<ModelKind>({{ModelKind::decoder, "decoder"}, {ModelKind::encoder, "encoder"}});

// Mixture of experts: every layer from `dense_layers` on replaces its FFN with a router over
// `experts` routed experts (each token goes to `top_k` of them) plus `shared_experts` experts
// every token uses. Experts are FFNs of width expert_ff (gated like the dense FFN).
struct MoeSpec {
  int64_t experts = 0;
  int64_t top_k = 0;
  int64_t expert_ff = 0;
  int64_t shared_experts = 0;
  int64_t dense_layers = 0;  // the first `dense_layers` layers keep a dense FFN of width d_ff
};

// Multi-head latent attention (DeepSeek-V2/V3): K and V are projected up from a shared
// latent of kv_lora_rank values per token, which is what the KV cache holds (plus a
// rope_head_dim-wide decoupled rotary key). head_dim is the non-rotary query/key width
// (qk_nope_head_dim); v_head_dim the value width. docs/transformers.md, "MLA".
struct MlaSpec {
  int64_t q_lora_rank = 0;  // 0: queries projected directly from d_model
  int64_t kv_lora_rank = 0;
  int64_t rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

// Storage types of a model's tensors (docs/precision.md). Accumulators are fp32 for float
// inputs and int32 for int8 x int8 (models/mxu/operands.hpp); outputs leave in `activations`.
struct Precision {
  DType weights = DType::bf16;
  DType activations = DType::bf16;
  DType kv_cache = DType::bf16;
  double fp8_scale = 1.0;  // every fp8 operand's static scale
};

struct ModelSpec {
  std::string name;  // `name:` or the file stem
  ModelKind kind = ModelKind::decoder;
  int64_t layers = 0;
  int64_t d_model = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  int64_t attention_dim = 0;  // heads * head_dim (== d_model unless declared otherwise)
  int64_t d_ff = 0;           // 0 when every layer is MoE and no dense width is given
  int64_t vocab = 0;
  std::optional<int64_t> max_seq;  // longest sequence / KV length (learned positions: table size)
  Precision precision;
  NormKind norm = NormKind::rmsnorm;
  Activation activation = Activation::silu;
  bool gated_ffn = false;
  Positional positional = Positional::rope;
  bool tied_embeddings = false;  // the LM head reuses the token embedding matrix
  std::optional<MoeSpec> moe;
  std::optional<MlaSpec> mla;

  std::string path;            // the file, for messages ("" when built in code)
  std::string max_seq_source;  // "file:line" of max_seq, for bucket errors

  bool is_moe_layer(int64_t layer) const { return moe && layer >= moe->dense_layers; }
  int64_t dense_layer_count() const { return moe ? moe->dense_layers : layers; }
  int64_t moe_layer_count() const { return layers - dense_layer_count(); }
  // Value width of all heads: heads * v_head_dim with MLA, else attention_dim.
  int64_t value_dim() const { return mla ? heads * mla->v_head_dim : attention_dim; }
};

// Reads and validates a model file. Throws InputError "path:line: message".
ModelSpec load_model(const std::string& path);

// The same from YAML text in memory; `path` names it in messages.
ModelSpec parse_model(const std::string& yaml, const std::string& path);

// Checks a spec built in code with the file's rules (messages name the key, no line).
void validate_model(const ModelSpec& spec);

// Why weights, activations and KV cache of `p` cannot run together, naming the key
// (weight_dtype, kv_dtype, activation_dtype) and the allowed types; nullopt when they can.
struct PrecisionIssue {
  std::string key;
  std::string message;
};
std::optional<PrecisionIssue> check_precision(const Precision& p);

}  // namespace systolic::transformer
