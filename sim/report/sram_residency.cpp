// SRAM residency and occupancy, derived from the program and the run records (the rule is in
// timeline.hpp, above SramResidency).
#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "sim/report/run_index.hpp"
#include "sim/report/timeline.hpp"

namespace systolic {
namespace timeline_detail {
namespace {

// The byte ranges [begin, end) one side of a descriptor touches, merged, with `element_bytes`
// per element.
std::vector<std::pair<uint64_t, uint64_t>> byte_ranges(DmaDescriptor d, const DmaEndpoint& side,
                                                       uint64_t element_bytes) {
  d.element_bytes = element_bytes;
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (RunCursor c(d, side); !c.done(); c.advance()) {
    const DmaRun run = c.current();
    if (!out.empty() && out.back().second == run.address) out.back().second += run.bytes;
    else out.emplace_back(run.address, run.address + run.bytes);
  }
  if (!std::is_sorted(out.begin(), out.end())) std::sort(out.begin(), out.end());  // usually is
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  for (const auto& r : out) {
    if (!merged.empty() && r.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, r.second);
    else
      merged.push_back(r);
  }
  return merged;
}

// The scratchpads' accumulators are 32-bit (int32 or fp32), whatever the operands' format.
constexpr uint64_t kAccumulatorBytes = 4;

bool touches_scratchpad(const Program& program) {
  for (const auto& s : program.streams)
    for (const auto& instr : s.instructions)
      if (const auto* dma = std::get_if<DmaOp>(&instr.op))
        if (dma->descriptor.src.space >= 0 || dma->descriptor.dst.space >= 0) return true;
  return false;
}

// Calls visit(engine, record index, record, instruction) for every record of a stream in the
// program.
template <class Visit>
void for_each_record(const RunIndex& index, const SimResult& result, Visit&& visit) {
  for (size_t e = 0; e < result.engines.size(); ++e) {
    if (!index.streams[e]) continue;
    for (size_t i = 0; i < result.engines[e].records.size(); ++i) {
      const InstrRecord& rec = result.engines[e].records[i];
      visit(e, i, rec, index.instruction(e, rec));
    }
  }
}

// The thresholds at which drains from the accumulators wait, per semaphore, sorted, unique.
std::map<int, std::vector<uint64_t>> drain_waits_of(const RunIndex& index, const SimResult& result) {
  std::map<int, std::vector<uint64_t>> drain_waits;
  for_each_record(index, result, [&](size_t, size_t, const InstrRecord&, const Instruction& instr) {
    const auto* dma = std::get_if<DmaOp>(&instr.op);
    if (!dma || dma->descriptor.src.space != kAccumulators) return;
    for (const auto& w : instr.waits) drain_waits[w.sem].push_back(w.at_least);
  });
  for (auto& [sem, list] : drain_waits) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  return drain_waits;
}

// (semaphore, a drain's threshold) -> the earliest start of a matmul writing the drain's tile.
using TileStarts = std::map<std::pair<int, uint64_t>, uint64_t>;

// Accumulation groups: on each MXU, the matmuls up to one whose signal a drain waits for
// write that drain's tile.
TileStarts tile_starts(const RunIndex& index, const SimResult& result) {
  const std::map<int, std::vector<uint64_t>> drain_waits = drain_waits_of(index, result);
  TileStarts tile_start;
  for (size_t e = 0; e < result.engines.size(); ++e) {
    if (!index.streams[e] || result.engines[e].id.kind != EngineKind::mxu) continue;
    constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
    uint64_t group = kNone;  // start of the group's first matmul
    for (size_t i = 0; i < result.engines[e].records.size(); ++i) {
      const InstrRecord& rec = result.engines[e].records[i];
      if (!std::holds_alternative<MatmulOp>(index.instruction(e, rec).op)) continue;
      if (group == kNone) group = rec.start;
      bool ends = false;
      for (const auto& [sem, count] : index.reached[e][i]) {
        const auto it = drain_waits.find(sem);
        if (it == drain_waits.end()) continue;
        const auto x = std::lower_bound(it->second.begin(), it->second.end(), count);
        if (x == it->second.end()) continue;
        auto [at, fresh] = tile_start.emplace(std::make_pair(sem, *x), group);
        if (!fresh) at->second = std::min(at->second, group);
        ends = true;
      }
      if (ends) group = kNone;
    }
  }
  return tile_start;
}

// An on-chip intermediate: from the start of the writer that filled it to this reader's end.
void add_intermediate(const Program& program, const RunIndex& index, const SimResult& result, size_t e, size_t i,
                      const InstrRecord& rec, const Instruction& instr, std::vector<SramResidency>& out) {
  const SramRegion* f = &program.regions.at(static_cast<size_t>(instr.frees));
  uint64_t from = rec.start;
  for (const auto& w : instr.waits) {
    const auto it = index.signals.find(w.sem);
    if (w.sem != f->full_sem || w.at_least == 0 || it == index.signals.end() || w.at_least > it->second.size())
      continue;
    const RunIndex::Signal& writer = it->second[w.at_least - 1];
    from = std::min(from, result.engines[writer.engine].records[writer.record].start);
  }
  SramResidency r{f->space, from, rec.end, {{f->offset, f->offset + f->bytes}}, e, i};
  if (r.to > r.from && f->bytes > 0) out.push_back(std::move(r));
}

// A load: resident from its end until its last consumer has finished.
void add_load(const RunIndex& index, const SimResult& result, size_t e, size_t i, const InstrRecord& rec,
              const DmaDescriptor& d, std::vector<SramResidency>& out) {
  SramResidency r{d.dst.space, rec.end, result.total_cycles,
                  byte_ranges(d, d.dst, d.element_bytes), e, i};
  bool consumed = false;
  uint64_t last = rec.end;
  for (const auto& [sem, count] : index.reached[e][i]) {
    const auto it = index.waiters.find({sem, count});
    if (it == index.waiters.end()) continue;
    for (const auto& [we, wi] : it->second) {
      last = std::max(last, result.engines[we].records[wi].end);
      consumed = true;
    }
  }
  if (consumed) r.to = last;
  if (r.to > r.from && !r.ranges.empty()) out.push_back(std::move(r));
}

// A drain: the tile it stores, from the first matmul writing it to the drain's end.
void add_drain(const TileStarts& tile_start, size_t e, size_t i, const InstrRecord& rec, const Instruction& instr,
               const DmaDescriptor& d, std::vector<SramResidency>& out) {
  uint64_t from = rec.start;
  for (const auto& w : instr.waits)
    if (const auto it = tile_start.find({w.sem, w.at_least}); it != tile_start.end())
      from = std::min(from, it->second);
  SramResidency r{kAccumulators, from, rec.end, byte_ranges(d, d.src, kAccumulatorBytes), e, i};
  if (r.to > r.from && !r.ranges.empty()) out.push_back(std::move(r));
}

std::vector<SramResidency> residency_of(const Program& program, const RunIndex& index, const SimResult& result) {
  const TileStarts tile_start = tile_starts(index, result);
  std::vector<SramResidency> out;
  for_each_record(index, result, [&](size_t e, size_t i, const InstrRecord& rec, const Instruction& instr) {
    if (instr.frees >= 0) add_intermediate(program, index, result, e, i, rec, instr, out);
    const auto* dma = std::get_if<DmaOp>(&instr.op);
    if (!dma) return;
    const DmaDescriptor& d = dma->descriptor;
    if (d.dst.space >= 0) add_load(index, result, e, i, rec, d, out);
    if (d.src.space == kAccumulators) add_drain(tile_start, e, i, rec, instr, d, out);
  });
  return out;
}

}  // namespace

std::vector<SramOccupancy> occupancy_of(const ChipConfig& config, const Program& program,
                                        const SimResult& result, const RunIndex& index) {
  std::vector<SramOccupancy> out;
  if (!touches_scratchpad(program)) return out;
  const std::vector<SramResidency> pieces = residency_of(program, index, result);
  const auto pads = config.sram.all();
  for (size_t id = 0; id < pads.size(); ++id) {
    SramOccupancy o;
    o.scratchpad = id < result.scratchpads.size() ? result.scratchpads[id].name : pads[id].name;
    o.capacity_bytes = pads[id].capacity_bytes;
    // +1 / -1 per piece at its ends; the value is the union of the live ranges.
    std::map<uint64_t, std::vector<std::pair<const SramResidency*, int>>> events;
    for (const auto& p : pieces)
      if (p.scratchpad == static_cast<int>(id)) {
        events[p.from].push_back({&p, +1});
        events[p.to].push_back({&p, -1});
      }
    std::map<std::pair<uint64_t, uint64_t>, int> live;
    o.points.emplace_back(0, 0);
    for (const auto& [cycle, list] : events) {
      for (const auto& [piece, delta] : list)
        for (const auto& range : piece->ranges)
          if ((live[range] += delta) == 0) live.erase(range);
      uint64_t bytes = 0, covered = 0;  // covered: end of the union so far
      for (const auto& [range, count] : live) {
        const uint64_t begin = std::max(range.first, covered);
        if (range.second > begin) bytes += range.second - begin;
        covered = std::max(covered, range.second);
      }
      if (bytes == o.points.back().second) continue;
      if (o.points.back().first == cycle) o.points.back().second = bytes;
      else o.points.emplace_back(cycle, bytes);
    }
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace timeline_detail

uint64_t SramResidency::bytes() const {
  uint64_t sum = 0;
  for (const auto& [begin, end] : ranges) sum += end - begin;
  return sum;
}

std::vector<SramResidency> sram_residency(const Program& program, const SimResult& result) {
  using namespace timeline_detail;
  return residency_of(program, RunIndex(program, result), result);
}

std::vector<SramOccupancy> sram_occupancy(const ChipConfig& config, const Program& program,
                                          const SimResult& result) {
  using namespace timeline_detail;
  return occupancy_of(config, program, result, RunIndex(program, result));
}

}  // namespace systolic
