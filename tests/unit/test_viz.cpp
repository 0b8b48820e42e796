// The PE-grid view: the recorder keeps exactly what the exact model computed, a capture
// through simulate() matches the grid run on its own, windows and limits, the page.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "models/common/error.hpp"
#include "models/mxu/dataflow.hpp"
#include "models/mxu/grid_recorder.hpp"
#include "models/mxu/mxu_core.hpp"
#include "models/mxu/pe_grid.hpp"
#include "sim/compile/compile.hpp"
#include "sim/simulate/simulate.hpp"
#include "sim/viz/grid_view.hpp"
#include "sim/viz/html_writer.hpp"
#include "sim/viz/pad_tokens.hpp"
#include "sim/workload/workload.hpp"
#include "tests/unit/fixtures.hpp"

namespace test_viz {

using namespace systolic;

namespace {

// Copies every cycle, as a reference for the recorder.
struct AllCycles : GridObserver {
  std::vector<std::vector<PeState>> frames;
  void on_cycle(uint64_t cycle, const std::vector<PeState>& pes) override {
    REQUIRE(cycle == frames.size());
    frames.push_back(pes);
  }
};

// Ideal memory: the program's transfers take no time, so the grid's cycles are the worked ones.
ChipConfig exact_ideal_chip(int64_t count = 1, int64_t side = 4) {
  ChipConfig c = testing::tiny_chip(count, MxuModel::exact, Convention::tpu, side);
  c.memory.ideal = true;
  return c;
}

std::vector<uint8_t> unbase64(const std::string& s) {
  std::vector<uint8_t> out;
  uint32_t acc = 0;
  int bits = 0;
  for (char ch : s) {
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char* at = std::strchr(alphabet, ch);
    if (ch == '=' || !at) break;
    acc = (acc << 6) | static_cast<uint32_t>(at - alphabet);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>((acc >> bits) & 0xff));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("the recorder keeps the exact model's states for the cycles of its window", "[viz]") {
  // docs/mxu.md's worked example: 4x4 tpu, M=6, K=8, N=4, 22 cycles.
  const auto a = int8_operand(6, 8, 11), b = int8_operand(8, 4, 12);
  Matrix<int32_t> c;
  PeGrid grid({4, 4}, Convention::tpu);
  AllCycles all;
  REQUIRE(grid.run(a, b, c, &all) == 22);

  GridRecorder rec({4, 4}, 110, 116);  // run cycles 10..15 of a run placed at cycle 100
  rec.set_origin(100, 7);
  grid.run(a, b, c, &rec);
  const GridRecording& r = rec.recording();
  REQUIRE(r.frames() == 6);
  for (size_t f = 0; f < r.frames(); ++f) {
    CHECK(r.cycle[f] == 110 + f);
    CHECK(r.tag[f] == 7);
    for (int64_t i = 0; i < 16; ++i) {
      const PeState& p = all.frames[10 + f][static_cast<size_t>(i)];
      const size_t at = r.at(f, i / 4, i % 4);
      CHECK(r.weight[at] == p.weight);
      CHECK(r.shadow[at] == p.shadow);
      CHECK(r.activation[at] == p.activation);
      CHECK(r.psum[at] == p.psum);
      CHECK(r.fold[at] == p.fold);
      CHECK(r.active[at] == (p.active ? 1 : 0));
    }
  }
  // docs/mxu.md: at cycle 13 the bottom row holds fold 1's (0, 0) in column 0 and fold 0's
  // (5, 1), (4, 2), (3, 3) in columns 1-3.
  const size_t f13 = 3;
  CHECK(r.fold[r.at(f13, 3, 0)] == 1);
  CHECK(r.fold[r.at(f13, 3, 1)] == 0);
  CHECK(r.fold[r.at(f13, 3, 3)] == 0);
  // Fold 1's (0, 0) leaving: sum over its 4 rows, i.e. K = 4..7.
  int32_t expect = 0;
  for (int k = 4; k < 8; ++k) expect += int32_t{a(0, k)} * int32_t{b(k, 0)};
  CHECK(r.psum[r.at(f13, 3, 0)] == expect);

  GridRecorder twice({4, 4});
  grid.run(a, b, c, &twice);
  CHECK_THROWS_AS(grid.run(a, b, c, &twice), std::logic_error);  // same cycles again
}

TEST_CASE("a capture through simulate() is what the MXU's grid computed", "[viz]") {
  const auto cfg = exact_ideal_chip();
  const auto w = testing::gemm_workload({{"worked", 6, 8, 4, {}, 1, "t:1"}, {"ragged", 5, 6, 3, {}, 1, "t:2"}});
  const Program program = compile(cfg, w);
  const GridView view = capture_grid_view(cfg, "test", program, {});
  CHECK(view.first == 0);
  CHECK(view.last == 42);
  CHECK(view.total_cycles == 42);
  REQUIRE(view.recording.frames() == 42);
  REQUIRE(view.instructions.size() == 2);
  CHECK(view.instructions[1].layer_name == "ragged");
  CHECK(view.instructions[1].start == 22);
  CHECK(view.instructions[1].folds.total() == 2);

  // The second layer on its own grid, with the operands its engine uses (mxu_engine.cpp:
  // layer seed = config seed * 1000003 + layer index).
  AllCycles all;
  auto core = make_exact_mxu({{4, 4}, {}, Convention::tpu}, &all);
  const MatmulOp op = std::get<MatmulOp>(program.streams[0].instructions[1].op);
  REQUIRE(core->execute(op, cfg.mxu.seed * 1000003u + 1) == 20);
  const GridRecording& r = view.recording;
  for (size_t t = 0; t < 20; ++t) {
    const size_t f = 22 + t;
    REQUIRE(r.cycle[f] == 22 + t);
    CHECK(r.tag[f] == 1);
    for (int64_t i = 0; i < 16; ++i) {
      const PeState& p = all.frames[t][static_cast<size_t>(i)];
      CHECK(r.psum[r.at(f, i / 4, i % 4)] == p.psum);
      CHECK(r.weight[r.at(f, i / 4, i % 4)] == p.weight);
      CHECK(r.activation[r.at(f, i / 4, i % 4)] == p.activation);
    }
  }

  SECTION("--layer and --cycles select a window") {
    VizRequest q;
    q.layer = "ragged";
    const GridView v = capture_grid_view(cfg, "test", program, q);
    CHECK(v.first == 22);
    CHECK(v.last == 42);
    CHECK(v.recording.frames() == 20);
    q.first = 30;
    q.last = 100;
    const GridView v2 = capture_grid_view(cfg, "test", program, q);
    CHECK(v2.first == 30);
    CHECK(v2.last == 42);
    CHECK(v2.recording.cycle.front() == 30);
  }
}

TEST_CASE("viz follows the chosen MXU", "[viz]") {
  // N = 10 on 4 columns: mxu0 takes column folds 0-1, mxu1 fold 2 (N = 2 from n_offset 8).
  const auto cfg = exact_ideal_chip(2);
  const Program program = compile(cfg, testing::gemm_workload({{"l1", 5, 4, 10, {}, 1, "t:1"}}));
  VizRequest q;
  q.mxu = 1;
  const GridView v = capture_grid_view(cfg, "test", program, q);
  CHECK(v.engine == "mxu1");
  REQUIRE(v.instructions.size() == 1);
  CHECK(v.instructions[0].op.n_offset == 8);
  CHECK(v.recording.frames() == 15);  // 4 + (5 + 4 + 4 - 2)
  CHECK(v.last == 20);                // the window is the run; mxu1 idles after 15
  q.mxu = 2;
  CHECK_THROWS_AS(capture_grid_view(cfg, "test", program, q), InputError);
}

TEST_CASE("viz refuses what would not make a useful page", "[viz]") {
  const auto w = testing::gemm_workload({{"big", 64, 64, 64, {}, 1, "t:1"}});
  {
    const auto cfg = exact_ideal_chip(1, 64);
    CHECK_THROWS_WITH(capture_grid_view(cfg, "t", compile(cfg, w), {}),
                      Catch::Contains("up to 32x32") && Catch::Contains("64x64"));
  }
  const auto cfg = exact_ideal_chip(1, 32);
  const Program program = compile(cfg, testing::gemm_workload({{"big", 2048, 64, 64, {}, 1, "t:1"}}));
  CHECK_THROWS_WITH(capture_grid_view(cfg, "t", program, {}),
                    Catch::Contains("--cycles 0:512"));
  VizRequest q;
  q.first = 100;
  q.last = 400;
  CHECK(capture_grid_view(cfg, "t", program, q).recording.frames() == 300);
  q.layer = "bgi";
  CHECK_THROWS_WITH(capture_grid_view(cfg, "t", program, q), Catch::Contains("did you mean 'big'"));
  q.layer = "big";
  q.first = 1000000;
  q.last = std::nullopt;
  CHECK_THROWS_WITH(capture_grid_view(cfg, "t", program, q), Catch::Contains("selects nothing"));
}

TEST_CASE("cycle ranges (--cycles) parse like a Python slice", "[viz]") {
  VizRequest q;
  parse_cycle_range("10:40", q);
  CHECK(*q.first == 10);
  CHECK(*q.last == 40);
  parse_cycle_range(":7", q);
  CHECK(!q.first);
  CHECK(*q.last == 7);
  parse_cycle_range("5:", q);
  CHECK(*q.first == 5);
  CHECK(!q.last);
  for (const char* bad : {"10", "a:b", "-1:4", "9:3", "4:4", "1:2:3"})
    CHECK_THROWS_AS(parse_cycle_range(bad, q), InputError);
}

TEST_CASE("the page is self-contained and carries the recorded values", "[viz]") {
  const auto cfg = exact_ideal_chip();
  const auto w = testing::gemm_workload({{"worked</script>", 6, 8, 4, {}, 1, "t:1"}});
  const GridView view = capture_grid_view(cfg, "test", compile(cfg, w), {});
  const std::string page = grid_view_html(view);
  CHECK(page.find("@@SYSTOLIC_DATA@@") == std::string::npos);
  for (const char* external : {"http:", "https:", "<link", "src=", "@import", "url("})
    CHECK(page.find(external) == std::string::npos);
  CHECK(page.find("worked</script>") == std::string::npos);  // escaped inside the JSON
  CHECK(page.size() < 100000);

  const auto data = grid_view_data(view);
  CHECK(data["values"] == "int");
  CHECK(data["frames"]["count"] == 22);
  const auto psum = unbase64(data["pe"]["psum"]["data"].get<std::string>());
  REQUIRE(psum.size() == 22 * 16 * 4);
  for (size_t i = 0; i < 22 * 16; ++i) {
    int32_t v;
    std::memcpy(&v, psum.data() + 4 * i, 4);
    CHECK(v == view.recording.psum[i]);
  }
  // Flags: the 4x4 worked example has no padding; useful MACs = M*K*N over the run.
  const auto flags = unbase64(data["pe"]["flags"]["data"].get<std::string>());
  int useful = 0;
  for (uint8_t f : flags) {
    CHECK((f & 0x0e) == 0);
    useful += f & 1;
  }
  CHECK(useful == 6 * 8 * 4 / 1);  // one MAC per PE per useful cycle
}

TEST_CASE("the page marks padded rows and columns", "[viz]") {
  const auto cfg = exact_ideal_chip();
  const GridView view =
      capture_grid_view(cfg, "test", compile(cfg, testing::gemm_workload({{"ragged", 5, 6, 3, {}, 1, "t:1"}})), {});
  const auto data = grid_view_data(view);
  const auto flags = unbase64(data["pe"]["flags"]["data"].get<std::string>());
  const GridRecording& r = view.recording;
  int pad_rows = 0, pad_cols = 0, useful = 0;
  for (size_t f = 0; f < r.frames(); ++f)
    for (int64_t row = 0; row < 4; ++row)
      for (int64_t col = 0; col < 4; ++col) {
        const size_t at = r.at(f, row, col);
        const uint8_t fl = flags[at];
        useful += fl & 1;
        if (fl & 2) {
          ++pad_rows;
          CHECK(r.fold[at] == 1);  // only fold 1 (K rows 4-5) has padded rows
          CHECK(row >= 2);
        }
        if (fl & 4) {
          ++pad_cols;
          CHECK(col == 3);  // N = 3
        }
        CHECK(((fl & 1) != 0) == (r.fold[at] >= 0 && !(fl & 6)));
      }
  CHECK(useful == 5 * 6 * 3);
  CHECK(pad_rows == 5 * 2 * 4);         // M x 2 padded rows x 4 columns
  CHECK(pad_cols == 2 * 5 * 4);         // 2 folds x M x 4 rows
}

// ---- pad tokens ---------------------------------------------------------------------------

TEST_CASE("the recorder flags a pad row in exactly the PEs it passes through", "[viz][pad]") {
  // The worked example (M=6, K=8, N=4: folds 0 and 1 stream from S_0 = 4 and S_1 = 10) with
  // rows 4 and 5 of A marked as pad tokens.
  const auto a = int8_operand(6, 8, 11), b = int8_operand(8, 4, 12);
  Matrix<int32_t> c;
  PeGrid grid({4, 4}, Convention::tpu);
  GridRecorder rec({4, 4});
  rec.set_origin(0, 0, {0, 0, 0, 0, 1, 1});
  REQUIRE(grid.run(a, b, c, &rec) == 22);
  const GridRecording& r = rec.recording();
  const int64_t starts[2] = {4, 10};
  int pads = 0;
  for (size_t f = 0; f < r.frames(); ++f)
    for (int64_t row = 0; row < 4; ++row)
      for (int64_t col = 0; col < 4; ++col) {
        // PE(r, c) works on row m = t - S_g - r - c of the newest fold g streaming there.
        const int64_t d = static_cast<int64_t>(r.cycle[f]) - row - col;
        int64_t m = -1;
        for (int g = 1; g >= 0; --g)
          if (d >= starts[g]) {
            m = d - starts[g] < 6 ? d - starts[g] : -1;
            break;
          }
        const size_t at = r.at(f, row, col);
        CHECK(r.row[at] == m);
        CHECK(r.pad_token[at] == (m >= 4 ? 1 : 0));
        pads += r.pad_token[at];
      }
  // Each row of A passes every PE once per fold: 2 rows x 2 folds x 16 PEs.
  CHECK(pads == 2 * 2 * 16);
}

TEST_CASE("which rows of A are pad tokens, layer by layer", "[viz][pad]") {
  const PadTokens t{{2, 4}, {3, 1}, "test"};  // lane 0: 3 useful + 1 pad, lane 1: 1 + 3
  CHECK(t.pad_count() == 4);
  const auto layer = [](const char* name, int64_t m, LayerKind kind) {
    LayerInfo l;
    l.name = name;
    l.m = m;
    l.kind = kind;
    return l;
  };
  using Rows = std::vector<uint8_t>;
  CHECK(pad_token_rows(t, layer("layer.qkv_proj", 8, LayerKind::matmul), 0) == Rows{0, 0, 0, 1, 0, 1, 1, 1});
  CHECK(pad_token_rows(t, layer("layer.attn_scores", 4, LayerKind::attention), 0) == Rows{0, 0, 0, 1});
  CHECK(pad_token_rows(t, layer("layer.attn_scores", 4, LayerKind::attention), 1) == Rows{0, 1, 1, 1});
  CHECK(pad_token_rows(t, layer("layer.attn_context", 4, LayerKind::attention), 6) == Rows{0, 0, 0, 1});
  CHECK(pad_token_rows(t, layer("head.lm_head", 2, LayerKind::matmul), 0) == Rows{0, 0});
  CHECK(pad_token_rows({{2, 4}, {3, 0}, ""}, layer("head.lm_head", 2, LayerKind::matmul), 0) == Rows{0, 1});
  CHECK(pad_token_rows(t, layer("moe_layer.expert_up", 8, LayerKind::matmul), 0).empty());
  CHECK(pad_token_rows(t, layer("layer.ffn_act", 8, LayerKind::vector), 0).empty());
  CHECK(pad_token_rows(t, layer("other", 5, LayerKind::matmul), 0).empty());

  const PadTokens u = uniform_pad_tokens({1, 8}, 3);
  CHECK(u.useful == std::vector<int64_t>{5});
  CHECK(uniform_pad_tokens({2, 8}, 8).useful == std::vector<int64_t>{0, 0});
  CHECK_THROWS_WITH(uniform_pad_tokens({1, 8}, 9), Catch::Contains("0 to S = 8"));
}

TEST_CASE("viz flags the pad tokens of a prefill bucket in the exact model's recording", "[viz][pad]") {
  const auto cfg = exact_ideal_chip();
  const std::string model = std::string(SYSTOLIC_SOURCE_DIR) + "/tests/py/data/tiny-lm.yaml";
  const Program program = compile(cfg, load_workload(model, {"2x4", "prefill"}));
  VizRequest q;
  q.pad_tokens = PadTokens{{2, 4}, {3, 1}, "test"};
  const auto expect_lane = [&](int64_t lane) {
    std::vector<uint8_t> rows;
    for (int64_t s = 0; s < 4; ++s) rows.push_back(s >= q.pad_tokens->useful[static_cast<size_t>(lane)]);
    return rows;
  };
  for (const char* name : {"layer.qkv_proj", "layer.attn_scores", "layer.attn_context", "head.lm_head"}) {
    INFO(name);
    q.layer = name;
    const GridView v = capture_grid_view(cfg, "test", program, q);
    const GridRecording& r = v.recording;
    const bool attention = std::string(name).find("attn") != std::string::npos;
    for (const auto& gi : v.instructions) {
      if (attention) {
        CHECK(gi.pad_rows == expect_lane(gi.instance % 2));
      } else if (gi.op.m == 8) {
        CHECK(gi.pad_rows == std::vector<uint8_t>{0, 0, 0, 1, 0, 1, 1, 1});
      } else {
        CHECK(gi.pad_rows == std::vector<uint8_t>{0, 0});  // the LM head: no lane is empty
      }
    }
    const auto data = grid_view_data(v);
    const auto flags = unbase64(data["pe"]["flags"]["data"].get<std::string>());
    const auto pad_frames = unbase64(data["frames"]["pad"]["data"].get<std::string>());
    REQUIRE(flags.size() == r.fold.size());
    size_t flagged = 0, wasted = 0, page_wasted = 0;
    for (size_t f = 0; f < r.frames(); ++f) {
      const auto& gi = v.instructions.at(static_cast<size_t>(r.tag[f]));
      uint32_t n;
      std::memcpy(&n, pad_frames.data() + 4 * f, 4);
      page_wasted += n;
      for (size_t i = f * r.pes(); i < (f + 1) * r.pes(); ++i) {
        const bool pad = r.row[i] >= 0 && !gi.pad_rows.empty() && gi.pad_rows.at(static_cast<size_t>(r.row[i]));
        CHECK(r.pad_token[i] == (pad ? 1 : 0));
        CHECK(((flags[i] & 8) != 0) == pad);
        CHECK(!((flags[i] & 8) && (flags[i] & 1)));  // a MAC on a pad token is not useful
        flagged += pad;
        wasted += pad && r.active[i];
      }
    }
    CHECK(page_wasted == wasted);
    if (std::string(name) == "head.lm_head") CHECK(flagged == 0);
    else CHECK(flagged > 0);
    CHECK(data["tokens"]["pad"] == 4);
  }

  SECTION("with the real memory system and row tiles, each matmul flags its own rows") {
    auto real = cfg;
    real.memory.ideal = false;
    real.sram.vmem.capacity_bytes = 2 * 4 * 8;  // ping and pong of 4 rows of K = d_model = 8 int8
    real.sram.vmem.banks = 4;
    q.layer = "layer.qkv_proj";
    const std::vector<uint8_t> all{0, 0, 0, 1, 0, 1, 1, 1};
    const GridView v = capture_grid_view(real, "t", compile(real, load_workload(model, {"2x4", "prefill"})), q);
    bool tiled_rows = false;
    for (const auto& gi : v.instructions) {
      tiled_rows = tiled_rows || gi.op.m < 8;
      CHECK(gi.pad_rows == std::vector<uint8_t>(all.begin() + gi.op.m_offset, all.begin() + gi.op.m_offset + gi.op.m));
    }
    CHECK(tiled_rows);
  }

  SECTION("refusals") {
    q.layer = "";
    const Program gemms = compile(cfg, testing::gemm_workload({{"g", 5, 4, 4, {}, 1, "t:1"}}));
    CHECK_THROWS_WITH(capture_grid_view(cfg, "t", gemms, q), Catch::Contains("no layer of the program"));
  }
}

TEST_CASE("a packed prefill instance from a request log", "[viz][pad]") {
  const std::string data = std::string(SYSTOLIC_SOURCE_DIR) + "/tests/py/data/";
  // Requests of 5, 2 and 3 tokens within 2 ms, then one of 7: with a 5 ms window,
  // first-fit-decreasing packs 5 + 3 into one lane of 8 and 2 into another: [2, 8].
  const PadTokens first = packed_instance(data + "tiny-requests.csv", data + "tiny-buckets.yaml", 0, "ffd", 5);
  CHECK(first.bucket == packing::Shape{2, 8});
  CHECK(first.useful == std::vector<int64_t>{8, 2});
  CHECK(first.pad_count() == 6);
  CHECK(first.origin.find("[#0+#2] [#1]") != std::string::npos);
  const PadTokens second = packed_instance(data + "tiny-requests.csv", data + "tiny-buckets.yaml", 1, "ffd", 5);
  CHECK(second.bucket == packing::Shape{1, 8});
  CHECK(second.useful == std::vector<int64_t>{7});
  CHECK_THROWS_WITH(packed_instance(data + "tiny-requests.csv", data + "tiny-buckets.yaml", 2, "ffd", 5),
                    Catch::Contains("gives 2 prefill instances (0 to 1)"));
  CHECK_THROWS_WITH(packed_instance(data + "tiny-requests.csv", data + "tiny-buckets.yaml", 0, "fff", 5),
                    Catch::Contains("--policy 'fff'"));
}

TEST_CASE("every dataflow has its own page: os and is differ from ws", "[viz][dataflow]") {
  // M=5, K=6, N=3 on 4x4: ragged in every dimension, whichever two lie along the array.
  const auto w = testing::gemm_workload({{"ragged", 5, 6, 3, {}, 1, "t:1"}});
  std::map<std::string, GridRecording> recordings;
  for (const Dataflow* d : dataflows()) {
    INFO(d->name());
    ChipConfig cfg = exact_ideal_chip();
    cfg.mxu.dataflow = d->kind();
    const GridView view = capture_grid_view(cfg, "test", compile(cfg, w), {});
    const auto data = grid_view_data(view);
    CHECK(data["chip"]["dataflow"] == std::string(d->name()));
    CHECK(grid_view_html(view).find("\"dataflow\":\"" + std::string(d->name()) + "\"") != std::string::npos);
    // One frame per cycle of the matmul, as the closed form says; every real MAC seen once,
    // and never in a PE flagged as padding.
    CHECK(data["frames"]["count"] == d->cycles({4, 4}, Convention::tpu, {5, 6, 3}));
    const auto flags = unbase64(data["pe"]["flags"]["data"].get<std::string>());
    int useful = 0;
    for (uint8_t f : flags) {
      useful += f & 1;
      CHECK(!((f & 1) && (f & 6)));
    }
    CHECK(useful == 5 * 6 * 3);
    recordings[std::string(d->name())] = view.recording;
  }
  for (const char* other : {"os", "is"}) {
    const GridRecording &a = recordings.at("ws"), &b = recordings.at(other);
    CHECK((a.frames() != b.frames() || a.psum != b.psum || a.weight != b.weight));
  }
}

TEST_CASE("pad tokens are marked under ws only, and refused by name otherwise", "[viz][pad][dataflow]") {
  const std::string model = std::string(SYSTOLIC_SOURCE_DIR) + "/tests/py/data/tiny-lm.yaml";
  VizRequest q;
  q.pad_tokens = PadTokens{{2, 4}, {3, 1}, "test"};
  for (const Dataflow* d : dataflows()) {
    if (d->kind() == DataflowKind::ws) continue;
    ChipConfig cfg = exact_ideal_chip();
    cfg.mxu.dataflow = d->kind();
    const Program program = compile(cfg, load_workload(model, {"2x4", "prefill"}));
    CHECK_THROWS_WITH(capture_grid_view(cfg, "test", program, q),
                      Catch::Contains("pad tokens are marked under mxu.dataflow ws only (got " + std::string(d->name())));
  }
}

}  // namespace test_viz
