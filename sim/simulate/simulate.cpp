#include "sim/simulate/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "models/chip/chip.hpp"
#include "models/common/clock.hpp"
#include "models/common/error.hpp"
#include "models/common/sim_context.hpp"
#include "models/system/system.hpp"

namespace systolic {

namespace {

// What one chip's engines and memories did, once the simulation has stopped. Appends each
// engine that did not finish its stream to `deadlocks`.
SimResult collect(const Chip& chip, uint64_t total_cycles, const std::string& prefix, std::string& deadlocks) {
  SimResult result;
  result.total_cycles = total_cycles;
  for (const Engine* e : chip.engines()) {
    if (!e->finished())
      deadlocks += fmt::format("; {}{}: {}", prefix, e->basename(), e->blocked_reason());
    EngineResult r;
    r.name = e->basename();
    r.id = e->id();
    r.records = e->records();
    for (const auto& rec : r.records) {
      r.busy_cycles += rec.end - rec.start;
      r.stalled_cycles += rec.start - rec.ready;
    }
    r.idle_cycles = result.total_cycles - r.busy_cycles - r.stalled_cycles;
    if (const auto* m = dynamic_cast<const MxuEngine*>(e)) {
      r.macs_issued = m->macs_issued();
      r.macs_by_dtype = m->macs_by_dtype();
      r.sram_read = m->sram_read();
      r.sram_written = m->sram_written();
    } else if (const auto* d = dynamic_cast<const DmaEngine*>(e)) {
      r.dma = d->stats();
    } else if (const auto* v = dynamic_cast<const VpuEngine*>(e)) {
      r.vpu = v->stats();
    } else if (const auto* i = dynamic_cast<const IciEngine*>(e)) {
      r.ici = i->stats();
    }
    result.engines.push_back(std::move(r));
  }
  result.hbm = chip.hbm().stats();
  for (const auto& pad : chip.scratchpads())
    result.scratchpads.push_back({pad->name(), pad->bytes_read(), pad->bytes_written()});
  return result;
}

// Runs the simulation to its end; with a progress callback, in slices, reporting the share of
// the engines' instructions finished after each. SC_EXIT_ON_STARVATION stops at the last event,
// so the end time is the one sc_start() would reach.
void run_to_end(const std::vector<const Engine*>& engines, const RunOptions& options) {
  if (!options.progress) return sc_core::sc_start();
  size_t total = 0;
  for (const Engine* e : engines) total += e->stream().size();
  do {  // (nothing is pending before the first sc_start elaborates the model)
    sc_core::sc_start(cycles_to_time(kProgressSliceCycles), sc_core::SC_EXIT_ON_STARVATION);
    size_t done = 0;
    for (const Engine* e : engines) done += e->records().size();
    options.progress(total ? static_cast<double>(done) / static_cast<double>(total) : 1.0);
  } while (sc_core::sc_pending_activity());
}

}  // namespace

SimResult simulate(const ChipConfig& config, const Program& program, const RunOptions& options) {
  FreshContext context;
  auto chip = std::make_unique<Chip>("chip", config, program, options.observer);
  if (options.hbm_channel_activity) chip->record_hbm_channel_activity();
  if (options.probe) options.probe->start(*chip);
  run_to_end(chip->engines(), options);

  std::string deadlocks;
  SimResult result = collect(*chip, now_cycles(), "", deadlocks);
  // Last, once every result has been read: stop() may nudge time to flush waveform samples.
  if (options.probe) options.probe->stop();
  if (!deadlocks.empty())
    throw InputError("deadlock: no engine can make progress" + deadlocks);
  return result;
}

SystemResult simulate_system(const ChipConfig& config, const std::vector<Program>& programs,
                             const RunOptions& options) {
  FreshContext context;
  auto system = std::make_unique<System>("system", config, programs);
  if (options.hbm_channel_activity)
    for (auto& chip : system->chips()) chip->record_hbm_channel_activity();
  std::vector<const Engine*> engines;
  for (const auto& chip : system->chips())
    for (const Engine* e : chip->engines()) engines.push_back(e);
  run_to_end(engines, options);

  SystemResult result;
  result.total_cycles = now_cycles();
  std::string deadlocks;
  for (const auto& chip : system->chips())
    result.chips.push_back(collect(*chip, result.total_cycles, std::string(chip->basename()) + ".", deadlocks));
  const IciNetwork& net = system->network();
  for (int l = 0; l < net.topology().link_count(); ++l)
    if (net.topology().link_exists(l)) {
      const LinkStats& s = net.links()[static_cast<size_t>(l)];
      result.links.push_back({net.topology().link_name(l), net.topology().link_source(l),
                              net.topology().link_target(l), s.bytes, s.busy_ps, s.chunks});
      result.chips[static_cast<size_t>(net.topology().link_source(l))].ici_link_bytes_out += s.bytes;
    }
  if (!deadlocks.empty())
    throw InputError("deadlock: no engine can make progress" + deadlocks);
  return result;
}

}  // namespace systolic
