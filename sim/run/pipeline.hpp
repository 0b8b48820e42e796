#pragma once
// One run, whoever asks for it (`systolic run`, the Python module's run(), the serving replay's
// bucket shapes): load the workload or compiled trace, compile one program per chip, simulate,
// report. A single-chip config is a one-chip system: the same report (chips[] with one entry),
// the same totals, the same entry point.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/chip/chip_config.hpp"
#include "models/isa/program.hpp"
#include "sim/compile/budget.hpp"
#include "sim/report/timeline_file.hpp"
#include "sim/simulate/simulate.hpp"
#include "sim/trace/trace.hpp"
#include "sim/workload/workload.hpp"

namespace systolic {

// Where a program comes from: a workload (-w; --bucket/--phase for transformer models, --tp etc.
// on a multi-chip config) compiled for the chip, or a compiled trace (-t, one chip only).
struct ProgramSource {
  std::string workload;
  std::string trace;
  WorkloadOptions shape;
};

struct LoadedProgram {
  Workload workload;  // for a trace: only its name (file stem) and path
  Program program;
  std::optional<TraceHeader> trace;  // what a trace was compiled for
};
// Throws InputError "<command>: give a workload (-w) or a compiled trace (-t)" unless exactly
// one is given, and whatever the reader or the compiler rejects.
LoadedProgram load_program(const ChipConfig& config, const ProgramSource& source, const std::string& command,
                           const Budget& budget = {});

// What a run records beyond report.json.
struct Recording {
  bool timeline = false;           // write_timeline() can follow (the HBM channels' activity is kept)
  std::string timeline_path;       // named in the size check, made before simulating
  TimelineOptions timeline_options;
  bool hbm_activity = false;
  std::string vcd;                 // waveforms written to this path (one chip only)
  std::function<void(double)> progress;  // RunOptions::progress (not with a VCD)
};

struct RunRequest {
  ChipConfig config;
  ProgramSource source;
  Recording record;
  std::string command = "run";  // names the caller in messages
  Budget budget;                // limits checked before the work (sim/compile/budget.hpp)
  // Simulate every chip of a system, even those that evolve like another (--every-chip;
  // the report is the same but for `simulation`).
  bool every_chip = false;
};

struct RunResult {
  // One per chip; chips with equal workloads or programs share one object (compile_system).
  std::vector<std::shared_ptr<const Workload>> workloads;
  std::vector<SharedProgram> programs;
  SystemResult result;
  std::optional<TraceHeader> trace;  // a compiled trace's header
  nlohmann::ordered_json report;     // report.json (sim/report/report.hpp), with `trace` for a trace
};

// Throws InputError for bad input (before anything is simulated) and for a program that
// deadlocks or does not fit.
RunResult run(const RunRequest& request);

}  // namespace systolic
