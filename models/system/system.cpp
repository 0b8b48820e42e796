#include "models/system/system.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "models/common/error.hpp"

namespace systolic {
namespace {

std::vector<const Program*> pointers(const std::vector<Program>& programs) {
  std::vector<const Program*> out;
  for (const Program& p : programs) out.push_back(&p);
  return out;
}

}  // namespace

System::System(const sc_core::sc_module_name& name, const ChipConfig& config,
               const std::vector<Program>& programs)
    : System(name, config, pointers(programs), every_chip(static_cast<int>(programs.size()), "")) {}

System::System(const sc_core::sc_module_name& name, const ChipConfig& config,
               const std::vector<const Program*>& programs, ChipClasses classes)
    : sc_module(name), fabric_(IciNetwork(config.ici, config.clock_mhz)), classes_(std::move(classes)) {
  const int n = fabric_.network.topology().chips();
  if (static_cast<int>(programs.size()) != n)
    throw InputError(fmt::format("the system has {} chips (ici.dims = {}) but {} program{} given", n,
                                 dims_text(config.ici.dims), programs.size(), programs.size() == 1 ? " was" : "s were"));
  if (classes_.chips() != n) throw std::logic_error("system: chip classes of another system");
  build(config, programs);
  mirror(programs);
  // Every chip's messages, simulated or not, in chip order (as a system of every chip checks).
  for (int i = 0; i < n; ++i) {
    if (classes_.simulated(i)) {
      chips_[simulated_index_[static_cast<size_t>(i)]]->check_ici();
      continue;
    }
    for (const Stream& s : programs[static_cast<size_t>(i)]->streams) {
      if (s.engine.kind != EngineKind::ici) continue;
      for (size_t j = 0; j < s.instructions.size(); ++j)
        if (const IciOp* op = std::get_if<IciOp>(&s.instructions[j].op))
          if (auto problem = check_ici_op(fabric_, i, *op))
            throw InputError(fmt::format("chip{}.ici0 instruction {}: {}", i, j, *problem));
    }
  }
}

// The representatives, each registered with the fabric; the other chips' HBM (for the checks'
// capacity) and semaphore names are their representative's and their own program's.
void System::build(const ChipConfig& config, const std::vector<const Program*>& programs) {
  const size_t n = programs.size();
  fabric_.semaphores.assign(n, nullptr);
  fabric_.hbms.assign(n, nullptr);
  fabric_.semaphore_names.assign(n, nullptr);
  fabric_.ports.assign(n, nullptr);
  fabric_.routers.assign(n, nullptr);
  simulated_index_.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (!classes_.simulated(static_cast<int>(i))) continue;
    simulated_index_[i] = chips_.size();
    chips_.push_back(std::make_unique<Chip>(fmt::format("chip{}", i).c_str(), config, *programs[i], nullptr,
                                            &fabric_, static_cast<int>(i)));
  }
  for (size_t i = 0; i < n; ++i) {
    const auto rep = static_cast<size_t>(classes_.representative[i]);
    simulated_index_[i] = simulated_index_[rep];
    fabric_.hbms[i] = fabric_.hbms[rep];
    fabric_.ports[i] = fabric_.ports[rep];
    fabric_.routers[i] = fabric_.routers[rep];
    fabric_.semaphore_names[i] = &programs[i]->semaphores;
  }
}

// Where each representative's messages land: chip s of its class sends g_s(m) for each of its
// messages m, so the message to d stands for one to g_s(d) from every s, and those that reach a
// simulated chip land there.
void System::mirror(const std::vector<const Program*>& programs) {
  const int n = classes_.chips();
  if (static_cast<int>(chips_.size()) == n) return;
  std::vector<std::vector<int>> members(static_cast<size_t>(n));
  for (int s = 0; s < n; ++s)
    members[static_cast<size_t>(classes_.representative[static_cast<size_t>(s)])].push_back(s);
  for (int r : classes_.simulated_chips()) {
    std::set<int> destinations;
    for (const Stream& s : programs[static_cast<size_t>(r)]->streams) {
      if (s.engine.kind != EngineKind::ici) continue;
      for (const Instruction& i : s.instructions)
        if (const IciOp* op = std::get_if<IciOp>(&i.op))
          for (const IciCopy& c : op->copies) destinations.insert(c.to);
    }
    for (int d : destinations) {
      std::vector<IciFabric::Landing>& landings = fabric_.mirrored[{r, d}];
      for (int s : members[static_cast<size_t>(r)]) {
        const int at = classes_.image(s, d);
        if (!classes_.simulated(at)) continue;
        auto it = std::find_if(landings.begin(), landings.end(), [&](const auto& l) { return l.chip == at; });
        if (it == landings.end())
          landings.push_back({at, 1});
        else
          ++it->messages;
      }
    }
  }
}

const Chip& System::chip_of(int chip) const {
  return *chips_[simulated_index_.at(static_cast<size_t>(chip))];
}

}  // namespace systolic
