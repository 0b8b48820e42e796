#include "sim/report/layer_graph.hpp"

#include <algorithm>
#include <limits>
#include <tuple>

namespace systolic {

namespace {

// A completed signal: when, by which engine (its place in the result) and instruction, for
// which layer.
struct Signal {
  uint64_t end = 0;
  size_t engine = 0;
  int index = 0;
  int layer = -1;
  bool operator<(const Signal& o) const {
    return std::tie(end, engine, index) < std::tie(o.end, o.engine, o.index);
  }
};

const Stream* stream_of(const Program& program, EngineId id) {
  for (const auto& s : program.streams)
    if (s.engine == id) return &s;
  return nullptr;
}

// Every semaphore's signals in the order they completed.
std::vector<std::vector<Signal>> signals_by_semaphore(const Program& program, const SimResult& result) {
  std::vector<std::vector<Signal>> signals(program.semaphores.size());
  for (size_t e = 0; e < result.engines.size(); ++e) {
    const Stream* stream = stream_of(program, result.engines[e].id);
    for (const auto& rec : result.engines[e].records)
      for (int s : stream->instructions[static_cast<size_t>(rec.index)].signals)
        signals[static_cast<size_t>(s)].push_back({rec.end, e, rec.index, rec.layer});
  }
  for (auto& list : signals) std::sort(list.begin(), list.end());
  return signals;
}

}  // namespace

std::vector<int> remote_signallers(const std::vector<SharedProgram>& programs, size_t chip) {
  const Program& own = *programs[chip];
  std::vector<int> layer_of(own.semaphores.size(), -1);
  for (size_t other = 0; other < programs.size(); ++other) {
    if (other == chip) continue;
    for (const auto& stream : programs[other]->streams)
      for (const auto& instr : stream.instructions)
        if (const auto* ici = std::get_if<IciOp>(&instr.op))
          for (const auto& copy : ici->copies) {
            if (copy.to != static_cast<int>(chip)) continue;
            const auto it = std::find(own.semaphores.begin(), own.semaphores.end(), copy.recv_sem);
            if (it != own.semaphores.end())
              layer_of[static_cast<size_t>(it - own.semaphores.begin())] = instr.layer;
          }
  }
  return layer_of;
}

std::vector<LayerNode> layer_graph(const Program& program, const SimResult& result,
                                   const std::vector<int>& remote) {
  const auto signals = signals_by_semaphore(program, result);
  const uint64_t never = std::numeric_limits<uint64_t>::max();
  std::vector<LayerNode> nodes(program.layers.size());
  std::vector<uint64_t> first(program.layers.size(), never), first_compute(program.layers.size(), never);
  for (const auto& engine : result.engines) {
    const Stream* stream = stream_of(program, engine.id);
    for (const auto& rec : engine.records) {
      if (rec.layer < 0) continue;
      const auto l = static_cast<size_t>(rec.layer);
      LayerNode& node = nodes[l];
      first[l] = std::min(first[l], rec.start);
      node.end = std::max(node.end, rec.end);
      const Instruction& instr = stream->instructions[static_cast<size_t>(rec.index)];
      if (const auto* dma = std::get_if<DmaOp>(&instr.op))
        node.hbm_bytes +=
            dma->descriptor.total_bytes() * (dma->descriptor.src.is_hbm() + dma->descriptor.dst.is_hbm());
      else
        first_compute[l] = std::min(first_compute[l], rec.start);
      for (const SemWait& w : instr.waits) {
        const auto& list = signals[static_cast<size_t>(w.sem)];
        if (w.at_least == 0) continue;
        const int parent = w.at_least <= list.size()                    ? list[w.at_least - 1].layer
                           : static_cast<size_t>(w.sem) < remote.size() ? remote[static_cast<size_t>(w.sem)]
                                                                        : -1;
        if (parent >= 0 && parent != rec.layer) node.parents.push_back(parent);
      }
    }
  }
  std::vector<LayerNode> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (first[i] == never) continue;
    LayerNode& n = nodes[i];
    n.layer = static_cast<int>(i);
    n.start = layer_span_start(first[i], first_compute[i], i == 0 ? 0 : nodes[i - 1].end);
    std::sort(n.parents.begin(), n.parents.end());
    n.parents.erase(std::unique(n.parents.begin(), n.parents.end()), n.parents.end());
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace systolic
