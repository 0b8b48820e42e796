#include "sim/viz/vcd_tracer.hpp"

#include <fmt/format.h>
#include <sysc/tracing/sc_tracing_ids.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <set>

#include "models/chip/chip.hpp"
#include "models/common/clock.hpp"
#include "models/common/error.hpp"
#include "sim/common/output_files.hpp"
#include "sim/report/report.hpp"
#include "sim/viz/vcd_clock.hpp"

namespace systolic {
namespace {

// VCD scope and variable names: letters, digits and '_' (a '.' would open a scope).
std::string sanitize(const std::string& name) {
  std::string out;
  for (char ch : name)
    out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') ? ch : '_';
  return out.empty() ? "_" : out;
}

void check_shape(const ChipConfig& config) {
  if (config.mxu.model != MxuModel::exact)
    throw InputError(
        "--vcd traces the exact MXU model's PE values; this config uses mxu.model = fast "
        "(add --set mxu.model=exact)");
  const ArrayShape s = config.mxu.shape();
  if (s.rows > VcdTracer::kMaxSide || s.cols > VcdTracer::kMaxSide)
    throw InputError(fmt::format(
        "--vcd: per-PE waveforms are for arrays up to {0}x{0}, this one is {1}x{2} (try "
        "configs/tiny-4x4.yaml, or --set mxu.rows=8 --set mxu.cols=8)",
        VcdTracer::kMaxSide, s.rows, s.cols));
}

}  // namespace

void VcdTracer::check(const ChipConfig& config, uint64_t cycles) {
  check_shape(config);
  const uint64_t pes = static_cast<uint64_t>(config.mxu.rows * config.mxu.cols * config.mxu.count);
  if (cycles > kMaxPeCycles / pes)
    throw InputError(fmt::format(
        "--vcd: {} PEs x {} cycles is too much to trace (at most {} PE-cycles, about {} MB of "
        "VCD); trace a smaller workload, or watch part of it with `systolic viz --cycles A:B`",
        pes, cycles, kMaxPeCycles, kMaxPeCycles * 40 / 1000000));
}

VcdTracer::VcdTracer(std::string path, const ChipConfig& config, const Program& program)
    : path_(std::move(path)), shape_(config.mxu.shape()), program_(program), clock_mhz_(config.clock_mhz) {
  check_shape(config);
  for (const auto& stream : program.streams)
    for (const auto& instr : stream.instructions)
      if (const auto* mm = std::get_if<MatmulOp>(&instr.op))
        if (mm->dtype != DType::int8) integer_ = false;
}

VcdTracer::~VcdTracer() {
  if (file_) {  // the run failed before stop(): drop the partial file
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
}

void VcdTracer::start(const Chip& chip) {
  sc_core::sc_report_handler::set_actions(sc_core::SC_ID_TRACING_TIMESCALE_UNIT_,
                                          sc_core::SC_DO_NOTHING);
  // sc_create_vcd_trace_file appends ".vcd" and opens the name as given; the name is a fresh
  // temporary created exclusively beside the target (never a stale file or link), renamed in stop().
  temp_ = create_exclusive_temp(path_, ".vcd");
  file_ = sc_core::sc_create_vcd_trace_file(temp_.substr(0, temp_.size() - 4).c_str());
  if (!file_) throw InputError(fmt::format("{}: cannot write file", path_));
  file_->set_time_unit(1, sc_core::SC_PS);  // the kernel's tick: every time is representable
  groups_ = {{"clock", {{"SystemC.clk", 1}}}, {"engines: busy, stalled", {}}};
  for (const Engine* e : chip.engines()) {
    sc_core::sc_trace(file_, e->busy_flag(), std::string(e->name()) + ".busy");
    sc_core::sc_trace(file_, e->stalled_flag(), std::string(e->name()) + ".stalled");
    for (const char* flag : {".busy", ".stalled"}) groups_[1].signals.emplace_back("SystemC." + std::string(e->name()) + flag, 1);
  }
  GtkwGroup semaphores{"semaphores", {}};
  std::set<std::string> used;
  for (size_t i = 0; i < chip.semaphores().size(); ++i) {
    std::string name = sanitize(i < program_.semaphores.size() ? program_.semaphores[i]
                                                               : fmt::format("sem{}", i));
    if (!used.insert(name).second) name += fmt::format("_{}", i);
    sc_core::sc_trace(file_, chip.semaphores().value_ref(static_cast<int>(i)),
                      std::string(chip.name()) + ".semaphores." + name, 64);
    semaphores.signals.emplace_back(fmt::format("SystemC.{}.semaphores.{}[63:0]", chip.name(), name), 64);
  }

  const size_t n = static_cast<size_t>(shape_.rows * shape_.cols);
  grids_.clear();
  grids_.reserve(chip.mxus().size());  // no reallocation: the traced variables stay put
  for (const MxuEngine* mxu : chip.mxus()) {
    Grid& g = grids_.emplace_back();
    g.engine = mxu;
    g.active = std::make_unique<bool[]>(n);
    if (integer_) {
      g.weight_i.assign(n, 0);
      g.activation_i.assign(n, 0);
      g.psum_i.assign(n, 0);
    } else {
      g.weight_f.assign(n, 0.0);
      g.activation_f.assign(n, 0.0);
      g.psum_f.assign(n, 0.0);
    }
    for (int64_t r = 0; r < shape_.rows; ++r) {
      GtkwGroup row{fmt::format("{} row {}", mxu->basename(), r), {}};
      for (int64_t c = 0; c < shape_.cols; ++c) trace_pe(g, r, c, row);
      groups_.push_back(std::move(row));
    }
  }
  groups_.push_back(std::move(semaphores));
}

// One PE's four signals, named after the PE (pe_RR_CC.psum_RR_CC) so that a waveform pane
// holding several PEs tells them apart.
void VcdTracer::trace_pe(Grid& g, int64_t r, int64_t c, GtkwGroup& row) {
  const size_t i = static_cast<size_t>(r * shape_.cols + c);
  const std::string rc = fmt::format("{:02}_{:02}", r, c);
  const std::string pe = fmt::format("{}.pe_{}.", g.engine->name(), rc);
  const std::string full = "SystemC." + pe;
  if (integer_) {
    sc_core::sc_trace(file_, g.psum_i[i], pe + "psum_" + rc, 32);
    sc_core::sc_trace(file_, g.activation_i[i], pe + "activation_" + rc, 8);
    sc_core::sc_trace(file_, g.weight_i[i], pe + "weight_" + rc, 8);
    row.signals.insert(row.signals.end(), {{full + "psum_" + rc + "[31:0]", 32},
                                           {full + "activation_" + rc + "[7:0]", 8},
                                           {full + "weight_" + rc + "[7:0]", 8}});
  } else {
    sc_core::sc_trace(file_, g.psum_f[i], pe + "psum_" + rc);
    sc_core::sc_trace(file_, g.activation_f[i], pe + "activation_" + rc);
    sc_core::sc_trace(file_, g.weight_f[i], pe + "weight_" + rc);
    for (const char* v : {"psum_", "activation_", "weight_"}) row.signals.emplace_back(full + v + rc, 0);
  }
  sc_core::sc_trace(file_, g.active[i], pe + "active_" + rc);
  row.signals.emplace_back(full + "active_" + rc, 1);
}

void VcdTracer::on_cycle(uint64_t, const std::vector<PeState>& pes) {
  if (!file_) return;
  const sc_core::sc_object* engine = sc_core::sc_get_current_process_handle().get_parent_object();
  Grid* g = nullptr;
  for (auto& candidate : grids_)
    if (candidate.engine == engine) g = &candidate;
  if (!g) return;
  for (size_t i = 0; i < pes.size(); ++i) {
    const PeState& p = pes[i];
    if (integer_) {
      g->weight_i[i] = static_cast<int32_t>(p.weight);
      g->activation_i[i] = static_cast<int32_t>(p.activation);
      g->psum_i[i] = static_cast<int32_t>(p.psum);
    } else {
      g->weight_f[i] = p.weight;
      g->activation_f[i] = p.activation;
      g->psum_f[i] = p.psum;
    }
    g->active[i] = p.active;
  }
  // The sample for this grid cycle is taken at the end of the current time step.
  sc_core::wait(cycles_to_time(1));
}

void VcdTracer::stop() {
  if (!file_) return;
  // SystemC samples a time step only when time moves on; nudge it by 1 ps (less than a VCD
  // unit, and every result has been read by now) so that the last cycle's values are written.
  if (sc_core::sc_get_status() != sc_core::SC_STOPPED)
    sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_PS));
  sc_core::sc_close_vcd_trace_file(file_);
  file_ = nullptr;
  std::error_code ec;
  // Both temporaries are fresh names created exclusively beside the target.
  const std::string raw = temp_, retimed = create_exclusive_temp(path_);
  try {
    const uint64_t end_ps = retime_vcd(raw, retimed, clock_mhz_);
    std::filesystem::remove(raw, ec);
    write_file_atomically(gtkw_path(path_), gtkw_save_file(path_, groups_, end_ps));
  } catch (...) {
    std::filesystem::remove(raw, ec);
    std::filesystem::remove(retimed, ec);
    throw;
  }
  std::filesystem::rename(retimed, path_, ec);
  if (ec) {
    std::filesystem::remove(retimed, ec);
    throw InputError(fmt::format("{}: cannot write file", path_));
  }
}

std::string gtkw_path(const std::string& vcd) {
  const std::filesystem::path p(vcd);
  return (p.extension() == ".vcd" ? p.parent_path() / p.stem() : p).string() + ".gtkw";
}

SimResult simulate_with_vcd(const ChipConfig& config, const Program& program, const std::string& path,
                            bool hbm_activity) {
  check_shape(config);
  ChipConfig fast = config;
  fast.mxu.model = MxuModel::fast;  // same cycle counts, cost per instruction
  VcdTracer::check(config, simulate(fast, program).total_cycles);
  VcdTracer tracer(path, config, program);
  RunOptions options;
  options.observer = &tracer;
  options.probe = &tracer;
  options.hbm_activity = hbm_activity;
  return simulate(config, program, options);
}

}  // namespace systolic
