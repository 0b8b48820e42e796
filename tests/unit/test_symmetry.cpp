// One chip simulated per class of chips that evolve alike (models/system/symmetry.hpp) and
// programs compiled once per workload (sim/compile/compile_system.cpp): each checked against
// doing every chip (docs/interconnect.md, "Scale").
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

#include "fixtures.hpp"
#include "input_error.hpp"
#include "models/common/sim_context.hpp"
#include "models/system/symmetry.hpp"
#include "models/system/system.hpp"
#include "sim/compile/compile.hpp"
#include "sim/compile/overlap.hpp"
#include "sim/report/report.hpp"
#include "sim/simulate/simulate.hpp"

namespace test_symmetry {

using namespace systolic;
using Catch::Matchers::Contains;

namespace {

// 1000 MHz, 100 GB/s links; ideal memory unless a test says otherwise.
ChipConfig system_config(IciTopologyKind topo, std::vector<int64_t> dims, std::string algo,
                         bool wrap = true) {
  ChipConfig c = testing::tiny_chip(2, MxuModel::fast);
  c.memory.ideal = true;
  c.ici.topology = topo;
  c.ici.dims = std::move(dims);
  c.ici.wraparound = wrap;
  c.ici.link_gbps = 100;
  c.ici.ports = 6;
  c.ici.algorithm = std::move(algo);
  return c;
}

// A matmul, a collective of `bytes` on its output, a matmul reading the result.
Workload with_collective(CollectiveKind kind, uint64_t bytes) {
  Workload w = testing::gemm_workload({{"up", 64, 32, 48, {}, 1, "w:1"}, {"down", 64, 48, 32, {}, 1, "w:3"}});
  CollectiveWork c;
  c.name = "x";
  c.kind = kind;
  c.bytes = bytes;
  c.after_gemms = 1;
  c.source = "w:2";
  w.collectives.push_back(c);
  return w;
}

std::vector<Workload> every(const ChipConfig& c, const Workload& w) {
  return std::vector<Workload>(static_cast<size_t>(c.ici.chips()), w);
}

bool same_program(const Program& a, const Program& b) {
  if (!(a.layers == b.layers && a.buffers == b.buffers && a.semaphores == b.semaphores &&
        a.regions == b.regions && a.streams.size() == b.streams.size()))
    return false;
  for (size_t s = 0; s < a.streams.size(); ++s)
    if (!(a.streams[s].engine == b.streams[s].engine) ||
        a.streams[s].instructions != b.streams[s].instructions)
      return false;
  return true;
}

std::vector<const Program*> pointers(const std::vector<SharedProgram>& programs) {
  std::vector<const Program*> out;
  for (const auto& p : programs) out.push_back(p.get());
  return out;
}

std::vector<const Program*> pointers(const std::vector<Program>& programs) {
  std::vector<const Program*> out;
  for (const auto& p : programs) out.push_back(&p);
  return out;
}

// The ring all-reduce of every chip, with chip `chip`'s messages written 4.25 KiB further into
// their receiver's HBM.
std::vector<Program> with_shifted_writes(const ChipConfig& c, int chip) {
  std::vector<Program> out;
  for (const auto& p : compile_system(c, every(c, with_collective(CollectiveKind::all_reduce, 64 << 10))))
    out.push_back(*p);
  for (Stream& s : out[static_cast<size_t>(chip)].streams) {
    if (s.engine.kind != EngineKind::ici) continue;
    std::vector<Instruction> moved = s.instructions.to_vector();
    for (Instruction& i : moved)
      for (IciCopy& m : std::get<IciOp>(i.op).copies) m.dst_addr += 4352;
    s.instructions = std::move(moved);
  }
  return out;
}

// A hand-written program with one semaphore and one 4x4x4 layer, and no instructions yet.
Program bare_program(const std::string& semaphore) {
  Program p;
  p.semaphores = {semaphore};
  LayerInfo g;
  g.name = "g";
  g.m = g.k = g.n = 4;
  p.layers.push_back(g);
  return p;
}

// Chips 0 and 2 of a line of three each send 4 KiB to address 1 MiB of chip 1, which counts
// them on its semaphore "in".
std::vector<Program> both_ends_write_the_middle() {
  const Program middle = bare_program("in");
  Program end = middle;
  IciCopy m;
  m.to = 1;
  m.bytes = 4096;
  m.recv_sem = "in";
  m.via_hbm = true;
  m.dst_addr = 1 << 20;
  end.streams.push_back({{EngineKind::ici, 0}, {Instruction{IciOp{{m}}, 0, {}, {}}}});
  return {end, middle, end};
}

ChipClasses classes_of(const ChipConfig& c, const std::vector<Workload>& workloads) {
  const auto programs = compile_system(c, workloads);
  return chip_classes(c.ici.build_topology(), pointers(programs), {!c.memory.ideal});
}

struct Both {
  SystemResult per_class, every_chip;
  nlohmann::ordered_json per_class_report, every_chip_report;
};

// The system run both ways, and both reports without `simulation` (how it was simulated).
Both run_both(const ChipConfig& c, const std::vector<Workload>& workloads) {
  std::vector<std::shared_ptr<const Workload>> w;
  for (const Workload& x : workloads) w.push_back(std::make_shared<const Workload>(x));
  const auto programs = compile_system(c, workloads);
  Both b;
  b.per_class = simulate_system(c, programs);
  RunOptions all;
  all.every_chip = true;
  b.every_chip = simulate_system(c, programs, all);
  b.per_class_report = make_report(c, w, programs, b.per_class);
  b.every_chip_report = make_report(c, w, programs, b.every_chip);
  b.per_class_report.erase("simulation");
  b.every_chip_report.erase("simulation");
  return b;
}

// Every chip's every instruction record, and the report, the same both ways.
void check_same(const Both& b) {
  REQUIRE(b.per_class.chip_count() == b.every_chip.chip_count());
  CHECK(b.per_class.total_cycles == b.every_chip.total_cycles);
  for (size_t i = 0; i < b.per_class.chip_count(); ++i) {
    const SimResult &x = b.per_class.chip(i), &y = b.every_chip.chip(i);
    REQUIRE(x.engines.size() == y.engines.size());
    for (size_t e = 0; e < x.engines.size(); ++e) {
      const auto &rx = x.engines[e].records, &ry = y.engines[e].records;
      REQUIRE(rx.size() == ry.size());
      for (size_t k = 0; k < rx.size(); ++k)
        CHECK((rx[k].ready == ry[k].ready && rx[k].start == ry[k].start && rx[k].end == ry[k].end));
    }
    CHECK(x.hbm == y.hbm);
    CHECK(x.ici_link_bytes_out == y.ici_link_bytes_out);
  }
  CHECK(b.per_class_report.dump() == b.every_chip_report.dump());
}

// Every chip's program from compile_system is the one compile(config, workloads[chip], chip)
// gives.
void check_each_chip(const ChipConfig& c, const std::vector<Workload>& workloads) {
  const auto programs = compile_system(c, workloads);
  REQUIRE(programs.size() == workloads.size());
  for (size_t chip = 0; chip < workloads.size(); ++chip) {
    INFO("chip " << chip);
    CHECK(same_program(*programs[chip], compile(c, workloads[chip], static_cast<int>(chip))));
  }
}

// How many of chip 0's collectives the compiler decomposes (sim/compile/overlap.hpp).
size_t decomposed(const ChipConfig& c, const Workload& w) {
  size_t n = 0;
  for (const auto& plan : compile_detail::plan_overlap(c, w, 0)) n += plan.decomposed ? 1 : 0;
  return n;
}

// traces/models/`preset` with some top-level keys given other values (fewer layers), written
// to a file of the test's own.
std::string model_with(const std::string& preset,
                       const std::vector<std::pair<std::string, std::string>>& keys) {
  std::ifstream in(std::string(SYSTOLIC_SOURCE_DIR) + "/traces/models/" + preset);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& [key, value] : keys) {
    const std::regex line("\\n *" + key + ": *([^\\n#]*)");
    REQUIRE(std::distance(std::sregex_iterator(text.begin(), text.end(), line), std::sregex_iterator()) == 1);
    std::smatch m;
    std::regex_search(text, m, line);
    text.replace(static_cast<size_t>(m.position(1)), static_cast<size_t>(m.length(1)), value);
  }
  const auto dir =
      std::filesystem::temp_directory_path() / ("systolic_test_symmetry_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / preset).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace

TEST_CASE("compile_system gives every chip the program compiling it whole gives", "[symmetry]") {
  struct Case {
    ChipConfig config;
    Workload workload;
  };
  const std::vector<Case> cases = {
      {system_config(IciTopologyKind::ring, {4}, "ring"),
       with_collective(CollectiveKind::all_reduce, 64 << 10)},
      {system_config(IciTopologyKind::ring, {4}, "ring"),
       with_collective(CollectiveKind::all_reduce, 1000003)},
      {system_config(IciTopologyKind::torus2d, {2, 4}, "bidir_ring", false),
       with_collective(CollectiveKind::all_gather, 96 << 10)},
      {system_config(IciTopologyKind::torus2d, {2, 2}, "torus"),
       with_collective(CollectiveKind::reduce_scatter, 5000)},
      {system_config(IciTopologyKind::torus2d, {2, 2}, "torus"),
       with_collective(CollectiveKind::all_to_all, 1 << 16)},
  };
  for (const Case& k : cases) {
    const auto programs = compile_system(k.config, every(k.config, k.workload));
    for (int chip = 0; chip < k.config.ici.chips(); ++chip)
      CHECK(same_program(*programs[static_cast<size_t>(chip)], compile(k.config, k.workload, chip)));
    // The MXU streams are the leader's own list; the ICI streams are each chip's.
    CHECK(programs[1]->streams[0].instructions.shares(programs[0]->streams[0].instructions));
    CHECK_FALSE(programs[1]->streams.back().instructions.shares(programs[0]->streams.back().instructions));
  }
  // Without collectives the program does not depend on the chip: one object for all.
  const ChipConfig ring = system_config(IciTopologyKind::ring, {4}, "ring");
  const auto plain =
      compile_system(ring, every(ring, testing::gemm_workload({{"g", 64, 32, 48, {}, 1, "w:1"}})));
  CHECK(
      (plain[0] == plain[3] &&
       same_program(*plain[2], compile(ring, testing::gemm_workload({{"g", 64, 32, 48, {}, 1, "w:1"}}), 2))));
}

TEST_CASE(
    "compile_system fans out decomposed collectives and mesh groups: each chip's program is its whole "
    "compile's",
    "[symmetry][overlap]") {
  const std::string v5e8 = std::string(SYSTOLIC_SOURCE_DIR) + "/configs/tpu-v5e-8.yaml";
  const std::string model = model_with("llama2-70b.yaml", {{"layers", "2"}});
  // Llama-2-70B (two layers) prefill 1 x 2048 sharded --tp N, overlap on: its all-gathers before
  // the projections and reduce-scatters after them are decomposed into N - 1 steps (the
  // reduce-scatters' additions interleaved with the matmul's row blocks), on a ring of 2 and 4
  // (ring and bidir_ring) and on tpu-v5e-8's 2x4 mesh; then --mesh dp=2,tp=4 there.
  struct Case {
    std::vector<std::string> ici;
    int64_t tp;
  };
  for (const Case& k : std::vector<Case>{{{"ici.topology=ring", "ici.dims=2", "ici.algorithm=ring"}, 2},
                                         {{"ici.topology=ring", "ici.dims=4", "ici.algorithm=bidir_ring"}, 4},
                                         {{"ici.topology=ring", "ici.dims=4", "ici.algorithm=ring"}, 4},
                                         {{}, 8}}) {
    std::vector<std::string> set = {"memory.ideal=true", "hbm.capacity_bytes=64 GiB", "ici.wraparound=true"};
    if (k.ici.empty()) set = {"memory.ideal=true", "hbm.capacity_bytes=64 GiB"};
    set.insert(set.end(), k.ici.begin(), k.ici.end());
    const ChipConfig c = load_config(v5e8, set);
    INFO("tp " << k.tp << " " << c.ici.algorithm);
    WorkloadOptions options{"1x2048", "prefill"};
    options.tp = k.tp;
    const std::vector<Workload> shares = load_system_workloads(model, options, c.ici.build_topology());
    REQUIRE(decomposed(c, shares[0]) == 4 * 2);  // per layer: 2 all-gathers, 2 reduce-scatters
    check_each_chip(c, shares);
    // One workload: each stream the chips have alike is held once (MXUs, DMA, the additions
    // of equal blocks), the ICI streams are each chip's.
    const auto programs = compile_system(c, shares);
    for (size_t chip = 1; chip < shares.size(); ++chip) {
      const auto &a = programs[0]->streams, &b = programs[chip]->streams;
      for (size_t s = 0; s + 1 < a.size(); ++s) CHECK(b[s].instructions.shares(a[s].instructions));
      CHECK_FALSE(b.back().instructions.shares(a.back().instructions));
    }
  }
  // A mesh's chips have workloads of their own (their groups, their places), alike but for
  // which chips: dp=2,tp=4 compiles once, and every chip's MXU and DMA streams are one list.
  const ChipConfig v5e = load_config(v5e8, {"memory.ideal=true", "hbm.capacity_bytes=64 GiB"});
  WorkloadOptions mesh{"2x2048", "prefill"};
  mesh.mesh = "dp=2,tp=4";
  const std::vector<Workload> replicas = load_system_workloads(model, mesh, v5e.ici.build_topology());
  REQUIRE(decomposed(v5e, replicas[0]) == 4 * 2);
  CHECK_FALSE(replicas[0] == replicas[1]);
  CHECK(replicas[0].equal_but_chips(replicas[1]));
  check_each_chip(v5e, replicas);
  const auto shared = compile_system(v5e, replicas);
  for (size_t chip = 1; chip < replicas.size(); ++chip)
    CHECK(shared[chip]->streams[0].instructions.shares(shared[0]->streams[0].instructions));
  // Pipeline stages (their permutes on channels), each over dp=2 x tp=2: the two stages are
  // compiled apart, each stage's four chips once.
  mesh.bucket = "4x1024";
  mesh.mesh = "pp=2,dp=2,tp=2";
  mesh.micro_batches = 2;
  const std::vector<Workload> stages = load_system_workloads(model, mesh, v5e.ici.build_topology());
  check_each_chip(v5e, stages);
  const auto staged = compile_system(v5e, stages);
  int stage_lists = 0;
  for (size_t chip = 0; chip < stages.size(); ++chip) {
    size_t first = 0;
    while (!stages[first].equal_but_chips(stages[chip])) ++first;
    stage_lists += first == chip ? 1 : 0;
    CHECK(staged[chip]->streams[0].instructions.shares(staged[first]->streams[0].instructions));
  }
  CHECK(stage_lists == 2);
  // Experts over dp=2 x tp=4 (ep=8, all-to-alls over the expert group): routed uniformly every
  // chip's experts get as many tokens and the eight chips compile once; with a skew each chip's
  // get other counts, and each chip compiles its own.
  const std::string moe_model = model_with("deepseek-v3-moe.yaml", {{"layers", "2"}, {"dense_layers", "1"}});
  WorkloadOptions moe{"2x512", "prefill"};
  moe.mesh = "dp=2,tp=4,ep=8";
  for (const std::string routing : {"uniform", "skewed"}) {
    moe.routing = routing;
    const std::vector<Workload> experts = load_system_workloads(moe_model, moe, v5e.ici.build_topology());
    check_each_chip(v5e, experts);
    CHECK(experts[0].equal_but_chips(experts[5]) == (routing == "uniform"));
  }
  // A hand-made matmul and collective of sizes the group's chips do not divide: each chip's
  // blocks and additions come out of other sizes.
  const ChipConfig ring4 = load_config(v5e8, {"memory.ideal=true", "ici.topology=ring", "ici.dims=4",
                                              "ici.wraparound=true", "ici.algorithm=bidir_ring"});
  for (const bool gather : {true, false}) {
    Gemm g;
    g.name = "mm";
    g.m = 2047;
    g.k = gather ? 4095 : 1024;
    g.n = gather ? 1024 : 4095;
    g.dtype = DType::bf16;
    g.source = "test:1";
    CollectiveWork x;
    x.name = "x";
    x.kind = gather ? CollectiveKind::all_gather : CollectiveKind::reduce_scatter;
    x.bytes = static_cast<uint64_t>(g.m) * 4095 * 2;
    x.decompose = gather ? Decompose::next_gemm : Decompose::previous_gemm;
    x.after_gemms = gather ? 0 : 1;
    x.source = "test:2";
    Workload w = testing::gemm_workload({g});
    w.collectives = {x};
    REQUIRE(decomposed(ring4, w) == 1);
    check_each_chip(ring4, every(ring4, w));
  }
}

TEST_CASE("Chips that run alike are found, and where mirroring would not be exact they are not merged",
          "[symmetry]") {
  const ChipConfig ring = system_config(IciTopologyKind::ring, {4}, "ring");
  // A ring all-reduce on untimed memory: each step of the ring maps the system onto itself.
  const ChipClasses ar = classes_of(ring, every(ring, with_collective(CollectiveKind::all_reduce, 64 << 10)));
  CHECK(ar.simulated_chips() == std::vector<int>{0});
  CHECK(ar.symmetries.front().name == "ring+1");
  CHECK(ar.image(3, 1) == 0);  // g_3 = three steps: chip 1 of chip 0's frame is chip 0 of chip 3's
  // The same on the real memory system: each chip reads and writes step s's block at the same
  // HBM address (rank-relative) and writes what it receives itself.
  ChipConfig real = ring;
  real.memory.ideal = false;
  const ChipClasses ar_real =
      classes_of(real, every(real, with_collective(CollectiveKind::all_reduce, 64 << 10)));
  CHECK(ar_real.simulated_chips() == std::vector<int>{0});
  CHECK(ar_real.limit.empty());
  // Where one chip writes elsewhere in its receiver's HBM, no step maps chip 3's traffic onto
  // another chip's (untimed, the addresses do not matter).
  const auto shifted = with_shifted_writes(real, 2);
  CHECK(chip_classes(real.ici.build_topology(), pointers(shifted), {true}).simulated_chips().size() == 4);
  CHECK_THAT(chip_classes(real.ici.build_topology(), pointers(shifted), {true}).limit,
             Contains("other HBM addresses"));
  CHECK(chip_classes(real.ici.build_topology(), pointers(shifted), {false}).simulated_chips().size() == 1);
  // A line of three whose ends both write the same 4 KiB of the middle chip, under one
  // semaphore: the mirror maps the ends onto each other, but on the real memory system the
  // middle chip's port could order their chunks only by the order they were sent in.
  const ChipConfig line = system_config(IciTopologyKind::ring, {3}, "ring", false);
  const std::vector<Program> ends = both_ends_write_the_middle();
  const ChipClasses untimed = chip_classes(line.ici.build_topology(), pointers(ends), {false});
  CHECK(untimed.simulated_chips() == std::vector<int>{0, 1});
  CHECK(untimed.symmetries.front().name == "mirror x");
  const ChipClasses timed = chip_classes(line.ici.build_topology(), pointers(ends), {true});
  CHECK(timed.simulated_chips().size() == 3);
  CHECK_THAT(timed.limit, Contains("chips 0 and 2 write the same 4096 B at 0x100000 of chip 1's HBM"));
  // All-to-all on a 2x2 torus: the diagonal crosses two links, shared by other chips' chunks,
  // so only translations are taken, and only those that keep the parity of a chip's
  // coordinates, which picks the way its half-way messages go: the diagonal step.
  const ChipConfig torus = system_config(IciTopologyKind::torus2d, {2, 2}, "torus");
  const ChipClasses a2a =
      classes_of(torus, every(torus, with_collective(CollectiveKind::all_to_all, 1 << 16)));
  CHECK(a2a.representative == std::vector<int>{0, 1, 1, 0});
  REQUIRE(a2a.symmetries.size() == 1);
  CHECK(a2a.symmetries[0].translation);
  CHECK_THAT(a2a.limit, Contains("x+1 does not map the system onto itself"));
  // On a line (no wraparound) there is no translation: every chip.
  const ChipConfig line4 = system_config(IciTopologyKind::ring, {4}, "ring", false);
  const ChipClasses a2a_line =
      classes_of(line4, every(line4, with_collective(CollectiveKind::all_to_all, 1 << 16)));
  CHECK(a2a_line.simulated_chips().size() == 4);
  CHECK_THAT(a2a_line.limit, Contains("over 3 links: only translations keep such traffic alike"));
  // Nor with no hop latency, when a chunk reaches the next chip as it leaves this one.
  CHECK_THAT(chip_classes(torus.ici.build_topology(),
                          pointers(compile_system(
                              torus, every(torus, with_collective(CollectiveKind::all_to_all, 1 << 16)))),
                          {false, false})
                 .limit,
             Contains("with no hop latency"));
  // Chips with x = 0 run one workload, x = 1 another (no messages): y+1 holds, x+1 does not.
  const Workload a = testing::gemm_workload({{"a", 64, 32, 48, {}, 1, "w:1"}});
  const Workload b = testing::gemm_workload({{"b", 32, 32, 48, {}, 1, "w:1"}});
  const ChipClasses halves = classes_of(torus, {a, b, a, b});
  CHECK(halves.simulated_chips() == std::vector<int>{0, 1});
  CHECK(halves.representative == std::vector<int>{0, 1, 0, 1});
  CHECK_THAT(halves.limit, Contains("does not map the system onto itself"));
}

TEST_CASE("One chip per class gives every chip's records and the report that simulating every chip gives",
          "[symmetry]") {
  const ChipConfig ring = system_config(IciTopologyKind::ring, {4}, "ring");
  const ChipConfig mesh = system_config(IciTopologyKind::torus2d, {2, 4}, "bidir_ring", false);
  const ChipConfig torus = system_config(IciTopologyKind::torus2d, {2, 2}, "torus");
  const Workload ar = with_collective(CollectiveKind::all_reduce, 256 << 10);
  for (const Both& b : {run_both(ring, every(ring, ar)), run_both(mesh, every(mesh, ar)),
                        run_both(torus, every(torus, ar))}) {
    CHECK(b.per_class.plan.simulated() == 1);
    check_same(b);
  }
  // Two classes, no messages.
  const Workload a = testing::gemm_workload({{"a", 64, 32, 48, {}, 1, "w:1"}});
  const Workload c = testing::gemm_workload({{"c", 32, 32, 48, {}, 1, "w:1"}});
  const Both halves = run_both(torus, {a, c, a, c});
  CHECK(halves.per_class.plan.simulated() == 2);
  check_same(halves);
  // Where nothing is merged the two are one simulation.
  const Both apart = run_both(torus, {a, a, c, a});
  CHECK(apart.per_class.plan.simulated() == 4);
  check_same(apart);
}

TEST_CASE("On the real memory system one chip per class gives every chip's records and report",
          "[symmetry]") {
  const Workload ar = with_collective(CollectiveKind::all_reduce, 256 << 10);
  const Workload ag = with_collective(CollectiveKind::all_gather, 96 << 10);
  const Workload rs = with_collective(CollectiveKind::reduce_scatter, 96 << 10);
  for (ChipConfig c :
       {system_config(IciTopologyKind::ring, {2}, "ring"), system_config(IciTopologyKind::ring, {4}, "ring"),
        system_config(IciTopologyKind::ring, {8}, "bidir_ring"),
        system_config(IciTopologyKind::torus2d, {2, 4}, "bidir_ring", false),
        system_config(IciTopologyKind::torus2d, {2, 2}, "torus")}) {
    c.memory.ideal = false;
    INFO(c.ici.chips() << " chips, " << c.ici.algorithm);
    for (const Workload& w : {ar, ag, rs}) {
      const Both b = run_both(c, every(c, w));
      CHECK(b.per_class.plan.simulated() == 1);
      check_same(b);
    }
  }
}

// Each chip of a ring of 8 all-reduces with the other three of its half ({0..3} or {4..7}) over
// the group's ring, which closes from its fourth chip to its first over three links.
std::vector<Workload> halves_all_reduce(uint64_t bytes) {
  std::vector<Workload> out;
  for (int half = 0; half < 2; ++half) {
    Workload w = with_collective(CollectiveKind::all_reduce, bytes);
    w.collectives[0].group = {{4 * half, 4 * half + 1, 4 * half + 2, 4 * half + 3}, {4}, false};
    for (int i = 0; i < 4; ++i) out.push_back(w);
  }
  return out;
}

TEST_CASE("Messages over several links: one chip per class gives every chip's records and report",
          "[symmetry]") {
  const Workload a2a = with_collective(CollectiveKind::all_to_all, 96 << 10 | 17);
  for (const bool ideal : {true, false}) {
    INFO((ideal ? "ideal memory" : "real memory"));
    struct Case {
      ChipConfig config;
      std::vector<Workload> workloads;
      size_t simulated;
    };
    ChipConfig ring8 = system_config(IciTopologyKind::ring, {8}, "bidir_ring");
    ChipConfig ring4 = system_config(IciTopologyKind::ring, {4}, "ring");
    ChipConfig torus22 = system_config(IciTopologyKind::torus2d, {2, 2}, "torus");
    ChipConfig torus44 = system_config(IciTopologyKind::torus2d, {4, 4}, "torus");
    ChipConfig torus222 = system_config(IciTopologyKind::torus3d, {2, 2, 2}, "torus");
    std::vector<Case> cases = {
        // All-to-all: chips of one parity of coordinates alike (section 3's ties), two classes.
        {ring4, every(ring4, a2a), 2},
        {torus22, every(torus22, a2a), 2},
        {torus44, every(torus44, a2a), 2},
        {torus222, every(torus222, a2a), 2},
        // Rings over groups of four that close over three links: chip c and c + 4 alike.
        {ring8, halves_all_reduce(256 << 10), 4},
    };
    for (Case& k : cases) {
      k.config.memory.ideal = ideal;
      k.config.ici.link_latency_ns = 100;  // chunks of different chips meet on the links
      INFO(k.config.ici.chips() << " chips, " << k.config.ici.algorithm);
      const Both b = run_both(k.config, k.workloads);
      CHECK(b.per_class.plan.simulated() == k.simulated);
      check_same(b);
    }
  }
}

TEST_CASE("A class is formed only where its chips' HBM traffic is alike: forced, it misreports a chip",
          "[symmetry]") {
  ChipConfig real = system_config(IciTopologyKind::ring, {4}, "ring");
  real.memory.ideal = false;
  // Chip 2 writes its messages 4.25 KiB further into chip 3's HBM: other rows and channels.
  const std::vector<Program> shifted = with_shifted_writes(real, 2);
  const auto programs = pointers(shifted);
  // Untimed memory's rules ignore the addresses and merge the ring into one class.
  const ChipClasses forced = chip_classes(real.ici.build_topology(), programs, {false});
  REQUIRE(forced.simulated_chips() == std::vector<int>{0});
  HbmStats merged, alone;
  {
    FreshContext context;
    System system("system", real, programs, forced);
    sc_core::sc_start();
    merged = system.chip_of(3).hbm().stats();
  }
  {
    FreshContext context;
    System system("system", real, shifted);
    sc_core::sc_start();
    alone = system.chip_of(3).hbm().stats();
  }
  CHECK(merged.bytes_written == alone.bytes_written);
  CHECK_FALSE(merged == alone);  // what chip 0 saw is not what chip 3 sees
}

TEST_CASE("A deadlock names every chip's blocked engines however many chips are simulated", "[symmetry]") {
  ChipConfig ring = system_config(IciTopologyKind::ring, {4}, "ring");
  Program p = bare_program("never");
  p.streams.push_back(
      {{EngineKind::mxu, 0}, {Instruction{MatmulOp{4, 4, 4, 0, DType::int8}, 0, {{0, 1}}, {}}}});
  const std::vector<Program> programs(4, p);
  RunOptions all;
  all.every_chip = true;
  const std::string per_class = testing::input_error_of([&] { simulate_system(ring, programs); });
  CHECK(per_class == testing::input_error_of([&] { simulate_system(ring, programs, all); }));
  CHECK_THAT(per_class, Contains("chip3.mxu0: instruction 0 waits for semaphore 0 >= 1"));
}

}  // namespace test_symmetry
