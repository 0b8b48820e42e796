#pragma once
// Several schedulers side by side in one `systolic pack` run (docs/serving.md, "Side by side"):
// `--scheduler continuous,static,dynamic` serves the log once per scheduler (the shapes
// simulated once for all), writes one report per scheduler, and compares them: one row per
// scheduler and bucket set, in comparison.csv and as a terminal table.
#include <string>
#include <vector>

#include "sim/serving/pack_report.hpp"

namespace systolic {

// The schedulers of a --scheduler value: names separated by commas. InputError naming
// --scheduler for an empty name or one given twice (unknown names are prepare_serving's).
std::vector<std::string> scheduler_list(const std::string& value);

// One PackOutput per scheduler of `schedulers`, in order; every input checked before anything
// is simulated. `shapes_simulated` counts the shapes of every variant so far.
std::vector<PackOutput> pack_compare(const ChipConfig& config, const PackRequest& request,
                                     const std::vector<std::string>& schedulers, bool with_timeline = false,
                                     bool with_lanes = false);

// comparison.csv: scheduler, bucket_set, then the numbers of kComparisonColumns (an empty cell
// where a value does not exist).
std::string comparison_csv(const std::vector<PackOutput>& variants);
// The same as a table for the terminal.
std::string format_comparison(const std::vector<PackOutput>& variants);

}  // namespace systolic
