#pragma once
// The compiled-trace text format (docs/trace-format.md): a program serialised as readable,
// diffable, hand-writable lines. write_trace and read_trace are exact inverses: running a
// program read back from its text gives the same report as running the program itself.
#include <string>

#include "sim/config.hpp"
#include "sim/program.hpp"

namespace systolic {

constexpr int kTraceFormatVersion = 1;

// Text of `program`, compiled for `config` (its array shape and MXU count go in the header).
std::string write_trace(const Program& program, const ChipConfig& config);

// Parses and validates a trace for `config`. Throws InputError "file:line: message" for an
// unknown opcode or key, a malformed value, a semaphore waited for but never signalled often
// enough, or a trace compiled for another array shape than the config's; and "file: ..." for a
// trace that touches HBM past hbm.capacity_bytes (sim/capacity.hpp).
Program read_trace(const std::string& path, const ChipConfig& config);
Program parse_trace(const std::string& text, const std::string& name, const ChipConfig& config);

}  // namespace systolic
