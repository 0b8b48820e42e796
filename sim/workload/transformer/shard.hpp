#pragma once
// Sharding a lowered transformer over the chips of a system (docs/interconnect.md,
// "Sharding"). Tensor parallelism over Y = tp chips, Megatron style with sequence-parallel
// activations: between blocks each chip holds T/Y tokens; an all-gather of the [T, d]
// activations feeds the column-parallel matmuls (QKV, FFN gate/up: N / Y; attention: heads /
// Y), the row-parallel ones (out_proj, FFN down: K / Y) leave partial sums that a
// reduce-scatter adds up and scatters back to T/Y tokens per chip. Expert parallelism over
// ep chips (MoE layers): each chip owns experts / ep experts; an all-to-all sends each token
// to the chips of its top-k experts and another brings the results back. Token routing is
// uniform or a seeded Zipf skew.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/common/names.hpp"
#include "sim/workload/transformer/lower.hpp"
#include "sim/workload/workload.hpp"

namespace systolic::transformer {

enum class Routing { uniform, skewed };
inline constexpr auto kRoutingNames = name_table<Routing>({{Routing::uniform, "uniform"}, {Routing::skewed, "skewed"}});

class MeshLayout;

struct ShardOptions {
  int64_t tp = 1;  // tensor-parallel degree: 1 or the system's chip count
  int64_t ep = 1;  // expert-parallel degree (MoE models): 1 or the chip count (with tp = chips)
  Routing routing = Routing::uniform;
  double skew = 1.0;  // Zipf exponent of the skewed routing: expert of rank r gets ~ 1 / r^skew
  uint64_t seed = 1;  // which experts are the popular ones (a seeded permutation)
  // A parallelism mesh (shard_mesh.hpp) instead of tp and ep over every chip: its tp and ep
  // degrees, the collectives over this chip's groups, its pipeline stage. The lowering given
  // to shard() is then one micro-batch of one data-parallel replica.
  const MeshLayout* mesh = nullptr;
  int64_t micro_batches = 1;
  // Mark the tensor-parallel all-gathers and reduce-scatters for the compiler to decompose
  // beside their matmuls (CollectiveWork::decompose).
  bool overlap = true;
};

// A chip's pipeline stage (mesh pp > 1): the model layers it runs, for every micro-batch in
// turn, receiving each one's activations from the stage before and sending its own to the next.
struct PipelineStage {
  int64_t stage = 0, stages = 1, micro_batches = 1;
  int64_t first_layer = 0, end_layer = 0;  // model layers [first, end)
  ChipGroup group;                         // the chips of the pipeline, in stage order
  uint64_t bytes = 0;                      // activations one chip passes on per micro-batch
  DType dtype = DType::bf16;
};

// A collective to run before ops[before_op] (one past the group's last op: after it), in
// every occurrence of `group` (once per layer).
struct PlacedCollective {
  size_t before_op = 0;
  CollectiveWork work;  // after_gemms / after_vectors / joined_by_gemm are left for the caller
  int group = 0;        // index into Lowered::groups
  // The op (a matmul) that first reads its result, when not the next one: the ops in between
  // run while it communicates (the shared experts during the MoE dispatch).
  std::optional<size_t> joined_by_op;
};

struct ShardedLayers {
  Lowered lowered;  // this chip's share of every op
  std::vector<PlacedCollective> collectives;
  std::optional<PipelineStage> stage;  // a mesh with pp > 1
};

// This chip's share. Throws InputError naming the model dimension a degree does not divide
// (heads, kv_heads, d_ff, expert_ff, experts, layers) or, without a mesh, a degree that is
// neither 1 nor `chips`.
ShardedLayers shard(const Lowered& lowered, const ModelSpec& model, const ShardOptions& options, int chip,
                    int chips);

// Each expert's share of the token-expert assignments (sums to 1), as the routing gives them.
std::vector<double> expert_shares(int64_t experts, const ShardOptions& options);

// What a tensor-parallel degree must divide, as (model key, value): the heads, the KV heads
// (not with MLA), the dense FFN width and, unless the experts are expert-parallel, theirs.
std::vector<std::pair<const char*, int64_t>> tp_must_divide(const ModelSpec& model, bool expert_parallel);
// Their greatest common divisor: the tensor-parallel degrees are its divisors.
int64_t tp_divides(const ModelSpec& model, bool expert_parallel);

}  // namespace systolic::transformer
