// systolic run: simulate a workload on a chip or a system (sim/run/pipeline.hpp), print the
// summary, write OUTDIR/report.json.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <memory>

#include "models/common/error.hpp"
#include "sim/chakra/chakra_et.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/progress.hpp"
#include "sim/common/input_text.hpp"
#include "sim/common/output_files.hpp"
#include "sim/compile/compile.hpp"
#include "sim/config/config.hpp"
#include "sim/report/report.hpp"
#include "sim/report/scalesim_csv.hpp"
#include "sim/report/timeline_file.hpp"
#include "sim/run/pipeline.hpp"
#include "sim/simulate/simulate.hpp"
#include "sim/viz/vcd_tracer.hpp"
#include "sim/workload/transformer/shard.hpp"

namespace systolic::cli {

std::string default_config_path() {
  return std::string(SYSTOLIC_SOURCE_DIR) + "/configs/tpu-v4i.yaml";
}

void add_config_options(CLI::App* cmd, std::string& config, std::vector<std::string>& overrides) {
  cmd->add_option("-c,--config", config, "Chip config YAML (default: configs/tpu-v4i.yaml)");
  cmd->add_option("--set", overrides, "Override a config key: key=value (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  // Every command that loads a config reads YAML: the size past which a YAML input is refused
  // before it is parsed (sim/common/input_text.hpp, docs/reliability.md "Limits").
  cmd->add_option_function<uint64_t>(
         "--max-yaml-bytes", [](uint64_t bytes) { set_max_yaml_bytes(bytes); },
         fmt::format("Refuse a YAML input larger than this before parsing it (default {}, ~1 GB once parsed)",
                     kDefaultMaxYamlBytes))
      ->check(CLI::PositiveNumber);
}

namespace {
struct RunOptions {
  std::string config = default_config_path();
  ProgramSource source;
  std::vector<std::string> overrides;
  std::string outdir = "out";
  bool quiet = false;
  std::string vcd;       // waveforms (sim/viz/vcd_tracer.hpp)
  std::string timeline;  // trace-event JSON (sim/report/timeline_file.hpp), gzip for .json.gz
  std::string timeline_window;
  uint64_t timeline_sample = 1;
  double timeline_limit_mib = 1024;
  bool scalesim_reports = false;  // OUTDIR/COMPUTE_REPORT.csv etc. (sim/report/scalesim_csv.hpp)
  std::string chakra;             // DIR/<workload>.<chip>.et (sim/chakra/chakra_et.hpp)
  bool progress = false;          // a progress line even when stderr is not a terminal
  bool every_chip = false;        // RunRequest::every_chip
  Budget budget;
};
}  // namespace

void add_sharding_options(CLI::App* cmd, WorkloadOptions& shape) {
  cmd->add_option("--tp", shape.tp, "Tensor-parallel degree of a transformer on a multi-chip config: 1 or the chip count")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--ep", shape.ep, "Expert-parallel degree of a MoE transformer: 1 or the chip count (with --tp)")
      ->check(CLI::PositiveNumber);
  cmd->add_option(
      "--mesh", shape.mesh,
      "Parallelism mesh of a transformer on a multi-chip config, instead of --tp/--ep: e.g. dp=4,tp=8 "
      "(tp x dp x pp = chips; ep folds over dp x tp; tp=8@xy keeps tp on torus axes x and y)");
  cmd->add_option("--micro-batches", shape.micro_batches,
                  "Micro-batches of a pipeline (--mesh pp > 1), GPipe style: the batch in this many pieces "
                  "(default 1)")
      ->check(CLI::Range(int64_t{1}, int64_t{65536}));
  cmd->add_option_function<std::string>(
         "--overlap", [&shape](const std::string& v) { shape.overlap = v == "on"; },
         "Decompose tensor-parallel collectives and overlap them with their matmuls where the hardware "
         "allows: "
         "on (default) or off")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--routing", shape.routing,
                  "MoE token routing with --ep: " + transformer::kRoutingNames.choices(" or ") + " (Zipf), default " +
                      shape.routing)
      ->check(CLI::IsMember(transformer::kRoutingNames.names()));
  // CLI::Range lets "nan" through (every comparison with it is false), and an unsigned option
  // reads "-1" as 2^64 - 1: both are refused here, before any work.
  const CLI::Validator finite([](std::string& text) {
    const auto v = parse_double(text);
    return v ? std::string() : "expected a finite number, got '" + text + "'";
  }, "FINITE");
  const CLI::Validator natural([](std::string& text) {
    const auto v = parse_int64(text);
    return v && *v >= 0 ? std::string() : "expected an integer in [0, 2^63), got '" + text + "'";
  }, "UINT");
  cmd->add_option("--skew", shape.skew, "Zipf exponent of --routing skewed (default 1.0)")
      ->check(finite & CLI::Range(0.0, 10.0));
  cmd->add_option("--routing-seed", shape.routing_seed, "Seed of --routing skewed: which experts are popular")
      ->check(natural);
  // Mixed precision of a transformer model (docs/precision.md), over its file's types.
  cmd->add_option("--weight-dtype", shape.weight_dtype, "Transformer weights' type, e.g. int8 (W8A16) or int4");
  cmd->add_option("--activation-dtype", shape.activation_dtype, "Transformer activations' type, e.g. bf16");
  cmd->add_option("--kv-dtype", shape.kv_dtype, "Transformer KV cache's type, e.g. fp8_e4m3");
}

void add_budget_options(CLI::App* cmd, Budget& budget) {
  cmd->add_option("--max-instructions", budget.max_instructions,
                  fmt::format("Refuse a run estimated to compile to more instructions (default {}, ~0.5 KB each)",
                              budget.max_instructions))
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-pe-cycles", budget.max_pe_cycles,
                  fmt::format("Refuse an exact-model run estimated to step more PE-cycles (default {})",
                              budget.max_pe_cycles))
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-ici-chunks", budget.max_ici_chunks,
                  fmt::format("Refuse a multi-chip run whose messages cross the ICI in more chunks (default {})",
                              budget.max_ici_chunks))
      ->check(CLI::PositiveNumber);
}

namespace {
// A run never replaces an earlier run's files without saying so (the default -o is ./out).
// Looked at before the run: the VCD is written while it simulates.
std::vector<std::string> existing(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& path : paths)
    if (std::filesystem::exists(path)) out.push_back(path);
  return out;
}
void note_replaced(const std::vector<std::string>& paths) {
  for (const auto& path : paths) fmt::print(stderr, "note: replacing {} from an earlier run\n", path);
}
// The request the options describe: config, workload or trace, budgets and what to record.
RunRequest run_request(const RunOptions& o) {
  RunRequest request{load_config(o.config, o.overrides), o.source, {}, "run", o.budget};
  request.record.timeline = !o.timeline.empty();
  request.record.timeline_path = o.timeline;
  if (!o.timeline_window.empty()) {
    if (o.timeline.empty()) throw InputError("--timeline-window: give --timeline PATH too");
    request.record.timeline_options.window = parse_cycle_range(o.timeline_window, "--timeline-window");
  }
  if (o.timeline_sample != 1 && o.timeline.empty()) throw InputError("--timeline-sample: give --timeline PATH too");
  request.record.timeline_options.sample_every = o.timeline_sample;
  request.record.timeline_options.limit_bytes = static_cast<uint64_t>(o.timeline_limit_mib * (1 << 20));
  request.record.vcd = o.vcd;
  request.every_chip = o.every_chip;
  return request;
}

std::string report_path_of(const RunOptions& o) { return (std::filesystem::path(o.outdir) / "report.json").string(); }
std::string csv_path_of(const RunOptions& o, const std::string& name) {
  return (std::filesystem::path(o.outdir) / name).string();
}
constexpr const char* kScalesimReports[] = {"COMPUTE_REPORT.csv", "BANDWIDTH_REPORT.csv",
                                            "DETAILED_ACCESS_REPORT.csv"};

// The Chakra files' prefix: the workload's (or trace's) file stem, in --chakra's folder.
std::string chakra_prefix(const RunOptions& o) {
  const std::string& input = o.source.workload.empty() ? o.source.trace : o.source.workload;
  return (std::filesystem::path(o.chakra) / std::filesystem::path(input).stem()).string();
}

// Every file the run will write, in the order `wrote:` lists them.
std::vector<std::string> outputs_of(const RunOptions& o, const ChipConfig& config) {
  std::vector<std::string> written = {report_path_of(o)};
  if (!o.timeline.empty()) written.push_back(o.timeline);
  if (!o.vcd.empty()) written.insert(written.end(), {o.vcd, gtkw_path(o.vcd)});
  if (o.scalesim_reports)
    for (const char* name : kScalesimReports) written.push_back(csv_path_of(o, name));
  if (!o.chakra.empty())
    for (int chip = 0; chip < static_cast<int>(config.ici.chips()); ++chip)
      written.push_back(chakra_file_name(chakra_prefix(o), chip));
  return written;
}

// Report, CSVs and timeline (streamed to its temporary) committed together or not at all (the
// VCD is renamed by the run). The CSVs may refuse (a multi-chip run): before anything is created.
void write_outputs(const RunOptions& o, const RunRequest& request, const RunResult& run) {
  const auto csvs = o.scalesim_reports ? scalesim_reports(request.config, run.report)
                                       : std::vector<std::pair<std::string, std::string>>{};
  const auto traces = o.chakra.empty() ? std::vector<std::pair<std::string, std::string>>{}
                                       : chakra_traces(request.config, run, chakra_prefix(o));
  OutputSet outputs;
  if (!o.timeline.empty())
    outputs.adopt(o.timeline, write_timeline_temporary(o.timeline, request.config, run.programs, run.result,
                                                       request.record.timeline_options));
  outputs.add(report_path_of(o), run.report.dump(2) + "\n");
  for (const auto& [name, text] : csvs) outputs.add(csv_path_of(o, name), text);
  for (const auto& [path, bytes] : traces) outputs.add(path, bytes);
  outputs.commit();
}

int run_command(const RunOptions& o) {
  RunRequest request = run_request(o);
  const std::vector<std::string> written = outputs_of(o, request.config);
  for (const auto& path : written) check_writable(path);  // before the run, not after it
  const std::vector<std::string> earlier = existing(written);
  auto progress = std::make_unique<ProgressLine>(o.progress);
  if (o.vcd.empty()) request.record.progress = progress->callback();
  const RunResult run = systolic::run(request);
  progress.reset();  // ends the progress line before anything else is printed
  if (run.trace && run.trace->memory_ideal != request.config.memory.ideal)
    fmt::print(stderr, "note: {} was compiled with memory.ideal={} and is timed with memory.ideal={}\n",
               o.source.trace, run.trace->memory_ideal, request.config.memory.ideal);
  note_replaced(earlier);
  write_outputs(o, request, run);
  if (!o.quiet) fmt::print("{}wrote: {}\n", format_summary(run.report), fmt::join(written, ", "));
  return 0;
}

// --timeline and what bounds it: the window, the sampling, the size limit.
void add_timeline_options(CLI::App* cmd, RunOptions& o) {
  cmd->add_option("--timeline", o.timeline,
                  "Write a timeline (Chrome trace-event JSON, for Perfetto / chrome://tracing); "
                  "gzip-compressed when the path ends in .json.gz");
  cmd->add_option("--timeline-window", o.timeline_window,
                  "Only cycles A to B-1 of the run in the timeline (A:B; A: and :B leave one end open)");
  cmd->add_option("--timeline-sample", o.timeline_sample,
                  "Keep one instruction slice in N on each track of the timeline (with its stall and arrow; "
                  "counters whole), for very long runs")
      ->check(CLI::Range(uint64_t{1}, kMaxTimelineSample));
  cmd->add_option("--timeline-limit", o.timeline_limit_mib,
                  "Refuse a timeline estimated above this many MiB of JSON (default 1024), before simulating")
      ->check(CLI::PositiveNumber);
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Simulate a workload on a chip configuration");
  add_program_source_options(cmd, opts->source);
  add_config_options(cmd, opts->config, opts->overrides);
  cmd->add_option("-o,--outdir", opts->outdir, "Directory for report.json (default: out)");
  cmd->add_flag("-q,--quiet", opts->quiet, "Do not print the summary table");
  cmd->add_option("--vcd", opts->vcd,
                  "Write waveforms (VCD, for GTKWave) of the exact model: per-PE values (arrays up "
                  "to 32x32), engine busy/stalled, semaphores");
  add_timeline_options(cmd, *opts);
  cmd->add_flag("--progress", opts->progress,
                "Show progress with the time left on stderr (by default only on a terminal, after 2 s)");
  cmd->add_flag("--scalesim-reports", opts->scalesim_reports,
                "Also write OUTDIR/COMPUTE_REPORT.csv, BANDWIDTH_REPORT.csv and DETAILED_ACCESS_REPORT.csv "
                "as SCALE-Sim v2 does (one chip)");
  cmd->add_option("--chakra", opts->chakra,
                  "Also write a Chakra execution trace per chip for ASTRA-sim: DIR/<workload>.<chip>.et");
  cmd->add_flag(
      "--every-chip", opts->every_chip,
      "Multi-chip: simulate every chip, also those that provably evolve like another (by default one "
      "per class; the report is the same but for `simulation`)");
  add_sharding_options(cmd, opts->source.shape);
  add_budget_options(cmd, opts->budget);
  return {cmd, [opts]() { return run_command(*opts); }};
}

}  // namespace systolic::cli
