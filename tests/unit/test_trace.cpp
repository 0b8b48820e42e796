// Compiled traces: write then read is the identity on programs, and running either gives the
// same simulation; bad traces fail with file:line and what was expected.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>

#include "input_error.hpp"
#include "models/common/error.hpp"
#include "sim/compile/compile.hpp"
#include "sim/config/hash.hpp"
#include "sim/config/schema.hpp"
#include "sim/simulate/simulate.hpp"
#include "sim/trace/trace.hpp"

namespace test_trace {

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
  return testing::input_error_of([&] { parse_trace(text, "t.trace", c); });
}

// The header `systolic compile` writes for chip(2), the line after it, and "t.trace:N:" for
// line n counted from the line after the header (1 = the 'chip' line).
// (Functions, not globals: the header names the dataflow, whose registry is filled by other
// files' static initialisers, which need not have run before this file's.)
const std::string& header_text() {
  static const std::string text = write_trace_header(trace_header_for(chip(2))) + "\n";
  return text;
}
int header_lines() { return static_cast<int>(std::count(header_text().begin(), header_text().end(), '\n')); }
std::string at(int n) { return "t.trace:" + std::to_string(header_lines() + n) + ": "; }
std::string head_text() {
  return header_text() +
         "chip rows=4 cols=4 mxus=2\nlayer 0 name=l kind=matmul m=4 k=4 n=4 dtype=bf16 repeat=1 macs=64 source=x\nsem s\n";
}

// The 1-based number of the first line of `text` that starts with `prefix`.
int line_of(const std::string& text, const std::string& prefix) {
  int line = 1;
  for (size_t at = 0; at < text.size(); at = text.find('\n', at) + 1, ++line)
    if (text.compare(at, prefix.size(), prefix) == 0) return line;
  return 0;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}
}  // namespace

TEST_CASE("a compiled trace round-trips and simulates identically", "[trace]") {
  const ChipConfig c = chip(2);
  const Program p = compile(c, sample());
  const std::string text = write_trace(p, c);
  const Program q = parse_trace(text, "t.trace", c).program;
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
  CHECK_THAT(error_of(header_text() + "chip rows=8 cols=4 mxus=1\n"), Catch::Contains(at(1) + "trace compiled for a 8x4 array"));
  CHECK_THAT(error_of(head_text() + "stream mxu0\n  matmult layer=0 m=4 k=4 n=4 n0=0 dtype=bf16\n"),
             Catch::Contains(at(5) + "unknown opcode 'matmult' (did you mean 'matmul'?)"));
  CHECK_THAT(error_of(head_text() + "stream mxu0\n  matmul layer=0 m=0 k=4 n=4 n0=0 dtype=bf16\n"),
             Catch::Contains(at(5) + "key 'm': expected an integer >= 1, got '0'"));
  CHECK_THAT(error_of(head_text() + "stream mxu0\n  matmul layer=0 m=4 k=4 n=4 n0=0 dtype=bf16 colour=red\n"),
             Catch::Contains(at(5) + "unknown key 'colour'"));
  CHECK_THAT(error_of(head_text() + "stream mxu0\n  matmul layer=0 m=4 k=4 n=4 dtype=bf16\n"),
             Catch::Contains(at(5) + "missing key 'n0'"));
  CHECK_THAT(error_of(head_text() + "stream mxu7\n"), Catch::Contains(at(4) + "unknown engine 'mxu7'"));
  CHECK_THAT(error_of(head_text() + "stream mxu0\n  matmul layer=3 m=4 k=4 n=4 n0=0 dtype=bf16\n"),
             Catch::Contains(at(5) + "layer 3 is not declared"));
  CHECK_THAT(error_of(head_text() + "stream mxu0\n  matmul layer=0 m=4 k=4 n=4 n0=0 dtype=bf16 wait=q>=1\n"),
             Catch::Contains(at(5) + "semaphore 'q' is not declared"));
  // Waited for twice, signalled once: a deadlock found before anything runs.
  CHECK_THAT(error_of(head_text() + "stream mxu0\n  matmul layer=0 m=4 k=4 n=4 n0=0 dtype=bf16 signal=s\n"
                              "stream mxu1\n  matmul layer=0 m=4 k=4 n=4 n0=0 dtype=bf16 wait=s>=2\n"),
             Catch::Contains(at(7) + "semaphore 's' is waited for until >= 2 but only ever signalled 1 time(s)"));
  CHECK_THAT(error_of(head_text() + "stream mxu0\n  matmul layer=0 name=\"open\n"),
             Catch::Contains(at(5) + "unterminated quoted value"));
  CHECK_THAT(error_of(header_text() + "chip rows=4 cols=4 mxus=2\nlayer 0 name=l kind=conv m=4 k=4 n=4 dtype=bf16 "
                                "repeat=1 macs=64 source=x\n"),
             Catch::Contains(at(2) + "key 'kind': expected matmul, attention, vector or collective, got 'conv'"));
}

TEST_CASE("every layer kind is spelled by one table, read back by the same table", "[trace]") {
  for (LayerKind k : {LayerKind::matmul, LayerKind::attention, LayerKind::vector, LayerKind::collective})
    CHECK(kLayerKindNames.parse(kLayerKindNames.name(k)) == k);
  CHECK(std::string(kLayerKindNames.name(LayerKind::collective)) == "collective");
  CHECK_FALSE(kLayerKindNames.parse("Matmul").has_value());
}

TEST_CASE("FNV-1a 64 matches the published test vectors", "[trace]") {
  // From the FNV reference (Fowler, Noll, Vo; draft-eastlake-fnv): "", "a", "foobar".
  CHECK(fnv1a_64("") == 0xcbf29ce484222325ull);
  CHECK(fnv1a_64("a") == 0xaf63dc4c8601ec8cull);
  CHECK(fnv1a_64("foobar") == 0x85944171f73967e8ull);
}

TEST_CASE("the hashed keys are the schema's, minus energy, area and what changes no cycle", "[trace]") {
  const ChipConfig c = chip(2);
  const std::vector<ConfigLine> lines = timing_config(c);
  std::vector<std::string> keys;
  for (const ConfigLine& l : lines) keys.push_back(l.key);
  CHECK(std::is_sorted(keys.begin(), keys.end()));
  const auto has = [&](const std::string& k) { return std::count(keys.begin(), keys.end(), k) == 1; };
  size_t hashed = 0;
  for (const ConfigKey& k : config_schema()) {
    const bool energy_or_area = k.path.rfind("energy.", 0) == 0 || k.path.rfind("area.", 0) == 0;
    const bool free = energy_or_area || k.path == "name" || k.path == "hbm.preset" || k.path == "mxu.model" ||
                      k.path == "mxu.seed" || k.path == "memory.ideal" || k.path == "hbm.capacity_bytes";
    CHECK(has(k.path) == !free);
    hashed += !free;
  }
  CHECK(keys.size() == hashed);
  for (const char* k : {"clock_mhz", "mxu.rows", "mxu.dtype", "sram.vmem_bytes", "hbm.t_rcd_ns", "dma.engines",
                        "vpu.lanes", "ici.topology"})
    CHECK(has(k));
  // The hash is of the documented canonical text: "<key> <value>\n" per key, sorted.
  CHECK(config_hash(c) == fnv1a_64(canonical_text(lines)));
  CHECK(canonical_text(lines).find("\nmxu.rows 4\n") != std::string::npos);
  CHECK(canonical_text(lines).find("\nsram.vmem_bytes 16777216\n") != std::string::npos);
  // Energy and area keys and the name leave it alone; a timing or lowering key moves it.
  ChipConfig other = c;
  apply_overrides(other, {"energy.tech_scale=0.3", "energy.mac_int8_pj=9", "area.node=7nm",
                          "area.lifetime_years=2", "name=renamed", "mxu.model=exact"});
  CHECK(config_hash(other) == config_hash(c));
  for (const char* set :
       {"mxu.rows=8", "sram.vmem_bytes=8 MiB", "clock_mhz=1001", "hbm.t_cl_ns=15", "dma.double_buffer=false",
        "vpu.lanes=64", "ici.link_gbps=50", "memory.activation_layout=row_major"}) {
    ChipConfig changed = c;
    apply_overrides(changed, {set});
    CHECK(config_hash(changed) != config_hash(c));
  }
}

TEST_CASE("the header records what the trace was compiled for and reads back", "[trace]") {
  ChipConfig c = chip(2);
  c.memory.ideal = false;
  c.mxu.dtype = DType::int8;
  const std::string text = write_trace(compile(c, sample()), c);
  CHECK(text.rfind("systolic-trace 2\ndataflow ws\nmemory ideal=false\ndtypes mxu.dtype=int8\nsystem chips=1 chip=0\n"
                   "config_hash 0x",
                   0) == 0);
  CHECK(line_of(text, "config mxu.rows 4") > line_of(text, "config_hash"));
  const TraceHeader h = parse_trace(text, "t.trace", c).header;
  const TraceHeader want = trace_header_for(c);
  CHECK(h.dataflow == DataflowKind::ws);
  CHECK(!h.memory_ideal);
  REQUIRE(h.dtypes.size() == 1);
  CHECK((h.dtypes[0].key == "mxu.dtype" && h.dtypes[0].value == "int8"));
  CHECK((h.chips == 1 && h.chip == 0));
  CHECK(h.config_hash == config_hash(c));
  CHECK(canonical_text(h.config) == canonical_text(want.config));
  CHECK(write_trace_header(h) == write_trace_header(want));
  // Timed with ideal memory: allowed (one lowering serves both modes), the header says how it was compiled.
  ChipConfig ideal = c;
  ideal.memory.ideal = true;
  CHECK(!parse_trace(text, "t.trace", ideal).header.memory_ideal);
  // Energy only: runs.
  ChipConfig greener = c;
  apply_overrides(greener, {"energy.tech_scale=0.3"});
  CHECK(parse_trace(text, "t.trace", greener).program.streams.size() == parse_trace(text, "t.trace", c).program.streams.size());
}

TEST_CASE("a trace read under another config names every differing key with both values", "[trace]") {
  ChipConfig c = chip(2);
  c.memory.ideal = false;
  const std::string text = write_trace(compile(c, sample()), c);
  ChipConfig smaller = c;
  smaller.source = "small.yaml";
  apply_overrides(smaller, {"sram.vmem_bytes=8 MiB"});
  const std::string vmem = "config sram.vmem_bytes 16777216";
  REQUIRE(line_of(text, vmem) > 0);
  const std::string one = error_of(text, smaller);
  CHECK_THAT(one, Catch::StartsWith(fmt::format("t.trace:{}: compiled for sram.vmem_bytes = 16777216 B (16 MiB), "
                                                "but the config has 8388608 B (8 MiB). ",
                                                line_of(text, vmem))));
  CHECK_THAT(one, Catch::Contains("systolic compile -c small.yaml") && Catch::Contains("run it with -c the config"));
  apply_overrides(smaller, {"mxu.rows=8"});
  CHECK_THAT(error_of(text, smaller),
             Catch::StartsWith(fmt::format("t.trace:{}: compiled for mxu.rows = 4, but the config has 8; line {}: "
                                           "sram.vmem_bytes = 16777216 B (16 MiB), but the config has 8388608 B (8 MiB). ",
                                           line_of(text, "config mxu.rows"), line_of(text, vmem))));
}

TEST_CASE("an edited or outdated header is refused at its line", "[trace]") {
  const ChipConfig c = chip(2);
  const std::string text = write_trace(compile(c, sample()), c);
  const int hash_line = line_of(text, "config_hash");
  // A config value edited without its hash, or a hash edited: the lines no longer hash to it.
  CHECK_THAT(error_of(replaced(text, "config mxu.rows 4", "config mxu.rows 5")),
             Catch::StartsWith(fmt::format("t.trace:{}: config_hash 0x", hash_line)) &&
                 Catch::Contains("does not match the config lines"));
  CHECK_THAT(error_of(replaced(text, fmt::format("config_hash {:#018x}", config_hash(c)),
                              fmt::format("config_hash {:#018x}", config_hash(c) ^ 1))),
             Catch::StartsWith(fmt::format("t.trace:{}: config_hash", hash_line)));
  // One edit of the text each, and what the reader says about it.
  const struct {
    const char* from;
    const char* to;
    std::string message;
  } edits[] = {
      {"dataflow ws", "dataflow os", "t.trace:2: dataflow os disagrees with the config line mxu.dataflow = ws"},
      {"dataflow ws", "dataflow xs", "t.trace:2: unknown dataflow 'xs': expected one of " + dataflow_choices()},
      {"dtypes mxu.dtype=bf16", "dtypes mxu.dtype=fp32", "t.trace:4: expected 'dtypes mxu.dtype=bf16'"},
      {"dtypes mxu.dtype=bf16", "dtypes mxu.dtype=bf17", "t.trace:4: key 'mxu.dtype': expected one of"},
      {"dataflow ws\n", "dataflow ws\ndataflow ws\n", "t.trace:3: 'dataflow' given twice (first on line 2)"},
      {"system chips=1 chip=0", "system chips=1 chip=1", "t.trace:5: chip 1 is not one of the system's 1 chip(s)"},
      {"memory ideal=false\n", "", "expected a 'memory' line before 'chip'"},
      {"systolic-trace 2", "systolic-trace 1",
       "t.trace:1: trace format version 1 is not supported (this build reads version 2): "
       "recompile the trace with `systolic compile`"},
  };
  for (const auto& e : edits) CHECK_THAT(error_of(replaced(text, e.from, e.to)), Catch::Contains(e.message));
  CHECK_THAT(error_of(text + "config mxu.rows 4\n"), Catch::Contains("'config' belongs to the header"));
}

}  // namespace test_trace
