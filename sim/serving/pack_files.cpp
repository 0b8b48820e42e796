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
  const std::vector<PackRequest> variants = pack_variant_requests(r);
  const bool timeline = !paths.timeline.empty(), lanes = !paths.lanes.empty() || !paths.lanes_html.empty();
  if (variants.size() == 1) return {pack_report(config, variants[0], timeline, lanes)};
  return pack_compare(config, variants, timeline, lanes);
}

std::string variant_name(const std::vector<PackOutput>& variants, size_t i) {
  const auto& policy = variants[i].report["policy"];
  bool schedulers = false, packers = false;
  for (const PackOutput& v : variants) {
    schedulers |= v.report["policy"]["scheduler"] != policy["scheduler"];
    packers |= v.report["policy"]["packer"] != policy["packer"];
  }
  const auto scheduler = policy["scheduler"].get<std::string>(), packer = policy["packer"].get<std::string>();
  if (schedulers && packers) return scheduler + "-" + packer;
  return packers ? packer : scheduler;
}

Files pack_files(const std::vector<PackOutput>& variants, const PackPaths& paths) {
  const std::filesystem::path dir(paths.outdir);
  Files files;
  if (variants.size() == 1) {
    add_outputs(variants[0], dir, paths.timeline, files);
  } else {
    for (size_t i = 0; i < variants.size(); ++i) {
      const std::string name = variant_name(variants, i);
      add_outputs(variants[i], dir / name, paths.timeline.empty() ? "" : with_suffix(paths.timeline, name),
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
