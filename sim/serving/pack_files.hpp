#pragma once
// The files `systolic pack` writes (docs/serving.md, "systolic pack"), shared by the CLI and the
// Python pack(): report.json and the requests CSVs of each scheduler, the timelines,
// comparison.csv for several schedulers, the lane view. Every file is formatted before the first
// is written, so an error leaves no partial output.
#include <string>
#include <utility>
#include <vector>

#include "models/chip/chip_config.hpp"
#include "sim/serving/pack_report.hpp"
#include "sim/serving/setup.hpp"

namespace systolic {

// Where the outputs go: the folder of report.json and requests.csv, and the optional files
// (empty: not written).
struct PackPaths {
  std::string outdir = "out";
  std::string timeline;
  std::string lanes;       // lanes.json of the first bucket set
  std::string lanes_html;  // the same as a page
};

// One PackOutput per variant of the request (every scheduler of --scheduler with every packer of
// --policy, names separated by commas; compare.hpp), with the timeline and the lane view when
// `paths` asks for them.
std::vector<PackOutput> pack_variants(const ChipConfig& config, const PackRequest& request,
                                      const PackPaths& paths);

// The folder of variant i among `variants`: its scheduler, its packer, or <scheduler>-<packer>,
// by which of the two differ between the variants.
std::string variant_name(const std::vector<PackOutput>& variants, size_t i);

// (path, text) of every file: one variant's report.json and requests CSVs in outdir; several
// variants' each in outdir/<variant_name>/ (a timeline as <timeline>-<variant_name>.json), plus
// outdir/comparison.csv; the lane view once (it is the first variant's).
std::vector<std::pair<std::string, std::string>> pack_files(const std::vector<PackOutput>& variants,
                                                            const PackPaths& paths);

// Writes each of `files` atomically (report.hpp), in order.
void write_pack_files(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace systolic
