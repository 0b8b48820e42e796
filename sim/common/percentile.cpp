#include "sim/common/percentile.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace systolic {

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  if (!(q > 0 && q <= 1)) throw std::logic_error("percentile: q must be in (0, 1]");
  const auto n = static_cast<double>(values.size());
  // The relative nudge keeps q * n that is an integer in exact arithmetic (0.9 * 10) from
  // rounding up to the next rank.
  const auto rank = static_cast<size_t>(std::max(1.0, std::ceil(q * n * (1 - 1e-12))));  // 1-based
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(rank - 1), values.end());
  return values[rank - 1];
}

}  // namespace systolic
