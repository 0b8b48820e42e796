#pragma once
// The one percentile rule of every report (docs/serving.md, "Percentiles"): nearest rank. The
// q-quantile (q in (0, 1]) of n values is the smallest value with at least q * n of the values
// at or below it: the ceil(q * n)-th smallest (1-based). Always one of the values; NaN when
// there are none. The serving metrics and the packing delays both use it.
#include <vector>

namespace systolic {

double percentile(std::vector<double> values, double q);

}  // namespace systolic
