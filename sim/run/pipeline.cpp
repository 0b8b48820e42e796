#include "sim/run/pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "models/common/error.hpp"
#include "sim/compile/compile.hpp"
#include "sim/report/report.hpp"
#include "sim/viz/vcd_tracer.hpp"
#include "sim/workload/transformer/lower.hpp"

namespace systolic {

LoadedProgram load_program(const ChipConfig& config, const ProgramSource& source, const std::string& command,
                           const Budget& budget) {
  if (source.workload.empty() == source.trace.empty())
    throw InputError(command + ": give a workload (-w) or a compiled trace (-t)");
  LoadedProgram out;
  if (!source.trace.empty()) {
    Trace trace = read_trace(source.trace, config);
    out.program = std::move(trace.program);
    out.trace = std::move(trace.header);
    out.workload.name = std::filesystem::path(source.trace).stem().string();
    out.workload.path = source.trace;
  } else {
    out.workload = load_workload(source.workload, source.shape);
    out.program = compile(config, out.workload, 0, budget);
  }
  return out;
}

namespace {

std::vector<const Program*> pointers(const std::vector<SharedProgram>& programs) {
  std::vector<const Program*> out;
  out.reserve(programs.size());
  for (const auto& p : programs) out.push_back(p.get());
  return out;
}

// One object per distinct workload, shared by the chips that have it.
std::vector<std::shared_ptr<const Workload>> shared(std::vector<Workload> workloads) {
  std::vector<std::shared_ptr<const Workload>> out;
  for (Workload& w : workloads) {
    auto same = std::find_if(out.begin(), out.end(), [&](const auto& o) { return *o == w; });
    out.push_back(same != out.end() ? *same : std::make_shared<const Workload>(std::move(w)));
  }
  return out;
}

// One chip, run by simulate() and wrapped as a one-chip system. Not through simulate_system:
// a System is built from an ICI topology, and a single-chip config has none (ici.topology:
// none means no ICI engine and no links). A one-chip ring (ici.dims=1) gives the same cycles
// and energy at the same speed (Llama-2-7B prefill 1x2048 on tpu-v4i: 245,583,013 cycles, ~2.0 s
// either way) but adds an idle ici0 engine to the report, and only simulate() carries the
// waveform probe (--vcd).
void run_one_chip(const RunRequest& request, RunResult& out) {
  const ChipConfig& config = request.config;
  LoadedProgram loaded = load_program(config, request.source, request.command, request.budget);
  if (!request.source.trace.empty()) check_matmul_cycle_range(config, loaded.program, loaded.workload.path);
  check_pe_cycles(config, estimate_pe_cycles(config, loaded.program), request.budget, loaded.workload.path);
  if (request.record.timeline) check_timeline_size({&loaded.program}, request.record.timeline_options, request.record.timeline_path);
  const RunOptions options{nullptr, nullptr, request.record.hbm_activity, request.record.progress};
  SimResult chip = request.record.vcd.empty()
                       ? simulate(config, loaded.program, options)
                       : simulate_with_vcd(config, loaded.program, request.record.vcd, options.hbm_activity);
  out.result = SystemResult::one_chip(std::move(chip));
  out.workloads.push_back(std::make_shared<const Workload>(std::move(loaded.workload)));
  out.programs.push_back(std::make_shared<const Program>(std::move(loaded.program)));
  out.trace = std::move(loaded.trace);
}

// A multi-chip config: one workload per chip (a transformer sharded with tp/ep), one simulation.
void run_system(const RunRequest& request, RunResult& out) {
  const ChipConfig& config = request.config;
  const ProgramSource& source = request.source;
  if (!source.trace.empty())
    throw InputError(fmt::format("{}: {} is a {}-chip system (ici.topology = {}); compiled traces describe "
                                 "one chip: give a workload (-w)",
                                 request.command, config.source, config.ici.chips(),
                                 kIciTopologyNames.name(config.ici.topology)));
  if (source.workload.empty()) throw InputError(request.command + ": give a workload (-w)");
  if (!request.record.vcd.empty())
    throw InputError(request.command +
                     ": --vcd records one chip's PE grid; use a single-chip config (ici.topology: none)");
  std::vector<Workload> workloads =
      load_system_workloads(source.workload, source.shape, config.ici.build_topology());
  out.programs = compile_system(config, workloads, request.budget);
  out.workloads = shared(std::move(workloads));
  uint64_t pe_cycles = 0, ici_chunks = 0;  // over all chips, saturating
  std::pair<const Program*, std::pair<uint64_t, uint64_t>> last{};  // a program shared by chips is read once
  for (const auto& p : out.programs) {
    if (p.get() != last.first)
      last = {p.get(), {estimate_pe_cycles(config, *p), estimate_ici_chunks(config, *p)}};
    if (__builtin_add_overflow(pe_cycles, last.second.first, &pe_cycles)) pe_cycles = UINT64_MAX;
    if (__builtin_add_overflow(ici_chunks, last.second.second, &ici_chunks)) ici_chunks = UINT64_MAX;
  }
  check_pe_cycles(config, pe_cycles, request.budget, source.workload);
  check_ici_chunks(config, ici_chunks, request.budget, source.workload);
  if (request.record.timeline) check_timeline_size(pointers(out.programs), request.record.timeline_options, request.record.timeline_path);
  RunOptions options{nullptr, nullptr, request.record.hbm_activity, request.record.progress};
  options.every_chip = request.every_chip;
  out.result = simulate_system(config, pointers(out.programs), options);
}

// Tokens a model's bucket shape processes: B x S for a prefill, B (one each) for a decode step;
// 0 for a workload that is not a model at a shape.
int64_t bucket_tokens(const ProgramSource& source) {
  if (source.workload.empty() || source.shape.bucket.empty()) return 0;
  const auto shape = transformer::parse_bucket(source.shape.bucket, "--bucket");
  return source.shape.phase == "decode" ? shape.batch : shape.batch * shape.length;
}

}  // namespace

RunResult run(const RunRequest& request) {
  RunRequest r = request;
  r.record.hbm_activity |= r.record.timeline;  // the timeline's HBM bandwidth and channel counters
  RunResult out;
  if (r.config.ici.topology == IciTopologyKind::none) run_one_chip(r, out);
  else run_system(r, out);
  out.report = make_report(r.config, out.workloads, out.programs, out.result, bucket_tokens(r.source));
  if (out.trace) out.report["trace"] = trace_report(*out.trace, r.config);
  return out;
}

}  // namespace systolic
