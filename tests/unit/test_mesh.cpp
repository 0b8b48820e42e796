// Parallelism meshes (sim/workload/transformer/shard_mesh.hpp): which chips each group holds on
// a torus, that every MAC and every routed token is computed once whatever the mesh, and that
// a mesh that does not fit the system or the model is refused naming --mesh.
#include <catch2/catch.hpp>

#include <set>

#include "fixtures.hpp"
#include "input_error.hpp"
#include "models/common/error.hpp"
#include "sim/workload/transformer/shard.hpp"
#include "sim/workload/transformer/shard_mesh.hpp"

namespace test_mesh {

using namespace systolic;
using namespace systolic::transformer;
using systolic::testing::input_error_of;
using systolic::testing::kRepo;

namespace {


MeshLayout layout(const std::string& text, std::vector<int64_t> dims, bool wraps = true) {
  return MeshLayout(parse_mesh(text),
                    Topology(std::move(dims), wraps ? Topology::Wrap::torus : Topology::Wrap::mesh));
}

uint64_t macs(const Lowered& l, int64_t first_layer = 0, int64_t end_layer = INT64_MAX, bool embed = true,
              bool head = true) {
  uint64_t total = 0;
  for (const auto& op : l.ops) {
    const LayerGroup& g = l.groups[static_cast<size_t>(op.group)];
    int64_t count = g.count;
    if (g.first_layer >= 0)
      count = std::clamp<int64_t>(end_layer - g.first_layer, 0, g.count) -
              std::clamp<int64_t>(first_layer - g.first_layer, 0, g.count);
    else if (!(g.name == "embed" ? embed : head))
      count = 0;
    total += op.macs() * static_cast<uint64_t>(count);
  }
  return total;
}

}  // namespace

TEST_CASE("Mesh groups: tp takes neighbouring chips, dp strides over them, pp over both", "[mesh]") {
  // 2x4 (chip = x + 2y). tp=4 takes the y axis (the only whole line of 4): chips
  // {0, 2, 4, 6} and {1, 3, 5, 7}; dp=2 what is left, x.
  const MeshLayout a = layout("dp=2,tp=4", {2, 4}, false);
  CHECK(a.factors(MeshAxis::tp) == std::vector<int64_t>{1, 4});
  CHECK(a.factors(MeshAxis::dp) == std::vector<int64_t>{2, 1});
  CHECK(a.group(MeshAxis::tp, 0).members == std::vector<int>{0, 2, 4, 6});
  CHECK(a.group(MeshAxis::tp, 5).members == std::vector<int>{1, 3, 5, 7});
  CHECK(a.group(MeshAxis::dp, 4).members == std::vector<int>{4, 5});
  CHECK(a.rank(MeshAxis::tp, 6) == 3);
  CHECK(a.rank(MeshAxis::dp, 7) == 1);
  CHECK_FALSE(a.group(MeshAxis::tp, 0).wraps);  // a mesh has no wraparound links
  // tp=2@x: the x axis; dp=4 then takes y, and on a torus spans it whole, so its ring wraps.
  const MeshLayout b = layout("tp=2@x,dp=4", {2, 4});
  CHECK(b.group(MeshAxis::tp, 4).members == std::vector<int>{4, 5});
  CHECK(b.group(MeshAxis::dp, 1).members == std::vector<int>{1, 3, 5, 7});
  CHECK(b.group(MeshAxis::dp, 1).wraps);
  // 4x4x4 with tp=8, dp=4 on x, pp=2: no whole-line placement (8 is no product of 4s), so the
  // tiling: tp is [1, 2, 4] (z whole, half of y), dp x, pp the rest of y. (Without @x, dp would
  // take what is left of y first: [2, 2, 1].)
  const MeshLayout c = layout("tp=8,pp=2,dp=4@x", {4, 4, 4});
  CHECK(c.factors(MeshAxis::tp) == std::vector<int64_t>{1, 2, 4});
  CHECK(c.factors(MeshAxis::dp) == std::vector<int64_t>{4, 1, 1});
  CHECK(c.factors(MeshAxis::pp) == std::vector<int64_t>{1, 2, 1});
  // Every chip in exactly one group of each axis, of the axis's size.
  for (MeshAxis axis : {MeshAxis::tp, MeshAxis::dp, MeshAxis::pp}) {
    std::set<int> seen;
    for (int chip = 0; chip < 64; ++chip) {
      const ChipGroup g = c.group(axis, chip);
      CHECK(static_cast<int64_t>(g.members.size()) == c.spec().of(axis));
      CHECK(g.members[static_cast<size_t>(c.rank(axis, chip))] == chip);
      if (g.members[0] == chip) seen.insert(g.members.begin(), g.members.end());
    }
    CHECK(seen.size() == 64);
  }
  // Experts fold over a stage's dp x tp chips, tp fastest: ep=4 on dp=2,tp=2 (2x2, tp on y) is
  // all four, tp's pair {0, 2} first.
  const MeshLayout d = layout("dp=2,tp=2@y,ep=4", {2, 2});
  CHECK(d.expert_group(3).members == std::vector<int>{0, 2, 1, 3});
  CHECK(d.expert_rank(1) == 2);
}

TEST_CASE("Mesh placement: whole torus lines where the degrees allow, tp, then pp, then dp", "[mesh]") {
  using F = std::vector<int64_t>;
  // tpu-v5p-1024's 8x8x16: tp=8 takes x (x and y hold 8; the lower), pp=16 z, dp=8 y: the
  // layout of tp=8@x,dp=8@y,pp=16@z, chip for chip. tp's ring is a wrapped line of x.
  const MeshLayout v5p = layout("dp=8,pp=16,tp=8", {8, 8, 16});
  CHECK(v5p.factors(MeshAxis::tp) == F{8, 1, 1});
  CHECK(v5p.factors(MeshAxis::dp) == F{1, 8, 1});
  CHECK(v5p.factors(MeshAxis::pp) == F{1, 1, 16});
  CHECK(v5p.group(MeshAxis::tp, 0).members == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(v5p.group(MeshAxis::tp, 0).wraps);
  CHECK(v5p.group(MeshAxis::pp, 9).members[1] == 9 + 64);  // the next stage: one hop along z
  const MeshLayout lines = layout("tp=8@x,dp=8@y,pp=16@z", {8, 8, 16});
  for (int chip = 0; chip < 1024; chip += 37)
    for (MeshAxis axis : {MeshAxis::tp, MeshAxis::dp, MeshAxis::pp})
      CHECK(v5p.group(axis, chip) == lines.group(axis, chip));
  // 2x4: tp=4 takes y, dp=2 x, on a torus and on a mesh alike.
  for (bool wraps : {true, false}) {
    const MeshLayout m = layout("tp=4,dp=2", {2, 4}, wraps);
    CHECK(m.factors(MeshAxis::tp) == F{1, 4});
    CHECK(m.factors(MeshAxis::dp) == F{2, 1});
  }
  // 2x4 pp=4,tp=2: tp the x pair, pp the y line, its stages 0-2-4-6 one hop apart (the tiling
  // gave tp half of y and pp stages 0-1-4-5, three hops from 1 to 4).
  const MeshLayout pp4 = layout("pp=4,tp=2", {2, 4}, false);
  CHECK(pp4.factors(MeshAxis::tp) == F{2, 1});
  CHECK(pp4.group(MeshAxis::pp, 0).members == std::vector<int>{0, 2, 4, 6});
  // The fewest dimensions first: 2x4x8 tp=8,dp=8 gives tp z alone, dp x and y together. pp
  // chooses before dp: 4x4x4 tp=4,dp=4,pp=4 is tp x, pp y, dp z.
  CHECK(layout("tp=8,dp=8", {2, 4, 8}).factors(MeshAxis::tp) == F{1, 1, 8});
  CHECK(layout("tp=8,dp=8", {2, 4, 8}).factors(MeshAxis::dp) == F{2, 4, 1});
  const MeshLayout cube = layout("tp=4,dp=4,pp=4", {4, 4, 4});
  CHECK(cube.factors(MeshAxis::pp) == F{1, 4, 1});
  CHECK(cube.factors(MeshAxis::dp) == F{1, 1, 4});
  // No whole-line placement: 2x4 has no three lines of 2, so dp=2,pp=2,tp=2 keeps the tiling
  // (tp half of y, dp the other half, pp x), which keeps pp's stages one hop apart.
  const MeshLayout tiled = layout("dp=2,pp=2,tp=2", {2, 4});
  CHECK(tiled.factors(MeshAxis::tp) == F{1, 2});
  CHECK(tiled.factors(MeshAxis::dp) == F{1, 2});
  CHECK(tiled.factors(MeshAxis::pp) == F{2, 1});
  // An explicit @ wins: tp=8@y moves dp to x; tp=2@y (half a line) leaves the tiling on its @
  // axes; dp=4@y with tp=4 now places (tp x, dp y) where the tiling gave tp y first and failed.
  const MeshLayout at_y = layout("dp=8,pp=16,tp=8@y", {8, 8, 16});
  CHECK(at_y.factors(MeshAxis::tp) == F{1, 8, 1});
  CHECK(at_y.factors(MeshAxis::dp) == F{8, 1, 1});
  CHECK(layout("tp=2@y,dp=4", {2, 4}).factors(MeshAxis::tp) == F{1, 2});
  CHECK(layout("tp=2@y,dp=4", {2, 4}).factors(MeshAxis::dp) == F{2, 2});
  const MeshLayout dp_y = layout("tp=4,dp=4@y", {4, 4});
  CHECK(dp_y.factors(MeshAxis::tp) == F{4, 1});
  CHECK(dp_y.factors(MeshAxis::dp) == F{1, 4});
  // tp=8@z on 8x8x16 is half of z, no whole line: the tiling's blocks (the default before whole
  // lines), each stage a 1x4x16: tp z's first 8, dp 4 of y by the rest of z, pp the rest.
  const MeshLayout blocks = layout("tp=8@z,dp=8@yz,pp=16", {8, 8, 16});
  CHECK(blocks.factors(MeshAxis::tp) == F{1, 1, 8});
  CHECK(blocks.factors(MeshAxis::dp) == F{1, 4, 2});
  CHECK(blocks.factors(MeshAxis::pp) == F{8, 2, 1});
}

TEST_CASE("Meshes that do not fit the system or the model are refused naming --mesh", "[mesh]") {
  CHECK(input_error_of([] { parse_mesh("dq=4"); }) ==
        "--mesh 'dq=4': unknown key 'dq': expected tp, dp, pp or ep (did you mean 'dp'?)");
  CHECK(input_error_of([] { parse_mesh("tp=4,tp=2"); }) == "--mesh 'tp=4,tp=2': key 'tp' given twice");
  CHECK(input_error_of([] { parse_mesh("tp=0"); }) ==
        "--mesh 'tp=0': tp=0: expected a degree, an integer in [1, 65536]");
  CHECK(input_error_of([] { parse_mesh("tp=2@w"); }).find("expected distinct torus axes among x, y, z") !=
        std::string::npos);
  CHECK(input_error_of([] {
          layout("dp=2,tp=2", {2, 4});
        }) == "--mesh 'dp=2,tp=2': tp x dp x pp = 4, expected the system's chip count 8 (ici.dims 2x4)");
  CHECK(input_error_of([] {
          layout("tp=4@x,dp=2", {2, 4});
        }).find("tp groups of 4 chips do not tile 2x4") != std::string::npos);
  CHECK(input_error_of([] {
          layout("tp=2@z,dp=4", {2, 4});
        }).find("the system has no z axis") != std::string::npos);
  CHECK(input_error_of([] {
          layout("dp=2,tp=4,ep=3", {2, 4});
        }).find("ep=3 does not divide dp x tp = 8") != std::string::npos);
  // The model: pp must divide the layers, tp the heads.
  const ModelSpec m = load_model(kRepo + "/traces/models/llama2-7b.yaml");
  const Lowered l = lower(m, Phase::prefill, {2, 128});
  const MeshLayout pp3 = layout("pp=3", {3});
  ShardOptions o;
  o.mesh = &pp3;
  CHECK(input_error_of([&] { shard(l, m, o, 0, 3); }) ==
        "llama2-7b: --mesh pp=3 does not divide layers = 32 (expected a degree that divides it)");
  const MeshLayout tp3 = layout("tp=3", {3});
  o.mesh = &tp3;
  CHECK(input_error_of([&] { shard(l, m, o, 0, 3); }).find("--mesh tp=3 does not divide heads = 32") !=
        std::string::npos);
  const MeshLayout ep2 = layout("tp=2,ep=2", {2});
  o.mesh = &ep2;
  CHECK(input_error_of([&] { shard(l, m, o, 0, 2); }).find("ep=2: model 'llama2-7b' has no experts") !=
        std::string::npos);
}

TEST_CASE("Every MAC of a mesh-sharded model is computed once: tp, dp and pp stages", "[mesh]") {
  // Llama-2-7B prefill [4, 256] on 8 chips as dp=2 x pp=2 x tp=2 with 2 micro-batches: each
  // chip lowers one micro-batch of one replica, [1, 256]; over its stage's layers, its micro-
  // batches and every chip, the MACs are the whole batch's.
  const ModelSpec m = load_model(kRepo + "/traces/models/llama2-7b.yaml");
  const Lowered whole = lower(m, Phase::prefill, {4, 256});
  const Lowered micro = lower(m, Phase::prefill, {1, 256});
  const MeshLayout mesh = layout("dp=2,pp=2,tp=2", {2, 4});
  ShardOptions o;
  o.mesh = &mesh;
  o.micro_batches = 2;
  uint64_t sum = 0;
  for (int chip = 0; chip < 8; ++chip) {
    const ShardedLayers s = shard(micro, m, o, chip, 8);
    REQUIRE(s.stage);
    CHECK(s.stage->stages == 2);
    CHECK(s.stage->end_layer - s.stage->first_layer == 16);
    CHECK(s.stage->bytes == uint64_t{128} * 4096 * 2);  // the 256 tokens over tp=2, d_model bf16
    // Every collective runs over this chip's tp group.
    for (const auto& c : s.collectives) CHECK(c.work.group.members == mesh.group(MeshAxis::tp, chip).members);
    sum += 2 * macs(s.lowered, s.stage->first_layer, s.stage->end_layer, s.stage->stage == 0,
                    s.stage->stage == 1);
  }
  CHECK(sum == macs(whole));
}

TEST_CASE("Experts folded over dp x tp route every token-expert assignment once", "[mesh]") {
  // DeepSeek-V3-like on 8 chips: attention tp=2 in each of dp=4 replicas, experts over all 8.
  // Each replica lowers [1, 256] (the bucket [4, 256] over dp): 4 x 256 tokens, top-8.
  const ModelSpec m = load_model(kRepo + "/traces/models/deepseek-v3-moe.yaml");
  const Lowered l = lower(m, Phase::prefill, {1, 256});
  const MeshLayout mesh = layout("dp=4,tp=2,ep=8", {2, 4});
  ShardOptions o;
  o.mesh = &mesh;
  uint64_t dispatched = 0;
  int64_t useful = 0;
  for (int chip = 0; chip < 8; ++chip) {
    const ShardedLayers s = shard(l, m, o, chip, 8);
    for (const auto& c : s.collectives)
      if (c.work.name == "moe_layer.dispatch") {
        dispatched += c.work.bytes;
        CHECK(c.work.group.members.size() == 8);
      }
    for (const auto& op : s.lowered.ops)
      if (op.name == "expert_up") useful += op.gemm()->useful_rows;
  }
  CHECK(dispatched == uint64_t{4} * 256 * 8 * 7168 * 2);
  CHECK(useful == 4 * 256 * 8);
}

}  // namespace test_mesh
