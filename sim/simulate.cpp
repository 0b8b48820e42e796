#include "sim/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "models/chip/chip.hpp"
#include "models/common/clock.hpp"
#include "models/common/sim_context.hpp"
#include "sim/error.hpp"

namespace systolic {

SimResult simulate(const ChipConfig& config, const Program& program, GridObserver* observer,
                   RunProbe* probe) {
  FreshContext context;
  auto chip = std::make_unique<Chip>("chip", config, program, observer);
  if (probe) probe->start(*chip);
  sc_core::sc_start();

  SimResult result;
  result.total_cycles = now_cycles();
  std::string deadlocks;
  for (const Engine* e : chip->engines()) {
    if (!e->finished())
      deadlocks += fmt::format("; {}: {}", e->basename(), e->blocked_reason());
    EngineResult r;
    r.name = e->basename();
    r.id = e->id();
    r.records = e->records();
    for (const auto& rec : r.records) {
      r.busy_cycles += rec.end - rec.start;
      r.stalled_cycles += rec.start - rec.ready;
    }
    r.idle_cycles = result.total_cycles - r.busy_cycles - r.stalled_cycles;
    result.engines.push_back(std::move(r));
  }
  // engines() lists the MXUs, then the DMA engines.
  for (size_t i = 0; i < chip->mxus().size(); ++i) {
    const MxuEngine& m = *chip->mxus()[i];
    result.engines[i].macs_issued = m.macs_issued();
    result.engines[i].macs_by_dtype = m.macs_by_dtype();
    result.engines[i].sram_read = m.sram_read();
    result.engines[i].sram_written = m.sram_written();
  }
  for (size_t i = 0; i < chip->dmas().size(); ++i)
    result.engines[chip->mxus().size() + i].dma = chip->dmas()[i]->stats();
  result.engines.back().vpu = chip->vpu().stats();  // the VPU is listed last
  result.hbm = chip->hbm().stats();
  for (const auto& pad : chip->scratchpads())
    result.scratchpads.push_back({pad->name(), pad->bytes_read(), pad->bytes_written()});
  // Last, once every result has been read: stop() may nudge time to flush waveform samples.
  if (probe) probe->stop();
  if (!deadlocks.empty())
    throw InputError("deadlock: no engine can make progress" + deadlocks);
  return result;
}

}  // namespace systolic
