// Timelines (Chrome trace-event JSON): a track per engine, a slice per instruction with its
// operation's fields, stalls and the semaphore arrows that end them, counters.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "sim/compile.hpp"
#include "sim/simulate.hpp"
#include "sim/timeline.hpp"
#include "tests/unit/fixtures.hpp"

using namespace systolic;

namespace {

ChipConfig tiny(int64_t count) { return testing::tiny_chip(count, MxuModel::fast); }

}  // namespace

TEST_CASE("a timeline has a track per engine and a slice per instruction", "[timeline]") {
  // mxu0: l1 folds 0-1 (20 cycles), mxu1: l1 fold 2 (15 cycles); l2 on mxu0 only, at 20.
  const auto cfg = tiny(2);
  const Program program =
      compile(cfg, testing::gemm_workload({{"l1", 5, 4, 10, {}, 1, "t:1"}, {"l2", 1, 4, 4, {}, 1, "t:2"}}));
  const SimResult result = simulate(cfg, program);
  REQUIRE(result.total_cycles == 31);
  const auto tl = make_timeline(cfg, program, result, {{"test counter", {{0, 1.0}, {10, 2.5}}}});

  std::map<int, std::string> tracks;
  std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> slices;
  std::set<std::string> counters;
  int flows = 0;
  uint64_t span = 0;
  for (const auto& e : tl["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M" && e["name"] == "thread_name") tracks[e["tid"]] = e["args"]["name"];
    if (ph == "C") counters.insert(e["name"].get<std::string>());
    if (ph == "s" || ph == "f") ++flows;
  }
  for (const auto& e : tl["traceEvents"]) {
    if (e["ph"] != "X") continue;
    REQUIRE(tracks.count(e["tid"]));
    const std::string track = tracks[e["tid"]];
    const uint64_t ts = e["ts"], dur = e["dur"];
    span = std::max(span, ts + dur);
    if (e["cat"] == "stall") {
      CHECK(e["name"] == "wait mxu_done");
      continue;
    }
    slices[track].push_back({ts, ts + dur});
    CHECK(e["cat"] == "matmul");
    CHECK(e["args"]["op"] == "matmul");
  }
  CHECK(span == result.total_cycles);
  // Every engine of the run has a track, named after it.
  REQUIRE(tracks.size() == result.engines.size());
  CHECK(tracks[1] == "mxu0");
  CHECK(tracks[2] == "mxu1");
  CHECK(slices["mxu0"] == std::vector<std::pair<uint64_t, uint64_t>>{{0, 20}, {20, 31}});
  CHECK(slices["mxu1"] == std::vector<std::pair<uint64_t, uint64_t>>{{0, 15}});
  CHECK(counters.count("test counter"));
  CHECK(counters.count("busy mxu engines"));
  CHECK(flows == 0);  // mxu0 never waited: its own previous instruction ended the last
  CHECK(tl["otherData"]["total_cycles"] == 31);
}

TEST_CASE("a stalled instruction gets a stall slice and an arrow from its releaser", "[timeline]") {
  // Three layers on 2 MXUs: l2 runs on both; mxu1 finishes l1 early and waits for mxu0.
  const auto cfg = tiny(2);
  const Program program = compile(cfg, testing::gemm_workload({{"l1", 5, 4, 10, {}, 1, "t:1"},
                                              {"l2", 5, 4, 8, {}, 1, "t:2"}}));
  const SimResult result = simulate(cfg, program);
  const auto tl = make_timeline(cfg, program, result);
  int stalls = 0;
  std::map<uint64_t, std::vector<nlohmann::ordered_json>> flow;
  for (const auto& e : tl["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "stall") {
      ++stalls;
      CHECK(e["tid"] == 2);  // mxu1
      CHECK(e["ts"] == 15);
      CHECK(e["dur"] == 5);
    }
    if (e["ph"] == "s" || e["ph"] == "f") flow[e["id"].get<uint64_t>()].push_back(e);
  }
  CHECK(stalls == 1);
  REQUIRE(flow.size() == 1);
  const auto& arrow = flow.begin()->second;
  REQUIRE(arrow.size() == 2);
  CHECK(arrow[0]["tid"] == 1);  // from mxu0's l1, inside its slice [0, 20)
  CHECK(arrow[0]["ts"] == 19);
  CHECK(arrow[1]["tid"] == 2);
  CHECK(arrow[1]["ts"] == 20);
}

TEST_CASE("operations describe themselves", "[timeline]") {
  const auto cfg = tiny(1);
  const SimResult none;
  const auto mm = describe_operation(MatmulOp{6, 8, 4, 0, DType::bf16}, cfg, none);
  CHECK(mm["op"] == "matmul");
  CHECK(mm["folds"] == 2);
  CHECK(mm["macs"] == 192);
  CHECK(mm["bytes"] == 6 * 8 * 2 + 8 * 4 * 2 + 6 * 4 * 4);

  DmaOp dma;
  dma.descriptor = DmaDescriptor::linear(DmaEndpoint::hbm(4096), DmaEndpoint::sram(0, 0), 1024);
  const auto d = describe_operation(dma, cfg, none);
  CHECK(d["op"] == "dma");
  CHECK(d["src"] == "hbm");
  CHECK(d["dst"] == "sram0");
  CHECK(d["bytes"] == 1024);
}
