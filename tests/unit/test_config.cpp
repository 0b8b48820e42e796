// Chip config: presets load and match their published peaks; every kind of bad input is an
// InputError naming the file, line and key; docs/config.md is the schema's own reference.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "input_error.hpp"
#include "models/common/error.hpp"
#include "sim/config/config.hpp"

namespace test_config {

using namespace systolic;

namespace {
const std::string kData = std::string(SYSTOLIC_TEST_DATA) + "/config/";
const std::string kConfigs = std::string(SYSTOLIC_SOURCE_DIR) + "/configs/";

std::string error_of(const std::string& path, const std::vector<std::string>& overrides = {}) {
  return testing::input_error_of([&] { load_config(path, overrides); });
}

double peak_macs_per_s(const ChipConfig& c) {
  return static_cast<double>(c.mxu.rows * c.mxu.cols * c.mxu.count) * c.clock_mhz * 1e6;
}
}  // namespace

TEST_CASE("presets reproduce their published peak rates", "[config]") {
  // TPU v4i: 4 MXUs x 128 x 128 MACs x 2 FLOP x 1.05 GHz = 137.6 TFLOPS ("138 TFLOPS").
  const ChipConfig v4i = load_config(kConfigs + "tpu-v4i.yaml");
  CHECK(2 * peak_macs_per_s(v4i) == Approx(137.6e12).epsilon(0.001));
  CHECK(v4i.mxu.dtype == DType::bf16);
  // TPU v1: 256 x 256 MACs x 2 ops x 0.7 GHz = 91.75 TOPS ("92 TOPS"), int8.
  const ChipConfig v1 = load_config(kConfigs + "tpu-v1.yaml");
  CHECK(2 * peak_macs_per_s(v1) == Approx(91.75e12).epsilon(0.001));
  CHECK(v1.mxu.dtype == DType::int8);
  const ChipConfig tiny = load_config(kConfigs + "tiny-4x4.yaml");
  CHECK(tiny.mxu.rows == 4);
  CHECK(tiny.mxu.model == MxuModel::exact);
}

TEST_CASE("overrides replace values with the same validation", "[config]") {
  const ChipConfig c = load_config(kConfigs + "tiny-4x4.yaml",
                                   {"mxu.rows=8", "mxu.convention=scalesim", "memory.ideal=true"});
  CHECK(c.mxu.rows == 8);
  CHECK(c.mxu.convention == Convention::scalesim);
  CHECK_THAT(error_of(kConfigs + "tiny-4x4.yaml", {"mxu.rws=8"}),
             Catch::Contains("unknown key 'mxu.rws'") && Catch::Contains("did you mean 'mxu.rows'"));
  CHECK_THAT(error_of(kConfigs + "tiny-4x4.yaml", {"mxu.rows=-3"}),
             Catch::Contains("key 'mxu.rows'") && Catch::Contains("got '-3'"));
  CHECK_THAT(error_of(kConfigs + "tiny-4x4.yaml", {"mxu.rows"}), Catch::Contains("expected key=value"));
  CHECK_THAT(error_of(kConfigs + "tiny-4x4.yaml", {"memory.ideal=yes"}),
             Catch::Contains("expected true or false, got 'yes'"));
}

TEST_CASE("bad config files name the file, line and key", "[config]") {
  CHECK_THAT(error_of(kData + "typo.yaml"),
             Catch::Contains("typo.yaml:5: unknown key 'mxu.colls'") &&
                 Catch::Contains("did you mean 'mxu.cols'"));
  CHECK_THAT(error_of(kData + "bad_range.yaml"),
             Catch::Contains("bad_range.yaml:2: key 'mxu.rows': expected an integer in [1, 65536], got '0'"));
  CHECK_THAT(error_of(kData + "bad_type.yaml"),
             Catch::Contains("bad_type.yaml:1: key 'clock_mhz': expected a number"));
  CHECK_THAT(error_of(kData + "bad_enum.yaml"),
             Catch::Contains("key 'mxu.model': expected one of exact, fast, got 'approximate'"));
  CHECK_THAT(error_of(kData + "malformed.yaml"), Catch::Contains("malformed.yaml:") &&
                                                     Catch::Contains("malformed YAML"));
  CHECK_THAT(error_of(kData + "not_a_map.yaml"), Catch::Contains("expected a map of config keys"));
  CHECK_THAT(error_of(kData + "section_scalar.yaml"),
             Catch::Contains("key 'mxu': expected a section of keys"));
  CHECK_THAT(error_of(kData + "does_not_exist.yaml"), Catch::Contains("cannot open config file"));
}

TEST_CASE("the resolved config lists every key, nested by section", "[config]") {
  const auto j = config_to_json(load_config(kConfigs + "tpu-v4i.yaml"));
  CHECK(j["mxu"]["rows"] == 128);
  CHECK(j["mxu"]["convention"] == "tpu");
  CHECK(j["memory"]["ideal"] == false);
  CHECK(j["clock_mhz"] == 1050.0);
}

TEST_CASE("docs/config.md carries the schema's current key reference", "[config][docs]") {
  std::ifstream f(std::string(SYSTOLIC_SOURCE_DIR) + "/docs/config.md");
  REQUIRE(f);
  std::stringstream ss;
  ss << f.rdbuf();
  // Regenerate with: systolic config --reference (see docs/config.md).
  CHECK_THAT(ss.str(), Catch::Contains(config_reference_markdown()));
}

}  // namespace test_config
