// Timelines (Chrome trace-event JSON): a track per engine, a slice per instruction with its
// operation's fields, stalls and the semaphore arrows that end them, counters.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "sim/compile/compile.hpp"
#include "sim/config/config.hpp"
#include "sim/report/timeline.hpp"
#include "sim/simulate/simulate.hpp"
#include "sim/trace/trace.hpp"
#include "tests/unit/fixtures.hpp"

namespace test_timeline {

using namespace systolic;

namespace {

ChipConfig tiny(int64_t count) { return testing::tiny_chip(count, MxuModel::fast); }
// Ideal memory: the program's DMA transfers take no time, so the MXUs' schedule is hand-worked.
ChipConfig tiny_ideal(int64_t count) {
  ChipConfig c = tiny(count);
  c.memory.ideal = true;
  return c;
}

}  // namespace

TEST_CASE("a timeline has a track per engine and a slice per instruction", "[timeline]") {
  // mxu0: l1 folds 0-1 (20 cycles), mxu1: l1 fold 2 (15 cycles); l2 on mxu0 only, at 20.
  const auto cfg = tiny_ideal(2);
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
    if (e["cat"] == "stall") continue;
    slices[track].push_back({ts, ts + dur});
    CHECK(e["cat"] == (track.rfind("mxu", 0) == 0 ? "matmul" : "dma"));
    CHECK(e["args"]["op"] == (track.rfind("mxu", 0) == 0 ? "matmul" : "dma"));
    if (track.rfind("dma", 0) == 0) CHECK(dur == 0);  // ideal memory: transfers take no time
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
  CHECK(tl["otherData"]["total_cycles"] == 31);
}

TEST_CASE("a stalled instruction gets a stall slice and an arrow from its releaser", "[timeline]") {
  // Two layers on 2 MXUs: l2 runs on both; mxu1 finishes l1 at 15 and waits until mxu0 ends
  // l1 at 20 and l1's output is stored and loaded back (instantly: ideal memory).
  const auto cfg = tiny_ideal(2);
  const Program program = compile(cfg, testing::gemm_workload({{"l1", 5, 4, 10, {}, 1, "t:1"},
                                              {"l2", 5, 4, 8, {}, 1, "t:2"}}));
  const SimResult result = simulate(cfg, program);
  const auto tl = make_timeline(cfg, program, result);
  // Tracks: 1 mxu0, 2 mxu1, then the DMA engines (which wait for their buffers too).
  int stalls = 0;
  std::map<uint64_t, std::vector<nlohmann::ordered_json>> flow;
  for (const auto& e : tl["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "stall" && e["tid"].get<int>() <= 2) {
      ++stalls;
      CHECK(e["tid"] == 2);  // mxu1
      CHECK(e["ts"] == 15);
      CHECK(e["dur"] == 5);
    }
    if (e["ph"] == "s" || e["ph"] == "f") flow[e["id"].get<uint64_t>()].push_back(e);
  }
  CHECK(stalls == 1);
  // The arrow into mxu1's stall comes from the transfer that released it, at 20: the load of
  // l2's activations (dma1), which waited for l1's stored output.
  int into_mxu1 = 0;
  for (const auto& [id, arrow] : flow) {
    REQUIRE(arrow.size() == 2);
    if (arrow[1]["tid"] != 2) continue;
    ++into_mxu1;
    CHECK(arrow[0]["tid"].get<int>() > 2);  // a DMA engine
    CHECK(arrow[1]["ts"] == 20);
  }
  CHECK(into_mxu1 == 1);
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

namespace {

// The value a counter series holds at `cycle` (each point holds until the next).
uint64_t occupancy_at(const SramOccupancy& o, uint64_t cycle) {
  uint64_t v = 0;
  for (const auto& [c, bytes] : o.points)
    if (c <= cycle) v = bytes;
  return v;
}

const InstrRecord& record(const SimResult& r, const std::string& engine, size_t i) {
  for (const auto& e : r.engines)
    if (e.name == engine) return e.records.at(i);
  FAIL("no engine " << engine);
  throw;
}

ChipConfig tiny_memory() {
  auto cfg = testing::tiny_chip(1, MxuModel::fast);
  cfg.memory.ideal = false;
  cfg.sram.vmem.capacity_bytes = 64 << 10;
  cfg.sram.weights.capacity_bytes = 1 << 10;
  cfg.sram.accumulators.capacity_bytes = 4 << 10;
  return cfg;
}

}  // namespace

TEST_CASE("SRAM occupancy of a hand-made program, by the rule of docs/timelines.md", "[timeline][sram]") {
  // dma0 loads A (8x8 int8) in two K slices of 8x4 (32 B each) into vmem, both signalling
  // a_full; dma1 loads a 4x4 int8 weight tile (16 B) into weights. mxu0: mm0 reads slice 0 (waits
  // a_full >= 1), mm1 slice 1 (a_full >= 2); both read the weights (w_full >= 1) and
  // accumulate into one 8x4 output tile (8 x 4 x 4 B = 128 B of int32 accumulators), which
  // dma1 drains to HBM once mm1 signals acc_full.
  const auto cfg = tiny_memory();
  Program p;
  p.layers.push_back({"l", 8, 8, 4, DType::int8, 1, 8 * 8 * 4, "t:1", LayerKind::matmul});
  p.semaphores = {"a_full", "w_full", "acc_full"};
  p.buffers = {{"act", kVmem, 0, 64}, {"wgt", kWeights, 0, 16}, {"acc", kAccumulators, 0, 128}};
  const auto dma = [](DmaDescriptor d, std::vector<SemWait> waits, std::vector<int> signals) {
    return Instruction{DmaOp{d}, 0, std::move(waits), std::move(signals)};
  };
  Stream dma0{{EngineKind::dma, 0}, {}}, dma1{{EngineKind::dma, 1}, {}}, mxu0{{EngineKind::mxu, 0}, {}};
  dma0.instructions.push_back(dma(DmaDescriptor::linear(DmaEndpoint::hbm(0), DmaEndpoint::sram(kVmem, 0), 32), {}, {0}));
  dma0.instructions.push_back(dma(DmaDescriptor::linear(DmaEndpoint::hbm(4096), DmaEndpoint::sram(kVmem, 32), 32), {}, {0}));
  dma1.instructions.push_back(dma(DmaDescriptor::linear(DmaEndpoint::hbm(8192), DmaEndpoint::sram(kWeights, 0), 16), {}, {1}));
  DmaDescriptor store;  // 8 rows of 4 int8 results, out of 32-bit accumulators
  store.element_bytes = 1;
  store.shape = {4, 8, 1};
  store.src = DmaEndpoint::sram(kAccumulators, 0, {1, 4, 0});
  store.dst = DmaEndpoint::hbm(12288, {1, 4, 0});
  dma1.instructions.push_back(dma(store, {{2, 1}}, {}));
  mxu0.instructions.push_back({MatmulOp{8, 4, 4, 0, DType::int8}, 0, {{0, 1}, {1, 1}}, {}});
  mxu0.instructions.push_back({MatmulOp{8, 4, 4, 0, DType::int8}, 0, {{0, 2}, {1, 1}}, {2}});
  p.streams = {mxu0, dma0, dma1};

  const SimResult r = simulate(cfg, p);
  const InstrRecord &a0 = record(r, "dma0", 0), &a1 = record(r, "dma0", 1), &w = record(r, "dma1", 0),
                    &st = record(r, "dma1", 1), &mm0 = record(r, "mxu0", 0), &mm1 = record(r, "mxu0", 1);
  REQUIRE(mm0.end <= mm1.start);
  REQUIRE(a1.end <= mm1.start);

  const auto occ = sram_occupancy(cfg, p, r);
  REQUIRE(occ.size() == 3);
  const SramOccupancy &vmem = occ[0], &wgt = occ[1], &acc = occ[2];
  CHECK(vmem.scratchpad == "vmem");
  CHECK(acc.scratchpad == "accumulators");
  CHECK(acc.capacity_bytes == 4096);
  // Slice 0 from its load's end until mm0 (its only consumer) ends; slice 1 until mm1 ends.
  CHECK(occupancy_at(vmem, a0.end - 1) == 0);
  CHECK(occupancy_at(vmem, a0.end) == 32);
  CHECK(occupancy_at(vmem, std::max(a1.end, mm0.start)) == (a1.end < mm0.end ? 64 : 32));
  CHECK(occupancy_at(vmem, mm1.start) == 32);  // slice 0 released when mm0 ended
  CHECK(occupancy_at(vmem, mm1.end) == 0);
  // The weights: both matmuls wait for w_full >= 1, so until mm1 ends.
  CHECK(occupancy_at(wgt, w.end) == 16);
  CHECK(occupancy_at(wgt, mm1.end - 1) == 16);
  CHECK(occupancy_at(wgt, mm1.end) == 0);
  // The output tile: 32 elements x 4 B, from mm0's start (the first matmul of the group that
  // ends with mm1's acc_full signal) until the store completes.
  CHECK(occupancy_at(acc, mm0.start - 1) == 0);
  CHECK(occupancy_at(acc, mm0.start) == 128);
  CHECK(occupancy_at(acc, st.end - 1) == 128);
  CHECK(occupancy_at(acc, st.end) == 0);
  for (const auto& o : occ) {
    CHECK(o.points.front() == std::make_pair<uint64_t, uint64_t>(0, 0));
    CHECK(o.points.back().second == 0);
  }

  // In the timeline: one counter per scratchpad, with the same points, and each DMA slice
  // names the buffer it fills or drains.
  const auto tl = make_timeline(cfg, p, r);
  std::map<std::string, std::vector<std::pair<uint64_t, double>>> counters;
  std::set<std::string> buffers;
  for (const auto& e : tl["traceEvents"]) {
    if (e["ph"] == "C") counters[e["name"]].push_back({e["ts"], e["args"]["value"]});
    if (e["ph"] == "X" && e["cat"] == "dma") buffers.insert(e["args"]["buffer"].get<std::string>());
  }
  REQUIRE(counters.count("sram vmem (bytes)"));
  REQUIRE(counters.count("sram weights (bytes)"));
  REQUIRE(counters.count("sram accumulators (bytes)"));
  CHECK(counters["sram accumulators (bytes)"].size() == acc.points.size());
  CHECK(tl["otherData"]["sram_capacity_bytes"]["weights"] == 1024);
  CHECK(buffers == std::set<std::string>{"act", "wgt", "acc"});
}

TEST_CASE("SRAM occupancy of compiled programs: within capacity, inside the buffers, 0 at the end",
          "[timeline][sram]") {
  auto cfg = tiny_memory();
  const auto [count, double_buffer] = GENERATE(table<int64_t, bool>({{1, true}, {2, true}, {1, false}, {2, false}}));
  cfg.mxu.count = count;
  cfg.dma.double_buffer = double_buffer;
  // Tiles in K, N and M; one layer a single column fold wide (split over the MXUs in K); repeats.
  const Program p = compile(cfg, testing::gemm_workload({{"a", 40, 24, 20, {}, 1, "t:1"},
                                                         {"b", 9, 40, 4, {}, 2, "t:2"},
                                                         {"c", 300, 8, 12, {}, 1, "t:3"}}));
  const SimResult r = simulate(cfg, p);
  const auto occ = sram_occupancy(cfg, p, r);
  REQUIRE(occ.size() == 3);
  for (const auto& o : occ) {
    INFO(o.scratchpad);
    REQUIRE(o.points.size() > 2);
    CHECK(o.points.front() == std::make_pair<uint64_t, uint64_t>(0, 0));
    CHECK(o.points.back().second == 0);
    CHECK(o.points.back().first <= r.total_cycles);
    uint64_t peak = 0;
    for (size_t i = 0; i < o.points.size(); ++i) {
      if (i > 0) CHECK(o.points[i].first > o.points[i - 1].first);
      peak = std::max(peak, o.points[i].second);
    }
    CHECK(peak > 0);
    CHECK(peak <= o.capacity_bytes);
  }
  // Every resident piece lies inside one of the program's (ping/pong) buffers.
  for (const auto& piece : sram_residency(p, r))
    for (const auto& [begin, end] : piece.ranges) {
      bool inside = false;
      for (const Buffer& b : p.buffers)
        inside = inside || (b.space == piece.scratchpad && begin >= b.offset && end <= b.offset + b.bytes);
      CHECK(inside);
    }
  // What a matmul reads and writes is resident while it runs: its activation slice in vmem,
  // its weight tile, its output tile in the accumulators.
  for (const auto& e : r.engines) {
    if (e.id.kind != EngineKind::mxu) continue;
    const Stream* stream = nullptr;
    for (const auto& s : p.streams)
      if (s.engine == e.id) stream = &s;
    for (const auto& rec : e.records) {
      const auto& op = std::get<MatmulOp>(stream->instructions[static_cast<size_t>(rec.index)].op);
      const uint64_t m = op.m, k = op.k, n = op.n;
      for (uint64_t t : {rec.start, rec.end - 1}) {
        CHECK(occupancy_at(occ[0], t) >= m * k);
        CHECK(occupancy_at(occ[1], t) >= k * n);
        CHECK(occupancy_at(occ[2], t) >= m * n * 4);
      }
    }
  }
}

TEST_CASE("SRAM occupancy sees fused attention's on-chip scores and probabilities", "[timeline][sram]") {
  // 2 heads of scores Q[256, 64] K[64, 256] -> softmax -> P[256, 256] V[256, 64], bf16: the
  // scores live in the accumulators and the probabilities in vmem, and no DMA moves either.
  ChipConfig cfg = load_config(std::string(SYSTOLIC_SOURCE_DIR) + "/configs/tpu-v4i.yaml", {"memory.ideal=false"});
  Workload w = testing::gemm_workload({{"scores", 256, 64, 256, DType::bf16, 2, "t:1", LayerKind::attention},
                                       {"context", 256, 256, 64, DType::bf16, 2, "t:2", LayerKind::attention}});
  VectorWork softmax;
  softmax.name = "softmax";
  softmax.op = {VectorKind::softmax, 2 * 256, 256, DType::bf16};
  softmax.after_gemms = 1;
  softmax.source = "t:3";
  w.vectors = {softmax};
  const Program p = compile(cfg, w);
  const SimResult r = simulate(cfg, p);
  const auto occ = sram_occupancy(cfg, p, r);
  REQUIRE(occ.size() == 3);
  size_t softmaxes = 0, contexts = 0;
  for (const auto& e : r.engines) {
    const Stream* stream = nullptr;
    for (const auto& s : p.streams)
      if (s.engine == e.id) stream = &s;
    for (const auto& rec : e.records) {
      const Instruction& instr = stream->instructions[static_cast<size_t>(rec.index)];
      if (const auto* v = std::get_if<VpuOp>(&instr.op); v && v->kind == VectorKind::softmax) {
        ++softmaxes;  // reads its scores (32-bit) and writes its probabilities (bf16)
        CHECK(occupancy_at(occ[2], rec.start) >= static_cast<uint64_t>(v->rows * v->cols) * 4);
        CHECK(occupancy_at(occ[0], rec.end - 1) >= static_cast<uint64_t>(v->rows * v->cols) * 2);
      }
      if (const auto* mm = std::get_if<MatmulOp>(&instr.op); mm && instr.layer == 2) {
        ++contexts;  // reads probabilities [m, k]
        CHECK(occupancy_at(occ[0], rec.start) >= static_cast<uint64_t>(mm->m * mm->k) * 2);
      }
    }
  }
  CHECK(softmaxes > 0);
  CHECK(contexts > 0);
  for (const auto& o : occ) {
    CHECK(o.points.back().second == 0);
    for (const auto& [cycle, bytes] : o.points) CHECK(bytes <= o.capacity_bytes);
  }
  // The on-chip regions survive the trace format.
  const Program q = parse_trace(write_trace(p, cfg), "t", cfg).program;
  size_t frees = 0;
  for (size_t s = 0; s < p.streams.size(); ++s)
    for (size_t i = 0; i < p.streams[s].instructions.size(); ++i) {
      const int ia = p.streams[s].instructions[i].frees, ib = q.streams[s].instructions[i].frees;
      REQUIRE((ia >= 0) == (ib >= 0));
      if (ia < 0) continue;
      ++frees;
      const SramRegion &a = p.regions.at(static_cast<size_t>(ia)), &b = q.regions.at(static_cast<size_t>(ib));
      CHECK((a.space == b.space && a.offset == b.offset && a.bytes == b.bytes && a.full_sem == b.full_sem));
    }
  CHECK(frees > 0);
}

TEST_CASE("memory.ideal times the same program: transfers take no time, every byte is counted", "[timeline][sram]") {
  const auto real = tiny(1), ideal = tiny_ideal(1);
  const auto w = testing::gemm_workload({{"a", 5, 4, 10, {}, 1, "t:1"}, {"b", 5, 10, 6, {}, 1, "t:2"}});
  const Program p = compile(real, w);
  // One lowering: the same trace but for the header line that records the memory mode.
  std::string ideal_text = write_trace(compile(ideal, w), ideal);
  const std::string mode = "memory ideal=true\n";
  REQUIRE(ideal_text.find(mode) != std::string::npos);
  ideal_text.replace(ideal_text.find(mode), mode.size(), "memory ideal=false\n");
  REQUIRE(ideal_text == write_trace(p, real));
  const SimResult r = simulate(real, p), i = simulate(ideal, p);
  CHECK(i.total_cycles < r.total_cycles);
  CHECK(i.hbm.bytes_read == r.hbm.bytes_read);
  CHECK(i.hbm.bytes_written == r.hbm.bytes_written);
  REQUIRE(i.scratchpads.size() == r.scratchpads.size());
  for (size_t s = 0; s < i.scratchpads.size(); ++s) {
    CHECK(i.scratchpads[s].bytes_read == r.scratchpads[s].bytes_read);
    CHECK(i.scratchpads[s].bytes_written == r.scratchpads[s].bytes_written);
  }
  for (const auto& e : i.engines)
    if (e.id.kind == EngineKind::dma)
      for (const auto& rec : e.records) CHECK(rec.start == rec.end);
  // The scratchpads hold the same tiles: the occupancy counters exist in both modes.
  CHECK(!sram_occupancy(ideal, p, i).empty());
}

}  // namespace test_timeline
