#include "sim/report/run_index.hpp"

#include <algorithm>

namespace systolic::timeline_detail {

const Stream* stream_of(const Program& program, EngineId id) {
  for (const auto& s : program.streams)
    if (s.engine == id) return &s;
  return nullptr;
}

RunIndex::RunIndex(const Program& program, const SimResult& result) {
  streams.resize(result.engines.size());
  reached.resize(result.engines.size());
  for (size_t e = 0; e < result.engines.size(); ++e) {
    streams[e] = stream_of(program, result.engines[e].id);
    reached[e].resize(result.engines[e].records.size());
    if (!streams[e]) continue;
    for (size_t i = 0; i < result.engines[e].records.size(); ++i) {
      const InstrRecord& rec = result.engines[e].records[i];
      const Instruction& instr = instruction(e, rec);
      for (int s : instr.signals) signals[s].push_back({rec.end, e, i});
      for (const auto& w : instr.waits) waiters[{w.sem, w.at_least}].push_back({e, i});
    }
  }
  // The n-th signal of a semaphore (in time) raised it to n.
  for (auto& [sem, list] : signals) {
    std::stable_sort(list.begin(), list.end(),
                     [](const Signal& a, const Signal& b) { return a.cycle < b.cycle; });
    for (size_t n = 0; n < list.size(); ++n)
      reached[list[n].engine][list[n].record].push_back({sem, n + 1});
  }
}

}  // namespace systolic::timeline_detail
