#pragma once
// The trace header's check against the config a trace is read for (trace_header.cpp); the
// reader parses the lines, this decides whether the program may run on the config.
#include <map>
#include <string>

#include "sim/trace/trace.hpp"

namespace systolic::trace_detail {

// Where each header statement was, for messages.
struct HeaderLines {
  int dataflow = 0, memory = 0, dtypes = 0, system = 0, hash = 0;
  std::map<std::string, int> config;  // key -> line of its `config` line
};

// Throws InputError "file:line: ..." when the config lines do not hash to config_hash (an
// edited header), when they differ from `config` (every differing key, both values, and how
// to fix it), or when the dataflow, dtypes or chip lines disagree with the config. A
// different memory.ideal is not an error: one lowering serves both modes.
void check_header(const TraceHeader& header, const HeaderLines& at, const ChipConfig& config,
                  const std::string& file);

}  // namespace systolic::trace_detail
