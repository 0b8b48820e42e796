#pragma once
// Lowering a transformer (sim/workload/transformer/model.hpp) at a phase and a static shape to the ops
// one forward step runs: matmuls with weights, attention matmuls (activations x activations in
// prefill, queries x KV cache in decode) and vector-unit work. docs/transformers.md lists every
// op with its shape formula.
//
// The list describes each distinct layer once: ops belong to layer groups (token embedding
// positions, the dense layers, the MoE layers, the LM head), and a group occurs `count` times
// in a row (layers that are identical in shape). A simulator may run one occurrence of each
// group and scale by count, or run every layer. Within a group, ops are in dependency order;
// each op depends on the one before it (the residual adds also on the group's input).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "models/common/dtype.hpp"
#include "models/common/names.hpp"
#include "models/vpu/vpu_core.hpp"
#include "sim/packing/buckets.hpp"
#include "sim/workload/transformer/model.hpp"
#include "sim/workload/workload.hpp"

namespace systolic::transformer {

// One phase type for the lowering, the packers and the serving replay (sim/packing/buckets.hpp).
using packing::kPhaseNames;
using packing::Phase;

// "BxS" (prefill: B sequences of S tokens) or "BxL" (decode: B slots, KV length L), e.g.
// "4x2048": two positive decimal integers joined by 'x', B <= packing::kMaxBatch and
// S <= packing::kMaxTokens. Anything else throws InputError "<where>: bucket '...': expected
// BxS ...", `where` naming the flag or file:line the text came from.
packing::Shape parse_bucket(std::string_view text, const std::string& where);

enum class OpKind { matmul, attention, vector };
inline constexpr auto kOpKindNames = name_table<OpKind>({{OpKind::matmul, "matmul"}, {OpKind::attention, "attention"}, {OpKind::vector, "vector"}});

// Where a GEMM's B operand (K x N, the side loaded into the array) comes from.
enum class Operand {
  weights,      // static parameters, streamed from HBM (each instance its own matrix)
  kv_cache,     // decode: this slot's cached keys/values, streamed from HBM
  activations,  // produced on chip by earlier ops (prefill attention: K and V)
};
inline constexpr auto kOperandNames = name_table<Operand>({{Operand::weights, "weights"}, {Operand::kv_cache, "kv_cache"}, {Operand::activations, "activations"}});

// A[m, k] x B[k, n]. hbm_bytes() is what one instance must read from HBM for B: k*n at the
// weight or KV cache type (packed: int4 is half a byte), 0 for activations and for a B already streamed by the op before
// (`b_reused`: MLA's context matmul reads the latent cache its score matmul just read).
struct GemmShape {
  int64_t m = 0;
  int64_t k = 0;
  int64_t n = 0;
  Operand b = Operand::weights;
  bool b_reused = false;
  // Rows of real work over one occurrence's instances; the rest of m x repeat pads the static
  // shape (MoE experts all run as many rows as the busiest one gets). -1: all of them.
  int64_t useful_rows = -1;
  // Consecutive instances that read the same B (GQA prefill: the G query heads of one KV head).
  int64_t b_group = 1;
  uint64_t hbm_bytes(const Precision& precision) const;
  DType b_type(const Precision& precision) const;  // B's storage type
};

// A VPU op over a [rows, cols] tensor (reductions and rope along cols).
struct VectorShape {
  VectorKind kind = VectorKind::add;
  int64_t rows = 0;
  int64_t cols = 0;
};

// What an op does in its layer, for sharding it over chips (sim/workload/transformer/shard.cpp switches
// over every role with no default: a new role does not compile until its sharding is decided).
enum class OpRole {
  embed_add,        // pos_embed_add: [tokens, d]
  attn_norm,        // before attention: its output is gathered for the QKV projections
  attn_residual,    // [tokens, d]
  ffn_norm,         // before the FFN or the MoE router
  ffn_residual,     // [tokens, d]
  final_norm,       // before the LM head
  lm_head,          // [rows, d] x [d, vocab]
  head_proj,        // projections to per-head queries/keys/values: qkv_proj, q_proj, q_up, kv_up
  latent_proj,      // MLA's low-rank projections and their norms (q_down, q_norm, kv_down, kv_norm)
  rope,             // rotary embedding over the heads' columns
  attention,        // attn_scores, softmax, attn_context: instances are heads (x slots)
  per_head_latent,  // MLA decode's q_absorb and v_up: one instance per head
  out_proj,         // heads -> d
  ffn_in,           // dense FFN gate/up (d -> ff)
  ffn_vector,       // dense FFN activation and gating multiply ([rows, ff])
  ffn_out,          // dense FFN down (ff -> d)
  shared_in,        // the MoE layer's shared experts, as the dense FFN
  shared_vector,
  shared_out,
  expert_in,        // the routed experts, as the dense FFN
  expert_vector,
  expert_out,
  router,           // tokens -> expert scores
  router_softmax,
  moe_weight,       // [assignments, d]: each expert's output times its gate weight
  moe_combine,      // [assignments, d]: the top-k outputs of each token added
};

// The roles of one FFN's ops: the dense FFN, the shared experts or the routed experts.
struct FfnRoles {
  OpRole in, vector, out;
};
inline constexpr FfnRoles kDenseFfn{OpRole::ffn_in, OpRole::ffn_vector, OpRole::ffn_out};
inline constexpr FfnRoles kSharedFfn{OpRole::shared_in, OpRole::shared_vector, OpRole::shared_out};
inline constexpr FfnRoles kExpertFfn{OpRole::expert_in, OpRole::expert_vector, OpRole::expert_out};

struct TfOp {
  std::string name;  // "qkv_proj", "attn_scores", "expert_up", ...
  OpKind kind = OpKind::matmul;
  OpRole role = OpRole::ffn_in;
  std::variant<GemmShape, VectorShape> shape;
  int64_t repeat = 1;  // identical instances per occurrence of the group (heads x slots, experts)
  int group = 0;       // index into Lowered::groups

  const GemmShape* gemm() const { return std::get_if<GemmShape>(&shape); }
  const VectorShape* vector() const { return std::get_if<VectorShape>(&shape); }
  uint64_t macs() const;      // m*k*n*repeat for matmul/attention, else 0 (one occurrence)
  uint64_t elements() const;  // rows*cols*repeat for vector ops, else 0 (one occurrence)
  VpuOp vpu_op(DType dtype) const;  // vector ops only (std::logic_error otherwise)
};

struct LayerGroup {
  std::string name;         // "embed", "layer", "dense_layer", "moe_layer", "head"
  int64_t count = 1;        // consecutive occurrences (layers) of the group
  int64_t first_layer = -1; // model layer index of the first occurrence; -1: embed and head
};

struct Lowered {
  std::string model;
  Phase phase = Phase::prefill;
  int64_t batch = 0;   // B: sequences (prefill) or slots (decode)
  int64_t length = 0;  // S (prefill) or L, the KV length attended (decode)
  Precision precision;
  std::vector<LayerGroup> groups;  // in execution order
  std::vector<TfOp> ops;           // grouped, groups in order, each group's ops in order
  std::string source;              // the model file
};

struct LowerOptions {
  // Prefill computes logits for every token (true) or only each sequence's last (false, what
  // a server needs to start decoding). Encoders (BERT, masked LM) always do every token.
  bool all_logits = false;
};

// Throws InputError for a shape the model cannot run (decode of an encoder, S or L beyond
// max_seq, sizes whose MAC counts overflow int64).
Lowered lower(const ModelSpec& model, Phase phase, packing::Shape bucket,
              const LowerOptions& options = {});

// Sums over every occurrence (op totals x group count).
struct Totals {
  uint64_t matmul_macs = 0;     // OpKind::matmul
  uint64_t attention_macs = 0;  // OpKind::attention
  uint64_t vector_elements = 0;
  uint64_t weight_bytes = 0;    // distinct weights streamed from HBM (Operand::weights)
  uint64_t kv_bytes = 0;        // KV cache streamed from HBM (Operand::kv_cache, not reused)
};
Totals totals(const Lowered& lowered);

// Matrix parameters touched by this step (k*n of every weight GEMM instance, every
// occurrence): all experts only when every expert receives tokens.
uint64_t weight_elements(const Lowered& lowered);

// The model's parameter count: every weight matrix (all experts) + the token embedding table
// (once if tied to the LM head) + the learned position table. Norm gains and biases are left
// out (< 0.1 % for the presets).
uint64_t parameter_count(const ModelSpec& model);

// KV cache of one slot at KV length L: 2 * layers * kv_heads * head_dim * L values of
// kv_dtype; with MLA, layers * (kv_lora_rank + rope_head_dim) * L (one shared latent).
uint64_t kv_cache_bytes_per_slot(const ModelSpec& model, int64_t kv_length);

// The memory-bound floor of one step: every byte that must come from HBM once, over the
// bandwidth. For decode this is the per-token time floor (weights + KV) / bandwidth.
struct MemoryFloor {
  uint64_t weight_bytes = 0;
  uint64_t kv_bytes = 0;
  double seconds = 0;
  uint64_t bytes() const { return weight_bytes + kv_bytes; }
};
MemoryFloor memory_floor(const Lowered& lowered, double bytes_per_second);

}  // namespace systolic::transformer
