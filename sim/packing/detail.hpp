#pragma once
// Internals shared by the packing library's readers and packers. Not part of the public API.
#include <cstdint>

#include "sim/common/input_text.hpp"
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace systolic::packing::detail {

using systolic::fail;  // sim/common/input_text.hpp



std::string_view trim(std::string_view text);
bool iequals(std::string_view a, std::string_view b);


// a + b or a * b; throws InputError naming `what` when the result does not fit in int64.
int64_t checked_add(int64_t a, int64_t b, const char* what);
int64_t checked_mul(int64_t a, int64_t b, const char* what);

}  // namespace systolic::packing::detail
