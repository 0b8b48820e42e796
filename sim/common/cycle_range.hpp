#pragma once
// A range of run cycles given on the command line: "A:B" is cycles A to B-1, "A:" from A to the
// end, ":B" from the start to B-1 (viz --cycles, run --timeline-window).
#include <cstdint>
#include <optional>
#include <string>

namespace systolic {

struct CycleRange {
  std::optional<uint64_t> first;  // half-open [first, last); an open end when empty
  std::optional<uint64_t> last;
  bool contains(uint64_t cycle) const { return (!first || cycle >= *first) && (!last || cycle < *last); }
  // Whether [from, to] (an instant when from == to) touches the range.
  bool overlaps(uint64_t from, uint64_t to) const { return (!last || from < *last) && (!first || to >= *first); }
};

// InputError naming `flag` and the text unless it is A:B (B > A), A: or :B in whole cycles.
CycleRange parse_cycle_range(const std::string& text, const std::string& flag);

}  // namespace systolic
