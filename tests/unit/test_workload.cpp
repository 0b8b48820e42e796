// Workload readers: GEMM list YAML and SCALE-Sim topology CSV (docs/workloads.md).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>

#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "models/common/error.hpp"
#include "sim/workload/reader.hpp"
#include "sim/workload/scalesim.hpp"
#include "sim/workload/workload.hpp"

namespace test_workload {

using namespace systolic;
using Catch::Contains;
using systolic::testing::kGemms;
using systolic::testing::temp_file;

namespace {

const std::string kData = SYSTOLIC_TEST_DATA;
const std::string kTopo = std::string(SYSTOLIC_SOURCE_DIR) + "/traces/topologies";


// The InputError message that loading `path` produces ("" and a failed check if none).
std::string workload_error_of(const std::string& path) {
  try {
    load_workload(path);
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK(msg.find('\n') == std::string::npos);  // one line
    return msg;
  }
  FAIL_CHECK("expected an InputError from " << path);
  return "";
}

std::string yaml_error(const std::string& content) {
  return workload_error_of(temp_file("w.yaml", content));
}
std::string csv_error(const std::string& content) { return workload_error_of(temp_file("t.csv", content)); }

const char* kConvHeader =
    "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
    "Strides,\n";

int64_t total_macs(const Workload& w) {
  int64_t s = 0;
  for (const auto& g : w.gemms) s += g.m * g.k * g.n * g.repeat;
  return s;
}

}  // namespace

TEST_CASE("GEMM list YAML is read with defaults", "[workload]") {
  const auto w = load_workload(kData + "/workload_gemms.yaml");
  CHECK(w.name == "workload_gemms");  // the file stem; the top-level `name` is only a label
  REQUIRE(w.gemms.size() == 2);
  const auto& a = w.gemms[0];
  CHECK(a.name == "a");
  CHECK((a.m == 16 && a.k == 32 && a.n == 8));
  CHECK(a.repeat == 1);
  CHECK_FALSE(a.dtype.has_value());
  CHECK(a.source == kData + "/workload_gemms.yaml:4");
  const auto& b = w.gemms[1];
  CHECK((b.m == 1024 && b.k == 768 && b.n == 2304));
  CHECK(b.repeat == 12);
  REQUIRE(b.dtype.has_value());
  CHECK(*b.dtype == DType::fp8_e4m3);
  CHECK(b.source == kData + "/workload_gemms.yaml:5");
}

TEST_CASE("Shipped GEMM lists load", "[workload]") {
  const auto gpt2 = load_workload(kGemms + "/gpt2.yaml");
  REQUIRE(gpt2.gemms.size() == 6);
  CHECK(gpt2.gemms[0].name == "qkv_proj");
  CHECK((gpt2.gemms[0].m == 1024 && gpt2.gemms[0].k == 768 && gpt2.gemms[0].n == 2304));
  CHECK((gpt2.gemms[1].k == 64 && gpt2.gemms[1].n == 1024 && gpt2.gemms[1].repeat == 12));
  CHECK((gpt2.gemms[2].k == 1024 && gpt2.gemms[2].n == 64 && gpt2.gemms[2].repeat == 12));
  // 1024 tokens x (QKV 768*2304 + out 768*768 + FFN 2*768*3072) + 12 heads x 2 x 1024*64*1024
  CHECK(total_macs(gpt2) == 1024LL * (768 * 2304 + 768 * 768 + 2 * 768 * 3072) +
                                12LL * 2 * 1024 * 64 * 1024);
  const auto ex = load_workload(kGemms + "/example.yaml");
  REQUIRE(ex.gemms.size() == 3);
  for (const auto& g : ex.gemms) CHECK((g.k <= 4 && g.n <= 4));  // one fold on a 4x4 array
}

TEST_CASE("GEMM list vector entries run after the entries above them", "[workload]") {
  const auto w = load_workload(temp_file("v.yaml",
      "gemms:\n"
      "  - {name: gates, m: 64, k: 2048, n: 4096, dtype: int8}\n"
      "  - {name: sig, vector: silu, rows: 64, cols: 3072, dtype: int8}\n"
      "  - {name: upd, vector: mul, rows: 64, cols: 1024, repeat: 2}\n"
      "  - {name: next, m: 64, k: 1024, n: 1024}\n"
      "  - {name: out, vector: relu, rows: 64, cols: 1024}\n"));
  REQUIRE(w.gemms.size() == 2);
  REQUIRE(w.vectors.size() == 3);
  const VectorWork& sig = w.vectors[0];
  CHECK(sig.name == "sig");
  CHECK((sig.op.kind == VectorKind::silu && sig.op.rows == 64 && sig.op.cols == 3072));
  CHECK(sig.op.dtype == DType::int8);
  CHECK(sig.after_gemms == 1);
  CHECK(sig.repeat == 1);
  CHECK_THAT(sig.source, Contains("v.yaml:3"));
  CHECK((w.vectors[1].op.kind == VectorKind::mul && w.vectors[1].repeat == 2));
  CHECK(w.vectors[1].op.dtype == DType::bf16);  // the documented default
  CHECK(w.vectors[1].after_gemms == 1);
  CHECK((w.vectors[2].op.kind == VectorKind::relu && w.vectors[2].after_gemms == 2));
}

TEST_CASE("GEMM list vector entry errors name file, line and key", "[workload]") {
  CHECK_THAT(yaml_error("gemms:\n  - {name: a, vector: sigmoid, rows: 1, cols: 1}\n"),
             Contains("w.yaml:2: key 'vector': expected one of add, mul") && Contains("'sigmoid'"));
  CHECK_THAT(yaml_error("gemms:\n  - {name: a, vector: rleu, rows: 1, cols: 1}\n"),
             Contains("did you mean 'relu'"));
  CHECK_THAT(yaml_error("gemms:\n  - {name: a, vector: relu, rows: 1}\n"),
             Contains("w.yaml:2: vector entry 'a': missing key 'cols'"));
  CHECK_THAT(yaml_error("gemms:\n  - name: a\n    vector: relu\n    rows: 0\n    cols: 4\n"),
             Contains("w.yaml:4: key 'rows': expected a positive integer"));
  CHECK_THAT(yaml_error("gemms:\n  - {name: a, vector: relu, rows: 1, cols: 1, k: 3}\n"),
             Contains("w.yaml:2: unknown key 'k' in a vector entry"));
}

TEST_CASE("SCALE-Sim conv CSV maps by im2col with valid padding", "[workload]") {
  // CRLF line endings, blank lines, padded fields, one row without the trailing comma.
  const auto path = kData + "/workload_conv.csv";
  const auto w = load_workload(path);
  CHECK(w.name == "workload_conv");
  REQUIRE(w.gemms.size() == 3);
  // AlexNet Conv1: 224x224, 11x11, stride 4: ofmap = ceil((224-11+4)/4) = ceil(54.25) = 55,
  // M = 55*55 = 3025, K = 11*11*3 = 363, N = 96.
  CHECK(w.gemms[0].name == "Conv1");
  CHECK((w.gemms[0].m == 3025 && w.gemms[0].k == 363 && w.gemms[0].n == 96));
  CHECK(w.gemms[0].source == path + ":3");
  // 27x27, 5x5, stride 1: ofmap 23, M = 529, K = 5*5*96 = 2400, N = 256.
  CHECK(w.gemms[1].name == "Conv2");
  CHECK((w.gemms[1].m == 529 && w.gemms[1].k == 2400 && w.gemms[1].n == 256));
  CHECK(w.gemms[1].source == path + ":4");
  // FC as a 1x1 conv on a 1x1 map: M = 1, K = 512, N = 1000.
  CHECK((w.gemms[2].m == 1 && w.gemms[2].k == 512 && w.gemms[2].n == 1000));
  CHECK(w.gemms[2].source == path + ":6");
}

TEST_CASE("scalesim_im2col rounds a partial edge window up, as SCALE-Sim does", "[workload]") {
  // ResNet 1x1 stride-2 shortcut on an unpadded 56x56 map: ceil((56-1+2)/2) = ceil(28.5) = 29,
  // not PyTorch's floor((56-1)/2)+1 = 28. (SCALE-Sim's own Resnet18.csv gives 56 and gets 29.)
  ConvLayer l{"s", 56, 56, 1, 1, 64, 128, 2, 2};
  auto g = scalesim_im2col(l);
  REQUIRE(g);
  CHECK((g->ofmap_h == 29 && g->ofmap_w == 29 && g->m == 841 && g->k == 64 && g->n == 128));
  // Giving 55 (the pixels the real conv reads) yields the true 28.
  l.ifmap_h = l.ifmap_w = 55;
  g = scalesim_im2col(l);
  CHECK((g->ofmap_h == 28 && g->m == 784));
  // Different strides per dimension.
  g = scalesim_im2col(ConvLayer{"x", 224, 224, 3, 3, 3, 16, 2, 1});
  CHECK((g->ofmap_h == 112 && g->ofmap_w == 222 && g->m == 112 * 222));
  // Overflow is reported, not wrapped.
  CHECK_FALSE(scalesim_im2col(ConvLayer{"big", 4000000000, 4000000000, 1, 1, 1, 1, 1, 1}));
}

TEST_CASE("ResNet-18 topology reproduces the paper's shapes", "[workload]") {
  const auto w = load_workload(kTopo + "/resnet18.csv");
  REQUIRE(w.gemms.size() == 21);  // conv1, 16 block convs, 3 projection shortcuts, fc
  // conv1: 7x7/2 on 224 padded by 3; the conv reads 229 of the 230 padded pixels:
  // ofmap = ceil((229-7+2)/2) = 112, M = 112*112 = 12544, K = 7*7*3 = 147, N = 64.
  CHECK(w.gemms[0].name == "Conv1");
  CHECK((w.gemms[0].m == 12544 && w.gemms[0].k == 147 && w.gemms[0].n == 64));
  // conv2_x: 3x3/1 on 56 padded to 58: ofmap 56, M = 3136, K = 576, N = 64.
  CHECK((w.gemms[1].m == 3136 && w.gemms[1].k == 576 && w.gemms[1].n == 64));
  // conv5_1a: 3x3/2, 14 -> 7 (ifmap 15): M = 49, K = 3*3*256 = 2304, N = 512.
  CHECK(w.gemms[15].name == "Conv5_1a");
  CHECK((w.gemms[15].m == 49 && w.gemms[15].k == 2304 && w.gemms[15].n == 512));
  CHECK(w.gemms[20].name == "FC");
  CHECK((w.gemms[20].m == 1 && w.gemms[20].k == 512 && w.gemms[20].n == 1000));
  // He et al. 2016, Table 1: 1.8e9 multiply-adds for the 18-layer net.
  CHECK(total_macs(w) == 1814073344);
}

TEST_CASE("SCALE-Sim's own topology files load", "[workload]") {
  const std::string dir = kTopo + "/scalesim/";
  CHECK(load_workload(dir + "alexnet.csv").gemms.size() == 5);
  CHECK(load_workload(dir + "yolo_tiny.csv").gemms.size() == 9);
  CHECK(load_workload(dir + "mobilnet_paper.csv").gemms.size() == 28);
  CHECK(load_workload(dir + "vit_s.csv").gemms.size() == 5);
  const auto r = load_workload(dir + "Resnet18.csv");
  REQUIRE(r.gemms.size() == 21);
  // Unpadded 224x224, 7x7/2: ceil((224-7+2)/2) = 110 (SCALE-Sim's Resnet50.csv notes Eh = 110).
  CHECK(r.gemms[0].m == 110 * 110);
  CHECK(r.gemms[7].name == "Conv3_s");
  CHECK(r.gemms[7].m == 29 * 29);
}

TEST_CASE("SCALE-Sim GEMM-form CSV: Layer, M, N, K", "[workload]") {
  const auto w = load_workload(kData + "/workload_gemm_form.csv");
  REQUIRE(w.gemms.size() == 2);
  // Columns are M, N, K; SCALE-Sim runs it as an M x K ifmap with N 1xK filters, so
  // T = M, Sr = K, Sc = N.
  CHECK(w.gemms[0].name == "QKT");
  CHECK((w.gemms[0].m == 1024 && w.gemms[0].n == 1024 && w.gemms[0].k == 64));
  CHECK(w.gemms[1].name == "Linear1");
  CHECK((w.gemms[1].m == 1024 && w.gemms[1].n == 4800 && w.gemms[1].k == 1600));
  const auto v = load_workload(kTopo + "/scalesim/vit_s.csv");
  CHECK((v.gemms[1].m == 196 && v.gemms[1].n == 1176 && v.gemms[1].k == 64));
}

TEST_CASE("Depthwise: a 'DP' layer becomes one layer per channel", "[workload]") {
  const auto w = load_workload(kData + "/workload_depthwise.csv");
  REQUIRE(w.gemms.size() == 1 + 4 + 1);
  // Conv1: 9x9, 3x3/2: ofmap ceil((9-3+2)/2) = 4, M = 16, K = 27, N = 8.
  CHECK((w.gemms[0].m == 16 && w.gemms[0].k == 27 && w.gemms[0].n == 8));
  // Conv2_DP, 4 channels: Conv2_DPChannel_0..3, each 1 channel: ofmap 4x4, M = 16, K = 9, N = 1.
  for (int i = 0; i < 4; ++i) {
    const auto& g = w.gemms[1 + i];
    CHECK(g.name == "Conv2_DPChannel_" + std::to_string(i));
    CHECK((g.m == 16 && g.k == 9 && g.n == 1));
    CHECK(g.source == kData + "/workload_depthwise.csv:3");
  }
  // "_dw" is only a name (SCALE-Sim's MobileNet files): not split; the '#' comment is dropped.
  CHECK(w.gemms[5].name == "Conv3_dw");
  CHECK((w.gemms[5].m == 4 && w.gemms[5].k == 9 && w.gemms[5].n == 1));
}

TEST_CASE("Conv CSV with separate stride height and width", "[workload]") {
  const auto w = load_workload(kData + "/workload_two_strides.csv");
  REQUIRE(w.gemms.size() == 1);
  CHECK((w.gemms[0].m == 112 * 222 && w.gemms[0].k == 27 && w.gemms[0].n == 16));
}

TEST_CASE("GEMM list errors name file, line and key", "[workload]") {
  const auto gemm = [](const std::string& fields) {
    return "gemms:\n  - name: g\n" + fields;
  };
  SECTION("unknown top-level key, with a hint") {
    const auto e = yaml_error("name: x\ngemm:\n  - {name: a, m: 1, k: 1, n: 1}\n");
    CHECK_THAT(e, Contains("w.yaml:2: unknown key 'gemm'") && Contains("did you mean 'gemms'"));
  }
  SECTION("unknown GEMM key, with a hint") {
    const auto e = yaml_error(gemm("    m: 1\n    k: 1\n    n: 1\n    repaet: 2\n"));
    CHECK_THAT(e, Contains("w.yaml:6: unknown key 'repaet'") && Contains("did you mean 'repeat'"));
  }
  SECTION("zero dimension") {
    const auto e = yaml_error(gemm("    m: 0\n    k: 1\n    n: 1\n"));
    CHECK_THAT(e, Contains("w.yaml:3: key 'm': expected a positive integer") && Contains("'0'"));
  }
  SECTION("negative dimension") {
    const auto e = yaml_error(gemm("    m: 2\n    k: 1\n    n: -5\n"));
    CHECK_THAT(e, Contains("w.yaml:5: key 'n': expected a positive integer") && Contains("'-5'"));
  }
  SECTION("non-integer dimension") {
    CHECK_THAT(yaml_error(gemm("    m: 2\n    k: 3.5\n    n: 1\n")),
               Contains("w.yaml:4: key 'k': expected a positive integer") && Contains("'3.5'"));
    CHECK_THAT(yaml_error(gemm("    m: 2\n    k: abc\n    n: 1\n")),
               Contains("w.yaml:4: key 'k'") && Contains("'abc'"));
    CHECK_THAT(yaml_error(gemm("    m: 2\n    k: '12'\n    n: 1\n")),
               Contains("w.yaml:4: key 'k'") && Contains("the string '12'"));
    CHECK_THAT(yaml_error(gemm("    m: 99999999999999999999\n    k: 1\n    n: 1\n")),
               Contains("w.yaml:3: key 'm': expected a positive integer"));
  }
  SECTION("bad repeat and dtype") {
    CHECK_THAT(yaml_error(gemm("    m: 1\n    k: 1\n    n: 1\n    repeat: 0\n")),
               Contains("w.yaml:6: key 'repeat': expected a positive integer"));
    const auto e = yaml_error(gemm("    m: 1\n    k: 1\n    n: 1\n    dtype: bf61\n"));
    CHECK_THAT(e, Contains("w.yaml:6: key 'dtype': expected one of int8, fp8_e4m3") &&
                      Contains("'bf61'") && Contains("did you mean 'bf16'"));
  }
  SECTION("missing key") {
    const auto e = yaml_error("gemms:\n  - {name: a, m: 1, k: 1, n: 1}\n  - {name: b, m: 1, k: 1}\n");
    CHECK_THAT(e, Contains("w.yaml:3: GEMM entry 'b': missing key 'n'"));
    CHECK_THAT(yaml_error("name: x\n"), Contains("w.yaml:1: missing key 'gemms'"));
  }
  SECTION("duplicate key") {
    CHECK_THAT(yaml_error(gemm("    m: 1\n    k: 1\n    m: 2\n    n: 1\n")),
               Contains("w.yaml:5: duplicate key 'm'"));
  }
  SECTION("empty or wrong-typed list") {
    CHECK_THAT(yaml_error("gemms: []\n"),
               Contains("w.yaml:1: key 'gemms': expected a non-empty list of GEMMs"));
    CHECK_THAT(yaml_error("gemms: 3\n"), Contains("w.yaml:1: key 'gemms'") && Contains("'3'"));
    CHECK_THAT(yaml_error("gemms:\n  - 7\n"),
               Contains("w.yaml:2: key 'gemms': each entry must be a map"));
    CHECK_THAT(yaml_error("- a\n- b\n"), Contains("w.yaml:1: expected a map with key 'gemms'"));
    CHECK_THAT(yaml_error(""), Contains("w.yaml: empty file"));
  }
  SECTION("malformed YAML") {
    const auto e = yaml_error("gemms:\n  - {name: a, m: 1, k: 1, n: 1}\n  - {name: b, m: 1\n");
    CHECK_THAT(e, Contains("w.yaml:") && Contains("malformed YAML"));
    CHECK_THAT(yaml_error("gemms:\n  - name: a\n   m: 1\n"), Contains("w.yaml:3: malformed YAML"));
  }
  SECTION("product overflow") {
    const auto e = yaml_error(gemm("    m: 4000000000\n    k: 4000000000\n    n: 4\n"));
    CHECK_THAT(e, Contains("w.yaml:2: GEMM 'g': m*k*n") && Contains("overflows int64"));
    CHECK_THAT(yaml_error(gemm("    m: 3000000\n    k: 3000000\n    n: 1000\n    repeat: 2000\n")),
               Contains("w.yaml:2: GEMM 'g': m*k*n*repeat") && Contains("overflows int64"));
  }
}

TEST_CASE("Topology CSV errors name file, line and column", "[workload]") {
  const std::string h = kConvHeader;
  SECTION("wrong column count") {
    const auto e = csv_error(h + "Conv1,224,224,3,3,3,64,\n");
    CHECK_THAT(e, Contains("t.csv:2: expected 8 columns (Layer name, IFMAP Height") &&
                      Contains("got 7"));
    CHECK_THAT(csv_error(h + "\nConv1,1,1,1,1,1,1,1,\nConv2,8,8,3,3,1,1,1,9,\n"),
               Contains("t.csv:4: expected 8 columns") && Contains("got 9"));
  }
  SECTION("non-numeric, zero and negative values") {
    CHECK_THAT(csv_error(h + "Conv1,224,2x4,3,3,3,64,1,\n"),
               Contains("t.csv:2: layer 'Conv1': column 'IFMAP Width': expected a positive "
                        "integer, got '2x4'"));
    CHECK_THAT(csv_error(h + "Conv1,224,224,3,3,0,64,1,\n"),
               Contains("t.csv:2: layer 'Conv1': column 'Channels'") && Contains("got '0'"));
    CHECK_THAT(csv_error(h + "Conv1,224,224,3,3,3,64,-2,\n"),
               Contains("t.csv:2: layer 'Conv1': column 'Strides'") && Contains("got '-2'"));
    CHECK_THAT(csv_error(h + "Conv1,224,224,3,3,3,,1,\n"),
               Contains("column 'Num Filter'") && Contains("got ''"));
    CHECK_THAT(csv_error(h + ",224,224,3,3,3,64,1,\n"), Contains("t.csv:2: empty layer name"));
  }
  SECTION("filter larger than the ifmap") {
    const auto e = csv_error(h + "Conv1,5,5,3,3,1,1,1,\nConv2,5,7,7,3,1,1,1,\n");
    CHECK_THAT(e, Contains("t.csv:3: layer 'Conv2': filter 7x3 is larger than the ifmap 5x7"));
  }
  SECTION("unknown or missing header") {
    CHECK_THAT(csv_error("Layer, IFMAP Height, Width,\nConv1,1,1,\n"),
               Contains("t.csv:1: unrecognized header 'Layer, IFMAP Height, Width'"));
    CHECK_THAT(csv_error("\nConv1,224,224,3,3,3,64,1,\n"),
               Contains("t.csv:2: the first line must be the header"));
    CHECK_THAT(csv_error(""), Contains("t.csv: empty file"));
    CHECK_THAT(csv_error(h + "\n\n"), Contains("t.csv: no layers after the header"));
  }
  SECTION("GEMM form") {
    CHECK_THAT(csv_error("Layer, M, N, K,\nL0, 10, 20,\n"),
               Contains("t.csv:2: expected 4 columns (Layer, M, N, K)") && Contains("got 3"));
    CHECK_THAT(csv_error("Layer, M, N, K,\nL0, 10, 20, 0.5,\n"),
               Contains("t.csv:2: layer 'L0': column 'K': expected a positive integer"));
    CHECK_THAT(csv_error("Layer, M, N, K,\nL0, 4000000000, 4000000000, 4000000000,\n"),
               Contains("t.csv:2: layer 'L0': M*K*N") && Contains("overflows int64"));
  }
  SECTION("im2col overflow") {
    CHECK_THAT(csv_error(h + "Big,4000000000,4000000000,1,1,1,1,1,\n"),
               Contains("t.csv:2: layer 'Big': the im2col GEMM") && Contains("overflows int64"));
  }
  SECTION("sparsity and huge depthwise layers") {
    const std::string hs = "Layer Name, M, N, K, Sparsity,\n";
    CHECK(load_workload(temp_file("s.csv", hs + "G, 3, 5, 16, 1:1,\nH, 3, 5, 16,\n")).gemms.size() ==
          2);
    CHECK_THAT(csv_error(hs + "G, 3, 5, 16, 2:4,\n"),
               Contains("t.csv:2: layer 'G': column 'Sparsity': '2:4' is not supported"));
    CHECK_THAT(csv_error(h + "Conv_DP,8,8,3,3,100000,1,1,\n"),
               Contains("t.csv:2: layer 'Conv_DP': depthwise") && Contains("100000 channels"));
  }
}

TEST_CASE("Every workload reader rejects an empty file, naming it", "[workload][registry]") {
  for (const auto& e : WorkloadReaderRegistry::instance().entries()) {
    for (const std::string& ext : e.impl->extensions()) {
      const std::string path = temp_file("empty" + ext, "");
      INFO(e.name << " " << path);
      std::string message;
      try {
        e.impl->read(path, {});
      } catch (const InputError& error) {
        message = error.what();
      }
      CHECK(message.rfind(path + ":", 0) == 0);
    }
  }
}

TEST_CASE("Workload files that cannot be read", "[workload]") {
  CHECK_THAT(workload_error_of(kData + "/does_not_exist.yaml"),
             Contains("does_not_exist.yaml: cannot open workload file"));
  CHECK_THAT(workload_error_of(temp_file("w.txt", "gemms: []\n")),
             Contains("w.txt: unknown workload format"));
}

TEST_CASE("SCALE-Sim CSV: quoted fields may hold commas; an open quote names its line", "[workload]") {
  // RFC 4180 quoting (libcsv): the layer name "QK, scaled" is one field.
  const auto w = load_workload(temp_file("q.csv", "Layer, M, N, K,\n\"QK, scaled\", 8, 16, 4,\n\"V\", 8, 4, 16,\n"));
  REQUIRE(w.gemms.size() == 2);
  CHECK(w.gemms[0].name == "QK, scaled");
  CHECK((w.gemms[0].m == 8 && w.gemms[0].n == 16 && w.gemms[0].k == 4));
  CHECK(w.gemms[1].name == "V");
  CHECK_THAT(csv_error("Layer, M, N, K,\nA, 8, 16, 4,\n\"B, 8, 4, 16,\n"),
             Catch::Contains("t.csv:3: malformed CSV line"));
}

}  // namespace test_workload
