#include "sim/serving/pack_files.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <sstream>

#include "sim/packing/lane_view.hpp"
#include "sim/report/report.hpp"
#include "sim/serving/compare.hpp"
#include "sim/serving/requests_csv.hpp"

namespace systolic {
namespace {

using Files = std::vector<std::pair<std::string, std::string>>;

// requests.csv for the first bucket set, requests-<set>.csv for the others.
std::string requests_csv_name(size_t set, const std::string& name) {
  return set == 0 ? "requests.csv" : fmt::format("requests-{}.csv", name);
}

// `path` with "-<suffix>" before its extension: timeline.json -> timeline-static.json.
std::string with_suffix(const std::string& path, const std::string& suffix) {
  std::filesystem::path p(path);
  return p.replace_filename(p.stem().string() + "-" + suffix + p.extension().string()).string();
}

// One variant's files: report.json and the requests CSVs in `dir`, its timeline.
void add_outputs(const PackOutput& out, const std::filesystem::path& dir, const std::string& timeline,
                 Files& files) {
  files.emplace_back((dir / "report.json").string(), out.report.dump(2) + "\n");
  for (size_t i = 0; i < out.serving.size(); ++i) {
    std::ostringstream csv;
    serving::write_requests_csv(csv, out.serving[i]);
    const auto name = out.report["replays"][i]["bucket_set"].get<std::string>();
    files.emplace_back((dir / requests_csv_name(i, name)).string(), csv.str());
  }
  if (!timeline.empty()) files.emplace_back(timeline, out.timeline.dump() + "\n");
}

}  // namespace

std::vector<PackOutput> pack_variants(const ChipConfig& config, const PackRequest& r,
                                      const PackPaths& paths) {
  const std::vector<std::string> schedulers = scheduler_list(r.scheduler);
  const bool timeline = !paths.timeline.empty(), lanes = !paths.lanes.empty() || !paths.lanes_html.empty();
  if (schedulers.size() == 1) return {pack_report(config, r, timeline, lanes)};
  return pack_compare(config, r, schedulers, timeline, lanes);
}

Files pack_files(const std::vector<PackOutput>& variants, const PackPaths& paths) {
  const std::filesystem::path dir(paths.outdir);
  Files files;
  if (variants.size() == 1) {
    add_outputs(variants[0], dir, paths.timeline, files);
  } else {
    for (const PackOutput& v : variants) {
      const auto scheduler = v.report["policy"]["scheduler"].get<std::string>();
      add_outputs(v, dir / scheduler, paths.timeline.empty() ? "" : with_suffix(paths.timeline, scheduler),
                  files);
    }
    files.emplace_back((dir / "comparison.csv").string(), comparison_csv(variants));
  }
  if (!paths.lanes.empty()) files.emplace_back(paths.lanes, variants[0].lanes.dump() + "\n");
  if (!paths.lanes_html.empty()) files.emplace_back(paths.lanes_html, packing::lanes_html(variants[0].lanes));
  return files;
}

void write_pack_files(const Files& files) {
  for (const auto& [path, text] : files) write_file_atomically(path, text);
}

}  // namespace systolic
