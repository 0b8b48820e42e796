// One pipeline (sim/run/pipeline.hpp): a single-chip run is a one-chip system with the same
// report schema as many chips, and its totals are conserved sums of the chips'.
#include <catch2/catch.hpp>

#include "models/common/error.hpp"
#include "sim/compile/compile.hpp"
#include "sim/config/config.hpp"
#include "sim/report/report.hpp"
#include "sim/run/pipeline.hpp"
#include "sim/simulate/simulate.hpp"

namespace test_pipeline {

using namespace systolic;

namespace {

const std::string kTiny = std::string(SYSTOLIC_SOURCE_DIR) + "/configs/tiny-4x4.yaml";
const std::string kExample = std::string(SYSTOLIC_SOURCE_DIR) + "/traces/gemms/example.yaml";

RunRequest request(const std::vector<std::string>& overrides) {
  RunRequest r;
  r.config = load_config(kTiny, overrides);
  r.source = {kExample, "", {}};
  return r;
}

}  // namespace

TEST_CASE("a single-chip run is a one-chip system with its chip's cycles and totals", "[pipeline]") {
  const RunRequest req = request({});
  const RunResult r = run(req);
  const auto& report = r.report;
  CHECK(report["schema_version"] == 2);
  CHECK(report["system"]["chips"] == 1);
  CHECK(report["system"]["topology"] == "none");
  REQUIRE(report["chips"].size() == 1);
  CHECK(report["links"].empty());
  CHECK(report["collectives"].empty());
  // The same cycles as the chip simulated on its own.
  const Program p = compile(req.config, load_workload(kExample));
  CHECK(report["totals"]["cycles"] == simulate(req.config, p).total_cycles);
  // The run's totals are its one chip's, plus communication that did not happen.
  const auto& chip = report["chips"][0];
  for (const auto& [key, value] : chip["totals"].items()) CHECK(report["totals"][key] == value);
  for (const char* key : {"ici_bytes_sent", "ici_link_bytes", "comm_cycles", "exposed_comm_cycles"})
    CHECK(report["totals"][key] == 0);
  CHECK(report["energy_pj"] == chip["energy_pj"]);
  // The summary is the per-layer table.
  const std::string summary = format_summary(report);
  CHECK_THAT(summary, Catch::Contains("square") && Catch::Contains("narrow x2") && Catch::Contains("240 MACs"));
}

TEST_CASE("a multi-chip report's totals and energy are the chips' sums", "[pipeline]") {
  const RunResult one = run(request({}));
  const RunResult two = run(request({"ici.topology=ring", "ici.dims=2"}));
  const auto& t = two.report["totals"];
  REQUIRE(two.report["chips"].size() == 2);
  // Every chip runs the whole GEMM list (no sharding): twice the MACs and HBM bytes.
  CHECK(t["macs"] == 2 * one.report["totals"]["macs"].get<uint64_t>());
  uint64_t read = 0;
  double energy = 0;
  for (const auto& c : two.report["chips"]) {
    read += c["totals"]["hbm_bytes_read"].get<uint64_t>();
    energy += c["energy_pj"]["total"].get<double>();
  }
  CHECK(t["hbm_bytes_read"] == read);
  CHECK(two.report["energy_pj"]["total"].get<double>() == Approx(energy).epsilon(1e-12));
  // Utilization over every PE of both chips: 16 PEs x 1 MXU x 2 chips.
  CHECK(t["utilization"].get<double>() ==
        Approx(t["macs"].get<double>() / (16.0 * 2 * t["cycles"].get<double>())).epsilon(1e-12));
  CHECK(two.report["system"]["chips"] == 2);
}

TEST_CASE("what one chip records is refused on a system, naming the config", "[pipeline]") {
  RunRequest traced = request({"ici.topology=ring", "ici.dims=4"});
  traced.source = {"", "x.trace", {}};
  CHECK_THROWS_WITH(run(traced), Catch::Contains("tiny-4x4.yaml is a 4-chip system (ici.topology = ring)") &&
                                     Catch::Contains("compiled traces describe one chip"));
  RunRequest vcd = request({"ici.topology=ring", "ici.dims=4"});
  vcd.record.vcd = "x.vcd";
  CHECK_THROWS_AS(run(vcd), InputError);
  RunRequest nothing = request({});
  nothing.source = {};
  CHECK_THROWS_WITH(run(nothing), Catch::Contains("run: give a workload (-w) or a compiled trace (-t)"));
}

}  // namespace test_pipeline
