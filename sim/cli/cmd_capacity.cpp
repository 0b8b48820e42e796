// systolic capacity: the highest request rate one replica sustains within the SLOs and the
// fewest replicas that serve a log within them (docs/serving.md, "Capacity").
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "sim/cli/commands.hpp"
#include "sim/config/config.hpp"
#include "sim/report/report.hpp"
#include "sim/serving/capacity_report.hpp"

namespace systolic::cli {
namespace {
struct CapacityCliOptions {
  std::string config = default_config_path();
  std::vector<std::string> overrides;
  std::string buckets;
  CapacityRequest request;
  std::string outdir = "out";
  bool quiet = false;
};

void add_search_options(CLI::App* cmd, CapacityRequest& r) {
  cmd->add_option("--search", r.search,
                  kCapacitySearchNames.choices(" | ") +
                      ": the highest rate one replica sustains, the fewest replicas for the log, or both (default)");
  cmd->add_option("--target", r.target,
                  fmt::format("SLO attainment that counts as sustained, in (0, 1] (default {})", r.target));
  cmd->add_option("--tolerance", r.tolerance,
                  fmt::format("Relative precision of the rate search (default {})", r.tolerance));
  cmd->add_option("--max-replicas", r.max_replicas,
                  fmt::format("Most replicas the replica search tries (default {})", r.max_replicas));
}
}  // namespace

Command add_capacity_command(CLI::App& app) {
  auto o = std::make_shared<CapacityCliOptions>();
  PackRequest& r = o->request.serving;
  auto* cmd = app.add_subcommand(
      "capacity", "Highest request rate one replica sustains within SLOs, and the fewest replicas for a log");
  add_config_options(cmd, o->config, o->overrides);
  cmd->add_option("-m,--model", r.model, "Transformer model YAML (traces/models/)")->required();
  cmd->add_option("--requests", r.requests, "Request log CSV (Azure format or arrival_s,prompt,output)")
      ->required();
  cmd->add_option("--buckets", o->buckets, "Bucket-set YAML")->required();
  cmd->add_flag("--skip-bad-lines", r.skip_bad_lines, "Count and skip malformed log lines");
  add_serving_options(cmd, r);
  add_search_options(cmd, o->request);
  cmd->add_option("-o,--outdir", o->outdir, "Directory for capacity.json and capacity.csv (default: out)");
  cmd->add_flag("-q,--quiet", o->quiet, "Do not print the curves");
  return {cmd, [o]() {
    o->request.serving.bucket_files = {o->buckets};
    const ChipConfig config = load_config(o->config, o->overrides);
    const CapacityOutput out = capacity_report(config, o->request);
    for (const auto& w : out.warnings) fmt::print(stderr, "systolic: warning: {}\n", w);
    const std::filesystem::path dir(o->outdir);
    const std::string json_path = (dir / "capacity.json").string(), csv_path = (dir / "capacity.csv").string();
    // Both texts exist before the first file is written: an error leaves no partial output.
    const std::string json_text = out.report.dump(2) + "\n";
    write_file_atomically(json_path, json_text);
    write_file_atomically(csv_path, out.csv);
    if (!o->quiet) {
      const PackRequest& p = o->request.serving;
      fmt::print("{} on {} | {} requests from {} | bucket set {}, scheduler {}, router {}\n", p.model, config.name,
                 out.report["requests"]["count"].get<size_t>(), p.requests,
                 out.report["bucket_set"]["name"].get<std::string>(), p.scheduler, p.router);
      fmt::print("{}wrote: {}, {}\n", out.text, json_path, csv_path);
    }
    return 0;
  }};
}

}  // namespace systolic::cli
