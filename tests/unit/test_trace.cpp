// Compiled traces: write then read is the identity on programs, and running either gives the
// same simulation; bad traces fail with file:line and what was expected.
#include <catch2/catch.hpp>

#include "sim/compile.hpp"
#include "sim/error.hpp"
#include "sim/simulate.hpp"
#include "sim/trace/trace.hpp"

using namespace systolic;

namespace {
ChipConfig chip(int64_t count) {
  ChipConfig c;
  c.mxu.rows = 4;
  c.mxu.cols = 4;
  c.mxu.count = count;
  return c;
}

Workload sample() {
  Workload w;
  w.gemms = {{"first layer", 6, 8, 10, {}, 2, "w.yaml:2"}, {"b", 3, 5, 4, DType::int8, 1, "w.yaml:3"}};
  return w;
}

std::string error_of(const std::string& text, const ChipConfig& c = chip(2)) {
  try {
    parse_trace(text, "t.trace", c);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

const std::string kHead = "systolic-trace 1\nchip rows=4 cols=4 mxus=2\nlayer 0 name=l kind=matmul m=4 k=4 n=4 dtype=bf16 repeat=1 macs=64 source=x\nsem s\n";
}  // namespace

TEST_CASE("a compiled trace round-trips and simulates identically", "[trace]") {
  const ChipConfig c = chip(2);
  const Program p = compile(c, sample());
  const std::string text = write_trace(p, c);
  const Program q = parse_trace(text, "t.trace", c);
  CHECK(write_trace(q, c) == text);
  const SimResult a = simulate(c, p), b = simulate(c, q);
  CHECK(a.total_cycles == b.total_cycles);
  for (size_t e = 0; e < a.engines.size(); ++e) {
    CHECK(a.engines[e].busy_cycles == b.engines[e].busy_cycles);
    CHECK(a.engines[e].records.size() == b.engines[e].records.size());
  }
  CHECK(q.layers[0].name == "first layer");  // quoted in the text, unquoted again
}

TEST_CASE("bad traces name the line and what was expected", "[trace]") {
  CHECK_THAT(error_of(""), Catch::Contains("t.trace:0: empty trace"));
  CHECK_THAT(error_of("systolic-trace 9\n"), Catch::Contains("t.trace:1: trace format version 9"));
  CHECK_THAT(error_of("systolic-trace 1\nchip rows=8 cols=4 mxus=1\n"),
             Catch::Contains("t.trace:2: trace compiled for a 8x4 array"));
  CHECK_THAT(error_of(kHead + "stream mxu0\n  matmult layer=0 m=4 k=4 n=4 n0=0 dtype=bf16\n"),
             Catch::Contains("t.trace:6: unknown opcode 'matmult' (did you mean 'matmul'?)"));
  CHECK_THAT(error_of(kHead + "stream mxu0\n  matmul layer=0 m=0 k=4 n=4 n0=0 dtype=bf16\n"),
             Catch::Contains("t.trace:6: key 'm': expected an integer >= 1, got '0'"));
  CHECK_THAT(error_of(kHead + "stream mxu0\n  matmul layer=0 m=4 k=4 n=4 n0=0 dtype=bf16 colour=red\n"),
             Catch::Contains("t.trace:6: unknown key 'colour'"));
  CHECK_THAT(error_of(kHead + "stream mxu0\n  matmul layer=0 m=4 k=4 n=4 dtype=bf16\n"),
             Catch::Contains("t.trace:6: missing key 'n0'"));
  CHECK_THAT(error_of(kHead + "stream mxu7\n"), Catch::Contains("t.trace:5: unknown engine 'mxu7'"));
  CHECK_THAT(error_of(kHead + "stream mxu0\n  matmul layer=3 m=4 k=4 n=4 n0=0 dtype=bf16\n"),
             Catch::Contains("t.trace:6: layer 3 is not declared"));
  CHECK_THAT(error_of(kHead + "stream mxu0\n  matmul layer=0 m=4 k=4 n=4 n0=0 dtype=bf16 wait=q>=1\n"),
             Catch::Contains("t.trace:6: semaphore 'q' is not declared"));
  // Waited for twice, signalled once: a deadlock found before anything runs.
  CHECK_THAT(error_of(kHead + "stream mxu0\n  matmul layer=0 m=4 k=4 n=4 n0=0 dtype=bf16 signal=s\n"
                              "stream mxu1\n  matmul layer=0 m=4 k=4 n=4 n0=0 dtype=bf16 wait=s>=2\n"),
             Catch::Contains("t.trace:8: semaphore 's' is waited for until >= 2 but only ever signalled 1 time(s)"));
  CHECK_THAT(error_of(kHead + "stream mxu0\n  matmul layer=0 name=\"open\n"),
             Catch::Contains("t.trace:6: unterminated quoted value"));
}
