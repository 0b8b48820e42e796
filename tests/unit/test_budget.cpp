// Budgets before work (issue #20, sim/compile/budget.hpp): a run's cost is estimated before it
// allocates, and a run past a limit is refused with the estimate and the option that raises it.
#include <catch2/catch.hpp>

#include "input_error.hpp"
#include "sim/compile/compile.hpp"
#include "sim/config/config.hpp"
#include "sim/simulate/simulate.hpp"

namespace test_budget {

using namespace systolic;
using Catch::Contains;

namespace {
ChipConfig tiny(MxuModel model = MxuModel::fast) {
  ChipConfig c;
  c.mxu.rows = 4;
  c.mxu.cols = 4;
  c.mxu.model = model;
  return c;
}
Workload gemms(std::vector<Gemm> list) {
  Workload w;
  w.name = "w";
  w.path = "w.yaml";
  w.gemms = std::move(list);
  return w;
}
size_t instructions(const Program& p) {
  size_t n = 0;
  for (const Stream& s : p.streams) n += s.instructions.size();
  return n;
}
}  // namespace

TEST_CASE("the instruction estimate is a lower bound within 3x of what compile emits", "[budget]") {
  // Shapes that tile differently: one tile, many K tiles, many M and N tiles, repeats.
  for (const Gemm& g : {Gemm{"a", 4, 4, 4, {}, 1, "w.yaml:1"}, Gemm{"b", 64, 512, 16, {}, 1, "w.yaml:2"},
                        Gemm{"c", 300, 100, 200, {}, 3, "w.yaml:3"}, Gemm{"d", 1024, 64, 1024, {}, 1, "w.yaml:4"}}) {
    const Workload w = gemms({g});
    const uint64_t estimate = estimate_instructions(tiny(), w);
    const size_t actual = instructions(compile(tiny(), w));
    INFO(g.name << ": estimate " << estimate << ", compiled " << actual);
    CHECK(estimate <= actual);
    CHECK(actual <= 3 * estimate);
  }
}

TEST_CASE("a workload past --max-instructions is refused before it is tiled", "[budget]") {
  const Workload w = gemms({Gemm{"big", 1024, 64, 1024, {}, 1, "w.yaml:1"}});
  const uint64_t estimate = estimate_instructions(tiny(), w);
  Budget tight;
  tight.max_instructions = estimate - 1;
  CHECK_THAT(testing::input_error_of([&] { compile(tiny(), w, 0, tight); }),
             Contains("w.yaml: compiles to at least " + std::to_string(estimate) + " instructions") &&
                 Contains("more than --max-instructions " + std::to_string(estimate - 1)));
  tight.max_instructions = estimate;
  CHECK_NOTHROW(compile(tiny(), w, 0, tight));
  // A system holds each distinct workload's program once (compile_system shares it): three
  // chips of one workload cost one; chips of different workloads count together.
  const std::vector<Workload> three(3, w);
  tight.max_instructions = estimate;
  const auto programs = compile_system(tiny(), three, tight);
  REQUIRE(programs.size() == 3);
  CHECK((programs[0] == programs[1] && programs[1] == programs[2]));
  Workload other = w;
  other.gemms[0].name = "other";
  CHECK_THAT(testing::input_error_of([&] {
               compile_system(tiny(), {w, other, w}, tight);
             }),
             Contains("w.yaml on 3 chips: compiles to at least " + std::to_string(2 * estimate)));
  // The default limit refuses 4096^3 on the 4x4 array of tiny-4x4.yaml (~3 x 10^7 instructions).
  const ChipConfig tiny_preset = load_config(std::string(SYSTOLIC_SOURCE_DIR) + "/configs/tiny-4x4.yaml");
  CHECK(estimate_instructions(tiny_preset, gemms({Gemm{"huge", 4096, 4096, 4096, {}, 1, "w.yaml:1"}})) >
        Budget{}.max_instructions);
}

TEST_CASE("the exact model's PE-cycle estimate is what the grid then steps", "[budget]") {
  const ChipConfig exact = tiny(MxuModel::exact);
  const Program p = compile(exact, gemms({Gemm{"g", 20, 12, 9, {}, 2, "w.yaml:1"}}));
  // Independent of the estimate: the MXUs' busy cycles as simulated, times the 16 PEs.
  uint64_t busy = 0;
  for (const EngineResult& e : simulate(exact, p).engines)
    if (e.id.kind == EngineKind::mxu) busy += e.busy_cycles;
  CHECK(estimate_pe_cycles(exact, p) == busy * 16);
  CHECK(estimate_pe_cycles(tiny(MxuModel::fast), p) == 0);  // the fast model steps no grid
  Budget small;
  small.max_pe_cycles = busy * 16 - 1;
  CHECK_THAT(testing::input_error_of([&] { check_pe_cycles(exact, busy * 16, small, "w.yaml"); }),
             Contains("more than --max-pe-cycles") && Contains("mxu.model=fast"));
}

TEST_CASE("ICI chunks are counted per message, ceil(bytes / ici.chunk_bytes)", "[budget]") {
  Program p;
  Instruction send;
  send.op = IciOp{{IciCopy{1, 100, "s"}, IciCopy{2, 65537, "s"}}};
  p.streams.push_back({{EngineKind::ici, 0}, {send}});
  ChipConfig c = tiny();
  c.ici.chunk_bytes = 65536;
  CHECK(estimate_ici_chunks(c, p) == 1 + 2);
  c.ici.chunk_bytes = 1;  // every byte an event
  CHECK(estimate_ici_chunks(c, p) == 100 + 65537);
  Budget small;
  small.max_ici_chunks = 65636;
  CHECK_THAT(testing::input_error_of([&] { check_ici_chunks(c, 65637, small, "w.yaml"); }),
             Contains("w.yaml: the interconnect would move 65637 chunks of ici.chunk_bytes = 1 B, more than "
                      "--max-ici-chunks 65636"));
}

}  // namespace test_budget
