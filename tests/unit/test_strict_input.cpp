// Strict readers (issue #20): a key given twice in any YAML input, a number that is not plain
// decimal, and an integer past its type's range are errors naming the file, the line or key,
// never a value silently dropped, wrapped or read in another base.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "fixtures.hpp"
#include "input_error.hpp"
#include "sim/compile/compile.hpp"
#include "sim/config/config.hpp"
#include "sim/packing/buckets.hpp"
#include "sim/trace/trace.hpp"
#include "sim/workload/transformer/model.hpp"
#include "sim/workload/workload.hpp"

namespace test_strict_input {

using namespace systolic;
using Catch::Contains;
using systolic::testing::temp_file;

namespace {
const std::string kConfigs = std::string(SYSTOLIC_SOURCE_DIR) + "/configs/";


std::string config_error(const std::string& path, const std::vector<std::string>& overrides = {}) {
  return testing::input_error_of([&] { load_config(path, overrides); });
}

// A small program's trace (one 6x8x10 GEMM on a 4x4 array) to corrupt one field of.
ChipConfig chip() {
  ChipConfig c;
  c.mxu.rows = 4;
  c.mxu.cols = 4;
  return c;
}
const std::string& trace_text() {
  static const std::string text = [] {
    Workload w;
    w.gemms = {{"g", 6, 8, 10, {}, 1, "w.yaml:2"}};
    return write_trace(compile(chip(), w), chip());
  }();
  return text;
}
// The trace with the value of the first `key=` after the first `after` replaced by `value`.
std::string trace_with(const std::string& after, const std::string& key, const std::string& value) {
  std::string text = trace_text();
  const size_t at = text.find(" " + key + "=", text.find(after));
  REQUIRE(at != std::string::npos);
  const size_t from = at + key.size() + 2;
  return text.replace(from, text.find_first_of(" \n", from) - from, value);
}
std::string trace_error(const std::string& text) {
  return testing::input_error_of([&] { parse_trace(text, "t.trace", chip()); });
}
}  // namespace

TEST_CASE("a key given twice is an error in every YAML input", "[strict]") {
  // Nested: the second mxu.rows is line 4; the first, line 3.
  CHECK(config_error(temp_file("dup.yaml", "name: x\nmxu:\n  rows: 8\n  rows: 16\n")) ==
        temp_file("dup.yaml", "name: x\nmxu:\n  rows: 8\n  rows: 16\n") + ":4: duplicate key 'rows' (first on line 3)");
  // A section given twice at the top level.
  CHECK_THAT(config_error(temp_file("dup2.yaml", "mxu:\n  rows: 8\nhbm:\n  channels: 8\nmxu:\n  cols: 8\n")),
             Contains("dup2.yaml:5: duplicate key 'mxu' (first on line 1)"));
  // --set with a flow map that repeats a key (the value is refused anyway, but first this).
  CHECK_THAT(config_error(kConfigs + "tiny-4x4.yaml", {"mxu.rows={a: 1, a: 2}"}),
             Contains("--set 'mxu.rows={a: 1, a: 2}':1: duplicate key 'a'"));
  // Bucket sets and model files go through the same check; inside a list item too.
  CHECK_THAT(testing::input_error_of([] { packing::parse_bucket_set("batch: [1]\nbatch: [2]\n", "b.yaml"); }),
             Contains("b.yaml:2: duplicate key 'batch' (first on line 1)"));
  CHECK_THAT(testing::input_error_of([] { transformer::parse_model("layers:\n  - {a: 1, a: 2}\n", "m.yaml"); }),
             Contains("m.yaml:2: duplicate key 'a'"));
}

TEST_CASE("a key that is not a name is an error in every YAML input", "[strict]") {
  // Found by the config fuzzer: "?" alone is a null key, and yaml-cpp's conversion of it (or of
  // a list) to a key name threw its own exception past the reader: exit 1.
  CHECK_THAT(config_error(temp_file("nullkey.yaml", "?\n: \xff\xff\xff\xff")),
             Contains("nullkey.yaml:") && Contains("expected a key name, got"));
  CHECK_THAT(config_error(temp_file("listkey.yaml", "name: x\nmxu:\n  ? [a]\n  : 1\n")),
             Contains("listkey.yaml:3: expected a key name, got a list as a key"));
  CHECK_THAT(testing::input_error_of([] { transformer::parse_model("[a, b]: 1\n", "m.yaml"); }),
             Contains("m.yaml:1: expected a key name"));
}

TEST_CASE("a config path that is a directory is a clear error", "[strict]") {
  const std::string dir = std::filesystem::temp_directory_path().string();
  CHECK(config_error(dir) == dir + ": is a directory, expected a YAML file");
}

TEST_CASE("config integers are decimal, config numbers meet their documented bounds", "[strict]") {
  const std::string tiny = kConfigs + "tiny-4x4.yaml";
  for (const std::string text : {"1e3", "010", "0x10", "16.0", "+-5"})
    CHECK_THAT(config_error(tiny, {"mxu.rows=" + text}),
               Contains("expected an integer in [1, 65536], got '" + text + "'"));
  CHECK(load_config(tiny, {"mxu.rows=+16"}).mxu.rows == 16);
  // The documented range of hbm.data_rate_gbps is [0.001, 100]: both ends are accepted.
  CHECK(load_config(tiny, {"hbm.data_rate_gbps=0.001"}).hbm.data_rate_gbps == 0.001);
  CHECK(load_config(tiny, {"hbm.data_rate_gbps=100"}).hbm.data_rate_gbps == 100);
  CHECK_THAT(config_error(tiny, {"hbm.data_rate_gbps=0.000999"}), Contains("expected a number in [0.001, 100]"));
}

TEST_CASE("trace integers are range-checked, never wrapped", "[strict]") {
  REQUIRE(trace_error(trace_text()) == "(no error)");
  // trace_with(after, key, value) is refused with a message containing `error`.
  struct Case {
    const char* after;
    const char* key;
    const char* value;
    const char* error;
  };
  const Case cases[] = {
      // 2^31 does not fit the int a layer index is: refused, not cast to -2^31.
      {"  matmul", "layer", "2147483648",
       "key 'layer': expected an integer in [0, 2147483647], got '2147483648'"},
      {"  matmul", "layer", "4294967296", "got '4294967296'"},
      // Leading zero: neither octal 8 nor decimal 10.
      {"  matmul", "m", "010", "key 'm': expected an integer >= 1, got '010'"},
      // 2^64 does not fit a wait count, nor does 2^32 (a wait holds 32 bits).
      {"  matmul", "wait", "act_ping_full>=18446744073709551616",
       "expected a decimal count below 2^32 after '>='"},
      {"  matmul", "wait", "act_ping_full>=4294967296", "expected a decimal count below 2^32 after '>='"},
      // 2^32 x 2^32 elements of 1 byte: 2^64 bytes wraps to 0; refused before any check uses it.
      {"  dma", "shape", "4294967296x4294967296x1",
       "dma shape 4294967296x4294967296x1 * elem 1 overflows 63 bits"},
      // An address near 2^64 would wrap base + extent past the bounds check.
      {"  dma", "src", "hbm:0xffffffffffffff00", "dma address 0xffffffffffffff00 * 2 overflows 63 bits"},
      // M = 2^62 on a layer: m*k*n*repeat does not fit.
      {"layer 0", "m", "4611686018427387904",
       "layer m*k*n*repeat = 4611686018427387904*8*10*1 overflows 63 bits"},
      {"  matmul", "m", "4611686018427387904", "matmul m*k*n = 4611686018427387904*"},
  };
  for (const Case& c : cases) {
    INFO(c.after << ": " << c.key << "=" << c.value);
    CHECK_THAT(trace_error(trace_with(c.after, c.key, c.value)), Contains(c.error));
  }
}

TEST_CASE("a trace matmul lies inside its layer", "[strict]") {
  // The first layer is 6x8x10 (repeat 1) and its first matmul 6x8x10: one past any bound is
  // refused (it would be timed for work the layer's MACs never count), the bound itself is not.
  const std::string outside = "outside its layer 'g' (m=6 k=8 n=10 repeat=1)";
  CHECK_THAT(trace_error(trace_with("  matmul", "m", "7")),
             Contains("matmul m0=0 m=7 k=8") && Contains(outside));
  CHECK_THAT(trace_error(trace_with("  matmul", "k", "9")), Contains(outside));
  CHECK_THAT(trace_error(trace_with("  matmul", "n0", "1")), Contains("n0=1 n=10") && Contains(outside));
  CHECK(trace_error(trace_with("  matmul", "m", "6")) == "(no error)");
  // One huge m needs a layer as tall; then it is timed (and bounded by the cycle range, budget.hpp).
  CHECK_THAT(trace_error(trace_with("  matmul", "m", "68719476736")),
             Contains("m=68719476736") && Contains(outside));
}

}  // namespace test_strict_input
