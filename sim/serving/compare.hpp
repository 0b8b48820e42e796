#pragma once
// Several schedulers and packers side by side in one `systolic pack` run (docs/serving.md, "Side
// by side"): `--scheduler continuous,static,dynamic` and `--policy none,ffd` serve the log once
// per (scheduler, packer) variant (the shapes simulated once for all), write one report per
// variant, and compare them: one row per variant and bucket set, in comparison.csv and as a
// terminal table.
#include <string>
#include <vector>

#include "sim/serving/pack_report.hpp"

namespace systolic {

// The names of a --scheduler or --policy value (`flag`): names separated by commas. InputError
// naming the flag for an empty name or one given twice (unknown names are prepare_serving's).
std::vector<std::string> name_list(const std::string& value, const std::string& flag);
std::vector<std::string> scheduler_list(const std::string& value);

// The variants of `request`: every scheduler of its --scheduler list with every packer of its
// --policy list (schedulers outer), each a request with one of each.
std::vector<PackRequest> pack_variant_requests(const PackRequest& request);

// One PackOutput per variant, in order; every input checked before anything is simulated.
// `shapes_simulated` counts the shapes of every variant so far.
std::vector<PackOutput> pack_compare(const ChipConfig& config, const std::vector<PackRequest>& variants,
                                     bool with_timeline = false, bool with_lanes = false);

// comparison.csv: scheduler, packer, bucket_set, then the numbers of kComparisonColumns (an empty
// cell where a value does not exist).
std::string comparison_csv(const std::vector<PackOutput>& variants);
// The same as a table for the terminal.
std::string format_comparison(const std::vector<PackOutput>& variants);

}  // namespace systolic
