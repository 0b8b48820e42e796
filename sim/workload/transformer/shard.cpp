#include "sim/workload/transformer/shard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "models/common/divide.hpp"
#include "models/common/error.hpp"
#include "sim/workload/transformer/shard_mesh.hpp"

namespace systolic::transformer {
namespace {

// Tokens of one step of the lowering: B x S in prefill, B (one each) in decode.
int64_t tokens(const Lowered& l) { return l.phase == Phase::prefill ? l.batch * l.length : l.batch; }

// `flag`: the degree as given ("--tp 16", "--mesh tp=16").
void require_divides(const ModelSpec& m, const std::string& flag, int64_t degree, const char* what,
                     int64_t value) {
  if (value % degree != 0)
    throw InputError(fmt::format("{}: {} does not divide {} = {} (expected a degree that divides it)", m.name,
                                 flag, what, value));
}

// `total` whole items split by `shares` (summing to 1): the floors, then one more to the
// largest remainders (ties to the lower index), so the parts add up to exactly `total`.
std::vector<int64_t> apportion(int64_t total, const std::vector<double>& shares) {
  std::vector<int64_t> parts;
  std::vector<std::pair<double, size_t>> remainders;
  int64_t given = 0;
  for (size_t i = 0; i < shares.size(); ++i) {
    const double exact = static_cast<double>(total) * shares[i];
    parts.push_back(static_cast<int64_t>(std::floor(exact)));
    given += parts.back();
    remainders.emplace_back(exact - std::floor(exact), i);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t r = 0; given < total && r < remainders.size(); ++r, ++given) ++parts[remainders[r].second];
  return parts;
}

}  // namespace

std::vector<double> expert_shares(int64_t experts, const ShardOptions& o) {
  std::vector<double> share(static_cast<size_t>(experts), 1.0 / static_cast<double>(experts));
  if (o.routing == Routing::uniform) return share;
  // Zipf: the expert of popularity rank r (1-based) gets 1 / r^skew; a seeded permutation
  // decides which expert has which rank, so the popular ones land on arbitrary chips.
  std::vector<size_t> rank(static_cast<size_t>(experts));
  std::iota(rank.begin(), rank.end(), 0);
  std::mt19937_64 rng(o.seed);
  for (size_t i = rank.size(); i > 1; --i) std::swap(rank[i - 1], rank[rng() % i]);  // Fisher-Yates
  double total = 0;
  for (size_t e = 0; e < rank.size(); ++e) total += std::pow(static_cast<double>(rank[e] + 1), -o.skew);
  for (size_t e = 0; e < rank.size(); ++e) share[e] = std::pow(static_cast<double>(rank[e] + 1), -o.skew) / total;
  return share;
}

std::vector<std::pair<const char*, int64_t>> tp_must_divide(const ModelSpec& m, bool expert_parallel) {
  std::vector<std::pair<const char*, int64_t>> out{{"heads", m.heads}};
  if (!m.mla) out.emplace_back("kv_heads", m.kv_heads);
  if (!m.moe || m.moe->dense_layers > 0) out.emplace_back("d_ff", m.d_ff);
  if (m.moe && !expert_parallel) out.emplace_back("moe.expert_ff", m.moe->expert_ff);
  return out;
}

int64_t tp_divides(const ModelSpec& m, bool expert_parallel) {
  int64_t g = 0;
  for (const auto& [what, value] : tp_must_divide(m, expert_parallel)) g = std::gcd(g, value);
  return g;
}

namespace {

// What tensor parallelism over Y chips and expert parallelism over E must divide.
void require_tp_ep(const ModelSpec& m, int64_t Y, int64_t E, const std::string& tp_flag,
                   const std::string& ep_flag) {
  if (Y > 1)
    for (const auto& [what, value] : tp_must_divide(m, E > 1)) require_divides(m, tp_flag, Y, what, value);
  if (E > 1) require_divides(m, ep_flag, E, "moe.experts", m.moe->experts);
}

// A mesh's degrees against the model (the layout checked them against the system).
void check_mesh(const ModelSpec& m, const MeshSpec& mesh) {
  const int64_t Y = mesh.of(MeshAxis::tp), E = mesh.ep, P = mesh.of(MeshAxis::pp);
  if (E > 1 && !m.moe)
    throw InputError(
        fmt::format("--mesh '{}': ep={}: model '{}' has no experts (no moe section)", mesh.text, E, m.name));
  require_tp_ep(m, Y, E, fmt::format("--mesh tp={}", Y), fmt::format("--mesh ep={}", E));
  require_divides(m, fmt::format("--mesh pp={}", P), P, "layers", m.layers);
}

void check_degrees(const ModelSpec& m, const ShardOptions& o, int chips) {
  if (o.mesh) return check_mesh(m, o.mesh->spec());
  const int64_t Y = o.tp, E = o.ep;
  if (Y != 1 && Y != chips)
    throw InputError(fmt::format("--tp {}: expected 1 or the system's chip count ({})", Y, chips));
  if (E != 1 && E != chips)
    throw InputError(fmt::format("--ep {}: expected 1 or the system's chip count ({})", E, chips));
  if (E > 1 && !m.moe) throw InputError(fmt::format("--ep {}: model '{}' has no experts (no moe section)", E, m.name));
  if (E > 1 && Y != chips)
    throw InputError(fmt::format("--ep {} needs --tp {} as well: attention is tensor-parallel over the chips "
                                 "that hold the experts",
                                 E, chips));
  require_tp_ep(m, Y, E, fmt::format("--tp {}", Y), fmt::format("--ep {}", E));
}

// Expert parallelism on one chip: which experts it owns, how many tokens each gets, and how
// many token-expert assignments go from each chip's Tl tokens to each chip.
struct ExpertPlan {
  std::vector<uint64_t> dispatch_bytes, combine_bytes;  // to each chip
  int64_t local_active = 0;    // local experts that get a token
  int64_t local_rows = 0;      // rows each of them runs (the busiest one's tokens)
  int64_t local_received = 0;  // token-expert assignments this chip serves
};

// `chip`: its rank among the E chips of its expert group.
ExpertPlan plan_experts(const ModelSpec& m, const ShardOptions& o, int64_t E, int64_t chip, int64_t T,
                        int64_t Tl, uint64_t w) {
  ExpertPlan p;
  const MoeSpec& e = *m.moe;
  const auto share = expert_shares(e.experts, o);
  const int64_t per_chip = e.experts / E;
  std::vector<double> chip_share(static_cast<size_t>(E), 0.0);
  for (int64_t x = 0; x < e.experts; ++x) chip_share[static_cast<size_t>(x / per_chip)] += share[static_cast<size_t>(x)];
  // Every chip routes its T/Y tokens alike: rows[j] of its token-expert assignments go to chip j.
  const std::vector<int64_t> rows = apportion(Tl * e.top_k, chip_share);
  const uint64_t row_bytes = static_cast<uint64_t>(m.d_model) * w;
  for (int64_t j = 0; j < E; ++j) p.dispatch_bytes.push_back(static_cast<uint64_t>(rows[static_cast<size_t>(j)]) * row_bytes);
  // Results go back the way their tokens came: this chip returns to each chip j what it
  // received from it, rows[chip] rows (the experts here served that many of j's assignments).
  p.combine_bytes.assign(static_cast<size_t>(E), static_cast<uint64_t>(rows[static_cast<size_t>(chip)]) * row_bytes);
  p.local_received = E * rows[static_cast<size_t>(chip)];
  // Static shapes: every active local expert runs as many rows as the busiest one gets.
  double busiest = 0;
  for (int64_t x = chip * per_chip; x < (chip + 1) * per_chip; ++x) {
    const double tokens = static_cast<double>(T * e.top_k) * share[static_cast<size_t>(x)];
    busiest = std::max(busiest, tokens);
    if (tokens >= 0.5) ++p.local_active;
  }
  p.local_rows = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(busiest - 1e-9)));
  if (p.local_active == 0) p.local_active = 1;
  return p;
}

bool is_routed_expert(OpRole role) {
  return role == OpRole::expert_in || role == OpRole::expert_vector || role == OpRole::expert_out;
}

// Cuts one chip's share out of each op and places the collectives between them.
class Sharder {
 public:
  Sharder(const Lowered& l, const ModelSpec& m, const ShardOptions& o, int chip, ShardedLayers& out)
      : m_(m),
        Y_(o.mesh ? o.mesh->spec().of(MeshAxis::tp) : o.tp),
        E_(o.mesh ? o.mesh->spec().ep : o.ep),
        w_(dtype_storage_bytes(l.precision.activations, 1)),
        overlap_(o.overlap),
        out_(out) {
    const int64_t T = tokens(l);
    Tl_ = ceil_div(T, Y_);
    act_bytes_ = static_cast<uint64_t>(T * m.d_model) * w_;
    if (o.mesh) {
      tp_group_ = o.mesh->group(MeshAxis::tp, chip);
      if (E_ > 1) ep_group_ = o.mesh->expert_group(chip);
    }
    // Every chip of an expert group holds Tl tokens and routes them alike, whichever data-
    // parallel replica they belong to: the group's experts serve E x Tl tokens (without a mesh
    // the group is the tensor-parallel one, all T tokens).
    if (E_ > 1)
      experts_ =
          plan_experts(m, o, E_, o.mesh ? o.mesh->expert_rank(chip) : chip, o.mesh ? E_ * Tl_ : T, Tl_, w_);
  }

  void shard_op(size_t i);

 private:
  // `decompose`: the matmul beside it that reads or writes the rows it moves, when one does.
  void place(size_t before, CollectiveKind kind, uint64_t bytes, const std::string& name, int group,
             Decompose decompose, std::vector<uint64_t> send = {}) {
    if (Y_ == 1 && kind != CollectiveKind::all_to_all) return;
    CollectiveWork c;
    c.name = name;
    c.kind = kind;
    c.bytes = bytes;
    c.dtype = out_.lowered.precision.activations;
    c.send_bytes = std::move(send);
    c.source = out_.lowered.source;
    c.group = kind == CollectiveKind::all_to_all ? ep_group_ : tp_group_;
    if (overlap_) c.decompose = decompose;
    out_.collectives.push_back({before, std::move(c), group, std::nullopt});
  }
  // Megatron FFN: the input projections column-parallel, the output one row-parallel.
  void tensor_parallel_ffn(TfOp& op) const {
    if (GemmShape* g = std::get_if<GemmShape>(&op.shape)) {
      const bool out = op.role == OpRole::ffn_out || op.role == OpRole::shared_out || op.role == OpRole::expert_out;
      (out ? g->k : g->n) /= Y_;
    } else {
      std::get<VectorShape>(op.shape).cols /= Y_;
    }
  }
  void token_rows(TfOp& op, int64_t rows) const {
    if (GemmShape* g = std::get_if<GemmShape>(&op.shape)) g->m = rows;
    else std::get<VectorShape>(op.shape).rows = rows;
  }
  void shard_attention(TfOp& op) const;
  void shard_routed_expert(size_t i, const std::string& tag);
  void dispatch_after(size_t i);

  const ModelSpec& m_;
  int64_t Y_, E_;
  uint64_t w_;  // bytes per activation element
  bool overlap_;
  ChipGroup tp_group_, ep_group_;  // with a mesh; empty: every chip
  int64_t Tl_ = 0;  // tokens each chip holds between blocks
  uint64_t act_bytes_ = 0;  // the [T, d] activations
  ExpertPlan experts_;
  ShardedLayers& out_;
};

// Heads split over the chips; MLA decode (one instance per slot, H query rows) splits the rows.
void Sharder::shard_attention(TfOp& op) const {
  if (op.repeat % Y_ == 0) op.repeat /= Y_;
  else if (GemmShape* g = std::get_if<GemmShape>(&op.shape)) g->m = ceil_div(g->m, Y_);
  else std::get<VectorShape>(op.shape).rows = ceil_div(std::get<VectorShape>(op.shape).rows, Y_);
}

// This chip's experts, each padded to the busiest one's rows (static shapes).
void Sharder::shard_routed_expert(size_t i, const std::string& group_name) {
  TfOp& op = out_.lowered.ops[i];
  op.repeat = experts_.local_active;
  if (GemmShape* g = std::get_if<GemmShape>(&op.shape)) {
    g->m = experts_.local_rows;
    g->useful_rows = std::min(experts_.local_received, experts_.local_rows * experts_.local_active);
  } else {
    std::get<VectorShape>(op.shape).rows = experts_.local_rows * experts_.local_active;
  }
  if (op.role == OpRole::expert_out)
    place(i + 1, CollectiveKind::all_to_all, 0, group_name + ".combine", op.group, Decompose::none,
          experts_.combine_bytes);
}

// Dispatch as soon as the routing is known; the first routed-expert op waits for it, the
// shared experts before it do not.
void Sharder::dispatch_after(size_t i) {
  const std::vector<TfOp>& ops = out_.lowered.ops;
  const int group = ops[i].group;
  place(i + 1, CollectiveKind::all_to_all, 0,
        out_.lowered.groups[static_cast<size_t>(group)].name + ".dispatch", group, Decompose::none,
        experts_.dispatch_bytes);
  for (size_t j = i + 1; j < ops.size() && ops[j].group == group; ++j)
    if (is_routed_expert(ops[j].role)) {
      out_.collectives.back().joined_by_op = j;
      break;
    }
}

// One op's share on this chip, by its role. Why one 86-line function: it is one switch over
// OpRole with no default, so the compiler (-Wswitch) names any role a new op brings that is not
// sharded here (issue #15: a new op was once silently left unsharded); each case is a line or
// two, and the rule for every role reads best side by side.
void Sharder::shard_op(size_t i) {
  TfOp& op = out_.lowered.ops[i];
  const std::string& group_name = out_.lowered.groups[static_cast<size_t>(op.group)].name;
  const std::string tag = fmt::format("{}.{}", group_name, op.name);
  const bool ep_here = group_name == "moe_layer" && E_ > 1;
  GemmShape* gemm = std::get_if<GemmShape>(&op.shape);
  VectorShape* vec = std::get_if<VectorShape>(&op.shape);
  switch (op.role) {
    case OpRole::embed_add:
    case OpRole::attn_residual:
    case OpRole::ffn_residual:
      vec->rows = Tl_;
      return;
    case OpRole::attn_norm:
      vec->rows = Tl_;
      place(i + 1, CollectiveKind::all_gather, act_bytes_, tag + ".all_gather", op.group,
            Decompose::next_gemm);
      return;
    case OpRole::ffn_norm:  // with expert parallelism the router reads the chip's own tokens
      vec->rows = Tl_;
      if (!ep_here)
        place(i + 1, CollectiveKind::all_gather, act_bytes_, tag + ".all_gather", op.group,
              Decompose::next_gemm);
      return;
    case OpRole::final_norm: {
      const int64_t rows = vec->rows;
      vec->rows = ceil_div(rows, Y_);
      place(i + 1, CollectiveKind::all_gather, static_cast<uint64_t>(rows * m_.d_model) * w_,
            tag + ".all_gather", op.group, Decompose::next_gemm);
      return;
    }
    case OpRole::lm_head:
      gemm->n = ceil_div(gemm->n, Y_);  // the vocabulary padded to a multiple of Y
      return;
    case OpRole::head_proj:
      gemm->n /= Y_;
      return;
    case OpRole::latent_proj:  // MLA's latents are shared by every head: each chip computes them
      return;
    case OpRole::rope:
      vec->cols = ceil_div(vec->cols, Y_);
      return;
    case OpRole::attention:
      shard_attention(op);
      return;
    case OpRole::per_head_latent:
      op.repeat /= Y_;
      return;
    case OpRole::out_proj:
      gemm->k /= Y_;
      place(i + 1, CollectiveKind::reduce_scatter, act_bytes_, tag + ".reduce_scatter", op.group,
            Decompose::previous_gemm);
      return;
    case OpRole::ffn_in:
    case OpRole::ffn_vector:
      tensor_parallel_ffn(op);
      return;
    case OpRole::ffn_out:
      tensor_parallel_ffn(op);
      place(i + 1, CollectiveKind::reduce_scatter, act_bytes_, tag + ".reduce_scatter", op.group,
            Decompose::previous_gemm);
      return;
    case OpRole::shared_in:
    case OpRole::shared_vector:
    case OpRole::shared_out:  // with expert parallelism, on the chip's own tokens
      if (ep_here) token_rows(op, Tl_);
      else tensor_parallel_ffn(op);
      return;
    case OpRole::expert_in:
    case OpRole::expert_vector:
    case OpRole::expert_out:
      if (ep_here) shard_routed_expert(i, group_name);
      else tensor_parallel_ffn(op);
      return;
    case OpRole::router:  // without expert parallelism every chip routes every token
      if (ep_here) gemm->m = Tl_;
      return;
    case OpRole::router_softmax:
      if (!ep_here) return;
      vec->rows = Tl_;
      dispatch_after(i);
      return;
    case OpRole::moe_weight:
      if (ep_here) vec->rows = Tl_ * m_.moe->top_k;
      return;
    case OpRole::moe_combine:
      if (ep_here) vec->rows = Tl_ * m_.moe->top_k;
      else
        place(i + 1, CollectiveKind::reduce_scatter, act_bytes_, tag + ".reduce_scatter", op.group,
              Decompose::none);
      return;
  }
}

// The stage of a pipeline (pp > 1) `chip` runs: pp consecutive runs of layers/pp layers, the
// embedding on the first, the head on the last; each chip passes on the Tl tokens it holds.
PipelineStage pipeline_stage(const Lowered& l, const ModelSpec& m, const ShardOptions& o, int chip) {
  PipelineStage st;
  const MeshLayout& mesh = *o.mesh;
  st.stage = mesh.rank(MeshAxis::pp, chip);
  st.stages = mesh.spec().of(MeshAxis::pp);
  st.micro_batches = o.micro_batches;
  st.first_layer = st.stage * m.layers / st.stages;
  st.end_layer = (st.stage + 1) * m.layers / st.stages;
  st.group = mesh.group(MeshAxis::pp, chip);
  st.dtype = l.precision.activations;
  const int64_t tokens_held = ceil_div(tokens(l), mesh.spec().of(MeshAxis::tp));
  st.bytes = static_cast<uint64_t>(tokens_held * m.d_model) * dtype_storage_bytes(st.dtype, 1);
  return st;
}

}  // namespace

ShardedLayers shard(const Lowered& l, const ModelSpec& m, const ShardOptions& o, int chip, int chips) {
  check_degrees(m, o, chips);
  ShardedLayers out{l, {}, std::nullopt};
  Sharder sharder(l, m, o, chip, out);
  for (size_t i = 0; i < out.lowered.ops.size(); ++i) sharder.shard_op(i);
  for (auto& c : out.collectives)
    if (c.work.kind == CollectiveKind::all_to_all) {
      uint64_t sum = 0;
      for (uint64_t b : c.work.send_bytes) sum += b;
      c.work.bytes = sum;
    }
  if (o.mesh && o.mesh->spec().of(MeshAxis::pp) > 1) out.stage = pipeline_stage(l, m, o, chip);
  return out;
}

}  // namespace systolic::transformer
