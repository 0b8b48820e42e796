// Sharding a transformer over chips (sim/workload/transformer/shard.hpp): what each chip computes adds
// up to the unsharded model, and the collectives between them move what Megatron-style
// tensor parallelism and expert parallelism must move.
#include <catch2/catch.hpp>

#include <numeric>

#include "fixtures.hpp"
#include "models/common/error.hpp"
#include "sim/workload/transformer/shard.hpp"

namespace test_shard {

using namespace systolic;
using namespace systolic::transformer;

namespace {


using Placed = std::pair<CollectiveKind, uint64_t>;
using systolic::testing::kRepo;

uint64_t macs(const Lowered& l) {
  uint64_t total = 0;
  for (const auto& op : l.ops) total += op.macs() * static_cast<uint64_t>(l.groups[static_cast<size_t>(op.group)].count);
  return total;
}

}  // namespace

TEST_CASE("Tensor parallelism splits every MAC of Llama-2-7B prefill exactly once", "[shard]") {
  const ModelSpec m = load_model(kRepo + "/traces/models/llama2-7b.yaml");
  const Lowered whole = lower(m, Phase::prefill, {2, 512});
  for (int y : {2, 4, 8}) {
    uint64_t sum = 0;
    for (int chip = 0; chip < y; ++chip) {
      const ShardedLayers s = shard(whole, m, {y, 1}, chip, y);
      sum += macs(s.lowered);
      // Per layer: all-gathers before attention and FFN, reduce-scatters after out_proj and
      // ffn_down, each of the [T, d] activations: 1024 x 4096 x 2 B. The head gathers the
      // two last tokens.
      std::vector<Placed> seen;
      for (const auto& c : s.collectives) seen.emplace_back(c.work.kind, c.work.bytes);
      const uint64_t act = uint64_t{1024} * 4096 * 2;
      REQUIRE(seen.size() == 5);
      CHECK(seen[0] == Placed(CollectiveKind::all_gather, act));
      CHECK(seen[1] == Placed(CollectiveKind::reduce_scatter, act));
      CHECK(seen[2] == Placed(CollectiveKind::all_gather, act));
      CHECK(seen[3] == Placed(CollectiveKind::reduce_scatter, act));
      CHECK(seen[4] == Placed(CollectiveKind::all_gather, uint64_t{2} * 4096 * 2));
      CHECK(s.lowered.groups[static_cast<size_t>(s.collectives[0].group)].count == 32);  // in every layer
    }
    CHECK(sum == macs(whole));
  }
}

TEST_CASE("Expert parallelism routes every token-expert assignment once", "[shard]") {
  const ModelSpec m = load_model(kRepo + "/traces/models/deepseek-v3-moe.yaml");
  const Lowered whole = lower(m, Phase::prefill, {1, 1024});
  const int chips = 8;
  const uint64_t row = 7168 * 2;  // one token's activations, bf16
  for (Routing routing : {Routing::uniform, Routing::skewed}) {
    ShardOptions o{chips, chips, routing, 1.0, 7};
    uint64_t dispatched = 0, combined = 0;
    int64_t useful_rows = 0, issued_rows = 0;
    std::vector<uint64_t> received(chips, 0);
    for (int chip = 0; chip < chips; ++chip) {
      const ShardedLayers s = shard(whole, m, o, chip, chips);
      for (const auto& op : s.lowered.ops)
        if (op.name == "expert_up") {
          useful_rows += op.gemm()->useful_rows >= 0 ? op.gemm()->useful_rows : op.gemm()->m * op.repeat;
          issued_rows += op.gemm()->m * op.repeat;
        }
      for (const auto& c : s.collectives)
        if (c.work.name == "moe_layer.combine") combined += c.work.bytes;
      const PlacedCollective* dispatch = nullptr;
      for (const auto& c : s.collectives)
        if (c.work.name == "moe_layer.dispatch") dispatch = &c;
      REQUIRE(dispatch);
      // Sent right after the routing; the shared expert runs before the first routed-expert
      // matmul waits for it.
      CHECK(s.lowered.ops[dispatch->before_op - 1].name == "router_softmax");
      REQUIRE(dispatch->joined_by_op);
      CHECK(s.lowered.ops[*dispatch->joined_by_op].name == "expert_gate");
      for (size_t i = dispatch->before_op; i < *dispatch->joined_by_op; ++i)
        CHECK(s.lowered.ops[i].name.rfind("shared_", 0) == 0);
      for (int j = 0; j < chips; ++j) received[static_cast<size_t>(j)] += dispatch->work.send_bytes[static_cast<size_t>(j)];
      dispatched += dispatch->work.bytes;
    }
    // 1024 tokens x top-8, each a row of d_model, exactly (largest-remainder apportionment);
    // the combines bring every row back; the experts' useful rows are those assignments, the
    // rest of what they issue pads each local expert to the busiest one's rows.
    CHECK(dispatched == 1024 * 8 * row);
    CHECK(combined == dispatched);
    CHECK(useful_rows == 1024 * 8);
    if (routing == Routing::uniform) CHECK(issued_rows == useful_rows);
    else CHECK(issued_rows > 2 * useful_rows);
    const auto [lo, hi] = std::minmax_element(received.begin(), received.end());
    if (routing == Routing::uniform) CHECK(*hi - *lo <= chips * row);
    else CHECK(*hi > 2 * *lo);  // Zipf: some chips hold the popular experts
  }
  // The expert shares sum to one and depend on the seed only through the permutation.
  const auto a = expert_shares(256, {1, 1, Routing::skewed, 1.0, 1});
  const auto b = expert_shares(256, {1, 1, Routing::skewed, 1.0, 2});
  CHECK(std::accumulate(a.begin(), a.end(), 0.0) == Approx(1.0));
  CHECK(a != b);
  CHECK(*std::max_element(a.begin(), a.end()) == Approx(*std::max_element(b.begin(), b.end())));
}

TEST_CASE("Sharding degrees that do not fit the model or the system are rejected", "[shard]") {
  const ModelSpec m = load_model(kRepo + "/traces/models/llama2-70b.yaml");
  const Lowered l = lower(m, Phase::prefill, {1, 128});
  CHECK_THROWS_WITH(shard(l, m, {3, 1}, 0, 8), Catch::Contains("--tp 3") && Catch::Contains("chip count (8)"));
  // 64 heads, 8 KV heads: 16 chips do not divide the KV heads.
  CHECK_THROWS_WITH(shard(l, m, {16, 1}, 0, 16), Catch::Contains("kv_heads = 8"));
  CHECK_THROWS_WITH(shard(l, m, {8, 8}, 0, 8), Catch::Contains("no experts"));
}

}  // namespace test_shard
