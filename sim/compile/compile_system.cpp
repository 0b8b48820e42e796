// compile_system: one program per chip of a system, at the cost of the distinct work.
//
// The tiled lowering reads the chip only where it lowers a collective (CollectiveTarget::chip,
// and the chips of the collective's group): everything else of compile(config, w, c) is the same
// for every chip c. So the chips whose workloads are equal but for which chips
// (Workload::equal_but_chips: the data-parallel replicas and tensor-parallel ranks of a mesh
// too) are compiled once, by the first of them (the leader), and each collective the leader
// emits is lowered again, right there and with the same input, for each other chip, from that
// chip's own entry (OtherChips). That chip's program is then the leader's with its own
// collective instructions: its ICI stream (only collectives write one) and its VPU additions in
// the places the leader's took. A collective decomposed beside its matmul
// (sim/compile/overlap.hpp) is lowered again the same way: its steps' messages are the ICI
// stream's, and a reduce-scatter's additions, which the leader's compile moved between the
// matmul's row blocks, go run by run where the leader's went (the matmul itself does not depend
// on the chip). Where a chip's lowering does not line up with the leader's (another overlap
// plan, other semaphores, another layer entry, another count of additions, another result for
// the entries after it to wait for), the rest of the compile could differ, and that chip is
// compiled whole. A workload without collectives gives every chip the leader's program itself.
//
// Memory: chips with equal programs share one object, and a stream equal to the leader's (all
// the MXU and DMA streams of a sharded transformer) shares its list (InstructionList). The
// instruction budget counts each distinct workload (operator==) once, as it did before chips
// alike but for which chips shared a compile: --max-instructions refuses what it refused.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/compile/collective.hpp"
#include "sim/compile/compile.hpp"
#include "sim/compile/detail.hpp"
#include "sim/compile/overlap.hpp"

namespace systolic {
namespace {

using compile_detail::LoweredCollective;
using compile_detail::Producer;

bool same(const Producer& a, const Producer& b) {
  return a.sem == b.sem && a.base == b.base && a.per_instance == b.per_instance &&
         a.instances == b.instances && a.also == b.also && a.chunks == b.chunks;
}

Stream& stream(Program& p, EngineKind kind) {
  for (Stream& s : p.streams)
    if (s.engine.kind == kind) return s;
  p.streams.push_back({{kind, 0}, {}});
  return p.streams.back();
}

const InstructionList& instructions(const Program& p, EngineKind kind) {
  static const InstructionList none;
  for (const Stream& s : p.streams)
    if (s.engine.kind == kind) return s.instructions;
  return none;
}

using Runs = std::vector<std::pair<size_t, size_t>>;  // [begin, end) of a VPU stream, in order

// Lowers each collective the leader emits again for each of `chips` (their workloads equal the
// leader's but for which chips: Workload::equal_but_chips), from that chip's own entry, into a
// program of that chip's own (its collective instructions, its semaphore names and layer
// entries at the leader's indices), and keeps where the leader's and each chip's VPU additions
// sit.
class OtherChips final : public compile_detail::CollectiveObserver {
 public:
  OtherChips(const ChipConfig& config, const Workload& leader, const std::vector<Workload>& workloads,
             const std::vector<int>& chips)
      : config_(config), leader_(leader) {
    for (int c : chips) chips_.emplace_back(c, workloads[static_cast<size_t>(c)]);
  }

  void lowered(const LoweredCollective& c) override {
    leader_adds_.insert(leader_adds_.end(), c.adds.begin(), c.adds.end());
    for (Chip& chip : chips_)
      if (chip.ok) lower(chip, c);
  }

  // Chip chips[i]'s program, or nullopt where it must be compiled whole.
  std::vector<std::optional<Program>> programs(const Program& leader) const {
    std::vector<std::optional<Program>> out;
    for (const Chip& chip : chips_) out.push_back(chip.ok ? splice(leader, chip) : std::optional<Program>());
    return out;
  }

 private:
  struct Chip {
    Chip(int chip, const Workload& workload) : id(chip), work(&workload) {}
    int id;
    const Workload* work;  // its own: its collectives' groups are its own
    Program own;  // its collectives' instructions; layers and semaphores at the leader's indices
    bool ok = true;  // every collective lined up with the leader's
    Runs adds;       // its additions in `own`, one run per run of the leader's (leader_adds_)
    std::map<std::string, std::pair<int, uint64_t>> channels;  // its permute channels so far
  };

  // The collective for `chip`, decomposed where the leader's is. Its additions come out in one
  // run; they are cut as the leader's are, which puts a decomposed reduce-scatter's steps where
  // compiling the chip whole interleaves them (as many a step on every chip that lines up).
  void lower(Chip& chip, const LoweredCollective& c) {
    Program& p = chip.own;
    p.layers.resize(c.layers_before);
    p.semaphores.resize(c.semaphores_before);
    size_t at = stream(p, EngineKind::vpu).instructions.size();
    const auto declare = [&p](const std::string& name) {
      p.semaphores.push_back(name);
      return static_cast<int>(p.semaphores.size()) - 1;
    };
    compile_detail::CollectiveTarget target{p, config_, chip.id, declare, c.hbm_base, &chip.channels};
    const auto index = static_cast<size_t>(&c.work - leader_.collectives.data());
    const Producer done =
        compile_detail::emit_collective(target, chip.work->collectives[index], c.input, c.decomposed);
    for (const auto& [begin, end] : c.adds) {
      chip.adds.emplace_back(at, at + (end - begin));
      at += end - begin;
    }
    chip.ok = same(done, c.done) && p.layers.size() == c.program.layers.size() &&
              p.layers.back() == c.program.layers.back() &&
              p.semaphores.size() == c.program.semaphores.size() &&
              std::equal(p.semaphores.begin() + static_cast<std::ptrdiff_t>(c.semaphores_before),
                         p.semaphores.end(),
                         c.program.semaphores.begin() + static_cast<std::ptrdiff_t>(c.semaphores_before)) &&
              at == stream(p, EngineKind::vpu).instructions.size();
  }

  // The leader's program with the chip's ICI stream and, in place of each run of the leader's
  // additions, the chip's.
  Program splice(const Program& leader, const Chip& chip) const {
    Program out = leader;
    const InstructionList& lead_vpu = instructions(leader, EngineKind::vpu);
    const InstructionList& own_vpu = instructions(chip.own, EngineKind::vpu);
    std::vector<Instruction> vpu;
    vpu.reserve(lead_vpu.size());
    size_t at = 0;
    for (size_t k = 0; k < leader_adds_.size(); ++k) {
      const auto [begin, end] = leader_adds_[k];
      vpu.insert(vpu.end(), lead_vpu.begin() + static_cast<std::ptrdiff_t>(at),
                 lead_vpu.begin() + static_cast<std::ptrdiff_t>(begin));
      vpu.insert(vpu.end(), own_vpu.begin() + static_cast<std::ptrdiff_t>(chip.adds[k].first),
                 own_vpu.begin() + static_cast<std::ptrdiff_t>(chip.adds[k].second));
      at = end;
    }
    vpu.insert(vpu.end(), lead_vpu.begin() + static_cast<std::ptrdiff_t>(at), lead_vpu.end());
    stream(out, EngineKind::vpu).instructions = std::move(vpu);
    stream(out, EngineKind::ici).instructions = instructions(chip.own, EngineKind::ici);
    return out;
  }

  const ChipConfig& config_;
  const Workload& leader_;
  std::vector<Chip> chips_;
  Runs leader_adds_;  // every run of the leader's additions, in stream order
};

// Which collectives the compiler decomposes on this chip (sim/compile/overlap.hpp): the other
// chips of a leader's workload reuse its lowering only where their plans are the leader's.
std::vector<bool> decomposed(const ChipConfig& config, const Workload& w, int chip) {
  std::vector<bool> out;
  for (const auto& plan : compile_detail::plan_overlap(config, w, chip)) out.push_back(plan.decomposed);
  return out;
}

// The first chip whose workload equals chip i's but for which chips (Workload::equal_but_chips):
// `i` itself when none before it does.
int first_alike(const std::vector<Workload>& workloads, size_t i) {
  size_t j = 0;
  while (j < i && !workloads[j].equal_but_chips(workloads[i])) ++j;
  return static_cast<int>(j);
}

// Whether no chip before i has a workload equal to chip i's (the budget counts those): equal
// workloads are alike, so only the chips from its leader on with that leader can be.
bool first_equal(const std::vector<Workload>& workloads, const std::vector<int>& leader, size_t i) {
  for (auto j = static_cast<size_t>(leader[i]); j < i; ++j)
    if (leader[j] == leader[i] && workloads[j] == workloads[i]) return false;
  return true;
}

// Makes each stream of `p` share its list with the same engine's equal stream of `like` (the
// leader's program), and returns `like` itself when all of `p` equals it.
SharedProgram share(Program p, const SharedProgram& like) {
  if (!like) return std::make_shared<const Program>(std::move(p));
  bool all = like->streams.size() == p.streams.size();
  for (size_t s = 0; s < p.streams.size(); ++s) {
    const bool equal = s < like->streams.size() && like->streams[s].engine == p.streams[s].engine &&
                       like->streams[s].instructions == p.streams[s].instructions;
    if (equal) p.streams[s].instructions = like->streams[s].instructions;
    all = all && equal;
  }
  if (all && p.layers == like->layers && p.buffers == like->buffers && p.semaphores == like->semaphores &&
      p.regions == like->regions)
    return like;
  return std::make_shared<const Program>(std::move(p));
}

}  // namespace

std::vector<SharedProgram> compile_system(const ChipConfig& config, const std::vector<Workload>& workloads,
                                          const Budget& budget) {
  uint64_t total = 0;  // instructions of the distinct workloads, before any chip is compiled
  std::vector<int> leader(workloads.size());
  for (size_t i = 0; i < workloads.size(); ++i) {
    leader[i] = first_alike(workloads, i);
    if (!first_equal(workloads, leader, i)) continue;
    const uint64_t one = estimate_instructions(config, workloads[i]);
    total = __builtin_add_overflow(total, one, &total) ? UINT64_MAX : total;
  }
  if (!workloads.empty())
    check_instructions(total, budget, fmt::format("{} on {} chips", workloads[0].path, workloads.size()));
  std::vector<SharedProgram> programs(workloads.size());
  for (size_t i = 0; i < workloads.size(); ++i) {
    if (leader[i] != static_cast<int>(i)) continue;
    std::vector<int> others;
    const std::vector<bool> leader_plan = decomposed(config, workloads[i], static_cast<int>(i));
    for (size_t j = i + 1; j < workloads.size(); ++j)
      if (leader[j] == static_cast<int>(i)) {
        if (decomposed(config, workloads[j], static_cast<int>(j)) == leader_plan)
          others.push_back(static_cast<int>(j));
        else
          leader[j] = static_cast<int>(j);  // its own leader: compiled whole below
      }
    OtherChips fanout(config, workloads[i], workloads,
                      workloads[i].collectives.empty() ? std::vector<int>{} : others);
    programs[i] = std::make_shared<const Program>(
        compile_detail::compile_checked(config, workloads[i], static_cast<int>(i), budget, &fanout));
    std::vector<std::optional<Program>> spliced = fanout.programs(*programs[i]);
    for (size_t k = 0; k < others.size(); ++k) {
      const auto j = static_cast<size_t>(others[k]);
      if (workloads[j].collectives.empty())
        programs[j] = programs[i];
      else if (spliced[k])
        programs[j] = share(std::move(*spliced[k]), programs[i]);
      else
        programs[j] = share(compile(config, workloads[j], others[k], budget), programs[i]);
    }
  }
  return programs;
}

}  // namespace systolic
