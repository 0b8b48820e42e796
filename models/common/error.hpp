#pragma once
// Errors a user can fix. Everything the user feeds us (configs, workloads, traces, flags)
// is checked, and a violation becomes an InputError whose message names the file, the line
// or key, and what was expected. The CLI prints it on one line and exits with code 2.
#include <stdexcept>
#include <string>

namespace systolic {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace systolic
