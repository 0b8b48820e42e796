#pragma once
// The compiled-trace text format (docs/trace-format.md): a program serialised as readable,
// diffable, hand-writable lines. write_trace and read_trace are exact inverses: running a
// program read back from its text gives the same report as running the program itself.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/chip/chip_config.hpp"
#include "models/common/names.hpp"
#include "models/isa/program.hpp"
#include "models/mxu/dataflow.hpp"
#include "sim/config/hash.hpp"

namespace systolic {

constexpr int kTraceFormatVersion = 2;

// What a trace was compiled for (its header): enough to refuse running it on another chip
// and to explain why, and to say in report.json what the program was built for.
struct TraceHeader {
  DataflowKind dataflow = DataflowKind::ws;  // mxu.dataflow (models/mxu/dataflow.hpp)
  bool memory_ideal = false;        // the memory mode at compile time (timing may use the other)
  std::vector<ConfigLine> dtypes;   // the operand-type keys (mxu.dtype), also among `config`
  int64_t chips = 1;                // chips of the system (ici.dims)
  int64_t chip = 0;                 // the chip this program is for
  uint64_t config_hash = 0;         // fnv1a_64(canonical_text(config))
  std::vector<ConfigLine> config;   // timing_config() at compile time
};

// The header of a program compiled for chip `chip` of `config`.
TraceHeader trace_header_for(const ChipConfig& config, int64_t chip = 0);

struct Trace {
  TraceHeader header;
  Program program;
};

// Text of `program`, compiled for chip `chip` of `config`: the header (everything the program
// depends on), then the array shape and MXU count it uses, then the program.
std::string write_trace(const Program& program, const ChipConfig& config, int64_t chip = 0);

// The header lines alone, from "systolic-trace" to the config lines: a hand-written trace for
// `config` starts with them.
std::string write_trace_header(const TraceHeader& header);

// Parses and validates a trace for `config`. Throws InputError "file:line: message" for an
// unknown opcode or key, a malformed value, a semaphore waited for but never signalled often
// enough, a header that does not hash to its recorded hash, or a trace compiled for another
// config (naming every differing key with both values; memory.ideal may differ); and
// "file: ..." for a trace that touches HBM past hbm.capacity_bytes (sim/compile/capacity.hpp).
Trace read_trace(const std::string& path, const ChipConfig& config);
Trace parse_trace(const std::string& text, const std::string& name, const ChipConfig& config);

// report.json's "trace" object of a run of a trace: what it was compiled for and the memory
// mode that timed it (docs/report.md).
nlohmann::ordered_json trace_report(const TraceHeader& header, const ChipConfig& run_config);

}  // namespace systolic
