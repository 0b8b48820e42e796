#pragma once
// The message of the InputError `f` throws, or "(no error)": for tests of bad input.
#include <string>

#include "models/common/error.hpp"

namespace systolic::testing {

template <typename F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace systolic::testing
