#include "sim/workload/transformer/shard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "models/common/error.hpp"

namespace systolic::transformer {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

void require_divides(const ModelSpec& m, const char* option, int64_t degree, const char* what, int64_t value) {
  if (value % degree != 0)
    throw InputError(fmt::format("{}: {} {} does not divide {} = {} (expected a degree that divides it)",
                                 m.name, option, degree, what, value));
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

ShardedLayers shard(const Lowered& l, const ModelSpec& m, const ShardOptions& o, int chip, int chips) {
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
  if (Y > 1) {
    require_divides(m, "--tp", Y, "heads", m.heads);
    if (!m.mla) require_divides(m, "--tp", Y, "kv_heads", m.kv_heads);
    if (!m.moe || m.moe->dense_layers > 0) require_divides(m, "--tp", Y, "d_ff", m.d_ff);
    if (m.moe && E == 1) require_divides(m, "--tp", Y, "moe.expert_ff", m.moe->expert_ff);
  }
  if (E > 1) require_divides(m, "--ep", E, "moe.experts", m.moe->experts);

  ShardedLayers out{l, {}};
  Lowered& s = out.lowered;
  const uint64_t w = dtype_storage_bytes(l.precision.activations, 1);  // an activation type: whole bytes
  const int64_t T = l.phase == Phase::prefill ? l.batch * l.length : l.batch;
  const int64_t Tl = ceil_div(T, Y);  // tokens each chip holds between blocks
  const uint64_t act_bytes = static_cast<uint64_t>(T * m.d_model) * w;
  const auto place = [&](size_t before, CollectiveKind kind, uint64_t bytes, const std::string& name, int group,
                         std::vector<uint64_t> send = {}) {
    if (Y == 1 && kind != CollectiveKind::all_to_all) return;
    CollectiveWork c;
    c.name = name;
    c.kind = kind;
    c.bytes = bytes;
    c.dtype = l.precision.activations;
    c.send_bytes = std::move(send);
    c.source = l.source;
    out.collectives.push_back({before, std::move(c), group});
  };

  // Expert parallelism: which experts this chip owns, how many tokens each gets, and how many
  // token-expert assignments go from each chip's T/Y tokens to each chip.
  std::vector<uint64_t> dispatch_bytes, combine_bytes;
  int64_t local_active = 0, local_rows = 0, local_received = 0;
  if (E > 1) {
    const MoeSpec& e = *m.moe;
    const auto share = expert_shares(e.experts, o);
    const int64_t per_chip = e.experts / E;
    std::vector<double> chip_share(static_cast<size_t>(E), 0.0);
    for (int64_t x = 0; x < e.experts; ++x) chip_share[static_cast<size_t>(x / per_chip)] += share[static_cast<size_t>(x)];
    // Every chip routes its T/Y tokens alike: rows[j] of its token-expert assignments go to chip j.
    const std::vector<int64_t> rows = apportion(Tl * e.top_k, chip_share);
    const uint64_t row_bytes = static_cast<uint64_t>(m.d_model) * w;
    for (int64_t j = 0; j < E; ++j) dispatch_bytes.push_back(static_cast<uint64_t>(rows[static_cast<size_t>(j)]) * row_bytes);
    // Results go back the way their tokens came: this chip returns to each chip j what it
    // received from it, rows[chip] rows (the experts here served that many of j's assignments).
    combine_bytes.assign(static_cast<size_t>(E), static_cast<uint64_t>(rows[static_cast<size_t>(chip)]) * row_bytes);
    local_received = E * rows[static_cast<size_t>(chip)];
    // Static shapes: every active local expert runs as many rows as the busiest one gets.
    double busiest = 0;
    for (int64_t x = chip * per_chip; x < (chip + 1) * per_chip; ++x) {
      const double tokens = static_cast<double>(T * e.top_k) * share[static_cast<size_t>(x)];
      busiest = std::max(busiest, tokens);
      if (tokens >= 0.5) ++local_active;
    }
    local_rows = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(busiest - 1e-9)));
    if (local_active == 0) local_active = 1;
  }

  for (size_t i = 0; i < s.ops.size(); ++i) {
    TfOp& op = s.ops[i];
    const LayerGroup& g = s.groups[static_cast<size_t>(op.group)];
    const std::string tag = fmt::format("{}.{}", g.name, op.name);
    const bool moe = g.name == "moe_layer";
    const bool ep_here = moe && E > 1;
    GemmShape* gemm = std::get_if<GemmShape>(&op.shape);
    VectorShape* vec = std::get_if<VectorShape>(&op.shape);
    const std::string& n = op.name;
    const bool expert = n.rfind("expert_", 0) == 0;
    const bool shared = n.rfind("shared_", 0) == 0;
    const bool ffn = n.rfind("ffn_", 0) == 0 && n != "ffn_norm" && n != "ffn_residual";
    const bool tp_ffn = ffn || (shared && !ep_here) || (expert && !ep_here);
    if (n == "pos_embed_add" || n == "attn_norm" || n == "attn_residual" || n == "ffn_norm" || n == "ffn_residual") {
      vec->rows = Tl;
      if (n == "attn_norm" || (n == "ffn_norm" && !ep_here))
        place(i + 1, CollectiveKind::all_gather, act_bytes, tag + ".all_gather", op.group);
    } else if (n == "final_norm") {
      const int64_t rows = vec->rows;
      vec->rows = ceil_div(rows, Y);
      place(i + 1, CollectiveKind::all_gather, static_cast<uint64_t>(rows * m.d_model) * w, tag + ".all_gather", op.group);
    } else if (n == "lm_head") {
      gemm->n = ceil_div(gemm->n, Y);  // the vocabulary padded to a multiple of Y
    } else if (n == "qkv_proj" || n == "q_proj" || n == "q_up" || n == "kv_up") {
      gemm->n /= Y;
    } else if (n == "rope") {
      vec->cols = ceil_div(vec->cols, Y);
    } else if (n == "attn_scores" || n == "softmax" || n == "attn_context") {
      if (op.repeat % Y == 0) op.repeat /= Y;
      else if (gemm) gemm->m = ceil_div(gemm->m, Y);  // MLA decode: one instance per slot, H query rows
      else vec->rows = ceil_div(vec->rows, Y);
    } else if (n == "q_absorb" || n == "v_up") {
      op.repeat /= Y;
    } else if (n == "out_proj") {
      gemm->k /= Y;
      place(i + 1, CollectiveKind::reduce_scatter, act_bytes, tag + ".reduce_scatter", op.group);
    } else if (tp_ffn) {
      if (gemm && (n.find("_gate") != std::string::npos || n.find("_up") != std::string::npos)) gemm->n /= Y;
      else if (gemm) gemm->k /= Y;
      else vec->cols /= Y;
      if (n == "ffn_down") place(i + 1, CollectiveKind::reduce_scatter, act_bytes, tag + ".reduce_scatter", op.group);
    } else if (ep_here && (n == "router" || n == "router_softmax" || shared)) {
      if (gemm) gemm->m = Tl;
      else vec->rows = Tl;
      if (n == "router_softmax") {
        // Dispatch as soon as the routing is known; the first routed-expert matmul waits for
        // it, the shared experts before it do not.
        place(i + 1, CollectiveKind::all_to_all, 0, g.name + ".dispatch", op.group, dispatch_bytes);
        for (size_t j = i + 1; j < s.ops.size() && s.ops[j].group == op.group; ++j)
          if (s.ops[j].name.rfind("expert_", 0) == 0) {
            out.collectives.back().joined_by_op = j;
            break;
          }
      }
    } else if (ep_here && expert) {
      op.repeat = local_active;
      if (gemm) {
        gemm->m = local_rows;  // the rest of local_rows x local_active pads the static shape
        gemm->useful_rows = std::min(local_received, local_rows * local_active);
      }
      else vec->rows = local_rows * local_active;
      if (n == "expert_down") place(i + 1, CollectiveKind::all_to_all, 0, g.name + ".combine", op.group, combine_bytes);
    } else if (n == "moe_weight" || n == "moe_combine") {
      if (ep_here) vec->rows = Tl * m.moe->top_k;
      else if (n == "moe_combine")
        place(i + 1, CollectiveKind::reduce_scatter, act_bytes, tag + ".reduce_scatter", op.group);
    }
  }
  for (auto& c : out.collectives)
    if (c.work.kind == CollectiveKind::all_to_all) {
      uint64_t sum = 0;
      for (uint64_t b : c.work.send_bytes) sum += b;
      c.work.bytes = sum;
    }
  return out;
}

}  // namespace systolic::transformer
