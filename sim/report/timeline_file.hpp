#pragma once
// Writing a run's timeline to a file (docs/timelines.md, "Large runs"): the events are
// serialised as they are made (sim/report/timeline.hpp's TimelineSink), gzip-compressed when
// the path ends in ".json.gz" (Perfetto and chrome://tracing open it as it is), optionally cut
// to a window of cycles, and written all at once through write_file_atomically, so a refused or
// failed write leaves nothing behind. The bytes equal make_system_timeline(...).dump() + "\n"
// (before compression) when there is no window.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/chip/chip_config.hpp"
#include "models/isa/program.hpp"
#include "sim/common/cycle_range.hpp"
#include "sim/simulate/simulate.hpp"

namespace systolic {

struct TimelineOptions {
  std::optional<CycleRange> window;     // --timeline-window A:B: only what overlaps cycles [A, B)
  uint64_t sample_every = 1;            // --timeline-sample N: one instruction slice in N per track
  uint64_t limit_bytes = 1ULL << 30;    // --timeline-limit: refuse a larger estimate (JSON text)
};

// The largest --timeline-sample: a coarser view than one slice in a million says nothing.
constexpr uint64_t kMaxTimelineSample = 1000000;

// The JSON text a timeline of these programs takes, before compression, estimated from their
// instruction count (each executed instruction is a slice with its arguments, and some a stall
// and an arrow; counters add a few per instruction): within 30 % on the shipped examples
// (docs/timelines.md, "Large runs", shows the measurements).
uint64_t estimate_timeline_bytes(const std::vector<const Program*>& programs);

// Before simulating: an InputError when the estimate exceeds the limit (no window given), with
// what to do instead; a note on stderr when it exceeds 64 MiB. With --timeline-sample N the
// estimate is divided by N; the text actually written is checked against the limit as well, so
// a timeline whose counters outweigh the estimate is refused (nothing written) rather than
// passed to a viewer that cannot load it.
void check_timeline_size(const std::vector<const Program*>& programs, const TimelineOptions& options,
                         const std::string& path);

// Streams the timeline into a temporary created exclusively beside `path` (gzip when `path`
// ends in .gz) and returns the temporary's name, for an OutputSet to adopt and commit with the
// run's other outputs; removes it and rethrows if writing fails.
std::string write_timeline_temporary(const std::string& path, const ChipConfig& config,
                                     const std::vector<SharedProgram>& programs, const SystemResult& result,
                                     const TimelineOptions& options);
void write_timeline(const std::string& path, const ChipConfig& config,
                    const std::vector<SharedProgram>& programs, const SystemResult& result,
                    const TimelineOptions& options);

}  // namespace systolic
