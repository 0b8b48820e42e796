#pragma once
// "Did you mean" hints for unknown keys and names.
#include <string>
#include <string_view>
#include <vector>

namespace systolic {

// The closest candidate by edit distance, or "" when none is plausibly a typo.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "" — ready to append to an error message.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace systolic
