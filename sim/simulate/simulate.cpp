#include "sim/simulate/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "models/chip/chip.hpp"
#include "models/common/clock.hpp"
#include "models/common/error.hpp"
#include "models/common/sim_context.hpp"
#include "models/system/system.hpp"

namespace systolic {

namespace {

// Appends each engine of `chip` that did not finish its stream to `deadlocks`.
void blocked(const Chip& chip, const std::string& prefix, std::string& deadlocks) {
  for (const Engine* e : chip.engines())
    if (!e->finished()) deadlocks += fmt::format("; {}{}: {}", prefix, e->basename(), e->blocked_reason());
}

// What one chip's engines and memories did, once the simulation has stopped.
// After the run (and the deadlock check, which reads the records): takes each engine's records.
SimResult collect(Chip& chip, uint64_t total_cycles) {
  SimResult result;
  result.total_cycles = total_cycles;
  for (Engine* e : chip.engines()) {
    EngineResult r;
    r.name = e->basename();
    r.id = e->id();
    r.records = e->take_records();
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

// Every link that exists, in link order. A chip that was not simulated carries the images of
// its representative's traffic: each link leaving the representative maps
// (ChipClasses::image_link) to the chip's own, and carries what every link of its orbit
// carries (over one link, only its own chunks; over several, the representative's router books
// its orbit's, models/ici/ici_router.hpp).
std::vector<LinkResult> link_results(const System& system) {
  const IciNetwork& net = system.network();
  const Topology& t = net.topology();
  const ChipClasses& c = system.classes();
  std::vector<LinkStats> stats = net.links();
  for (int l = 0; l < t.link_count(); ++l)
    if (!c.simulated(t.link_source(l))) stats[static_cast<size_t>(l)] = {};
  for (int s = 0; s < c.chips(); ++s) {
    if (c.simulated(s)) continue;
    const int r = c.representative[static_cast<size_t>(s)];
    for (size_t d = 0; d < t.dims().size(); ++d)
      for (const int dir : {+1, -1}) {
        const int l = t.link(r, d, dir);
        if (l >= 0 && net.links()[static_cast<size_t>(l)].chunks > 0)
          stats[static_cast<size_t>(c.image_link(s, l))] = net.links()[static_cast<size_t>(l)];
      }
  }
  std::vector<LinkResult> out;
  for (int l = 0; l < t.link_count(); ++l)
    if (t.link_exists(l)) {
      const LinkStats& k = stats[static_cast<size_t>(l)];
      out.push_back({t.link_name(l), t.link_source(l), t.link_target(l), k.bytes, k.busy_ps, k.chunks});
    }
  return out;
}

SimulationPlan plan_of(const ChipClasses& c, bool every_chip) {
  SimulationPlan plan;
  plan.representative = c.representative;
  for (const ChipSymmetry& s : c.symmetries) plan.symmetries.push_back(s.name);
  plan.limit = c.limit;
  plan.every_chip = every_chip;
  return plan;
}

}  // namespace

SimResult simulate(const ChipConfig& config, const Program& program, const RunOptions& options) {
  FreshContext context;
  auto chip = std::make_unique<Chip>("chip", config, program, options.observer);
  if (options.hbm_activity) chip->record_hbm_activity();
  if (options.probe) options.probe->start(*chip);
  run_to_end(std::as_const(*chip).engines(), options);

  std::string deadlocks;
  blocked(*chip, "", deadlocks);
  SimResult result = collect(*chip, now_cycles());
  // Last, once every result has been read: stop() may nudge time to flush waveform samples.
  if (options.probe) options.probe->stop();
  if (!deadlocks.empty())
    throw InputError("deadlock: no engine can make progress" + deadlocks);
  return result;
}

size_t SimulationPlan::simulated() const {
  size_t n = 0;
  for (size_t i = 0; i < representative.size(); ++i) n += representative[i] == static_cast<int>(i);
  return n;
}

SystemResult SystemResult::one_chip(SimResult chip) {
  SystemResult r;
  r.total_cycles = chip.total_cycles;
  r.simulated.push_back(std::move(chip));
  r.result_of = {0};
  r.plan.representative = {0};
  return r;
}

SystemResult simulate_system(const ChipConfig& config, const std::vector<Program>& programs,
                             const RunOptions& options) {
  std::vector<const Program*> p;
  for (const Program& program : programs) p.push_back(&program);
  return simulate_system(config, p, options);
}

SystemResult simulate_system(const ChipConfig& config, const std::vector<SharedProgram>& programs,
                             const RunOptions& options) {
  std::vector<const Program*> p;
  for (const SharedProgram& program : programs) p.push_back(program.get());
  return simulate_system(config, p, options);
}

SystemResult simulate_system(const ChipConfig& config, const std::vector<const Program*>& programs,
                             const RunOptions& options) {
  const int n = static_cast<int>(config.ici.chips());
  ChipClasses classes =
      options.every_chip || static_cast<int>(programs.size()) != n
          ? every_chip(static_cast<int>(programs.size()), options.every_chip ? "--every-chip" : "")
          : chip_classes(
                config.ici.build_topology(), programs,
                {!config.memory.ideal, std::llround(config.ici.link_latency_ns * config.clock_mhz) > 0});
  FreshContext context;
  auto system = std::make_unique<System>("system", config, programs, std::move(classes));
  if (options.hbm_activity)
    for (auto& chip : system->chips()) chip->record_hbm_activity();
  std::vector<const Engine*> engines;
  for (const auto& chip : system->chips())
    for (const Engine* e : chip->engines()) engines.push_back(e);
  run_to_end(engines, options);

  SystemResult result;
  result.total_cycles = now_cycles();
  const ChipClasses& c = system->classes();
  std::string deadlocks;
  for (int i = 0; i < c.chips(); ++i)  // before collect() takes the records it reads
    blocked(std::as_const(*system).chip_of(i), fmt::format("chip{}.", i), deadlocks);
  for (int i = 0; i < c.chips(); ++i) {
    if (c.simulated(i)) result.simulated.push_back(collect(system->chip_of(i), result.total_cycles));
    result.result_of.push_back(result.simulated.size() - 1);
  }
  for (int i = 0; i < c.chips(); ++i)
    result.result_of[static_cast<size_t>(i)] =
        result.result_of[static_cast<size_t>(c.representative[static_cast<size_t>(i)])];
  result.links = link_results(*system);
  for (const LinkResult& l : result.links)
    if (c.simulated(l.from))
      result.simulated[result.result_of[static_cast<size_t>(l.from)]].ici_link_bytes_out += l.bytes;
  result.plan = plan_of(c, options.every_chip);
  if (!deadlocks.empty())
    throw InputError("deadlock: no engine can make progress" + deadlocks);
  return result;
}

}  // namespace systolic
