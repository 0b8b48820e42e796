#include "sim/timeline.hpp"

#include "models/common/clock.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <type_traits>
#include <utility>

namespace systolic {
namespace {

using json = nlohmann::ordered_json;

// Operations that carry a DMA-style descriptor (models/dma/dma_descriptor.hpp), recognised by
// shape rather than by name so that this file compiles whichever operations exist.
template <class T, class = void>
struct HasDescriptor : std::false_type {};
template <class T>
struct HasDescriptor<T, std::void_t<decltype(std::declval<const T&>().descriptor.total_bytes()),
                                    decltype(std::declval<const T&>().descriptor.src.space)>>
    : std::true_type {};

struct Describe {
  const ChipConfig& config;
  const SimResult& result;

  json operator()(const MatmulOp& op) const {
    const Folds f = fold_count(config.mxu.shape(), {op.m, op.k, op.n});
    const uint64_t w = static_cast<uint64_t>(dtype_bytes(op.dtype));
    const uint64_t m = static_cast<uint64_t>(op.m), k = static_cast<uint64_t>(op.k),
                   n = static_cast<uint64_t>(op.n);
    return {{"op", "matmul"},
            {"shape", fmt::format("[{},{}]x[{},{}]", op.m, op.k, op.k, op.n)},
            {"m", op.m},
            {"k", op.k},
            {"n", op.n},
            {"n_offset", op.n_offset},
            {"dtype", std::string(dtype_name(op.dtype))},
            {"folds", f.total()},
            {"row_folds", f.row_folds},
            {"col_folds", f.col_folds},
            {"macs", m * k * n},
            // Operand bytes: activations and weights in the operand format, outputs as the
            // 32-bit accumulators they land in.
            {"bytes_activations", m * k * w},
            {"bytes_weights", k * n * w},
            {"bytes_outputs", m * n * 4},
            {"bytes", m * k * w + k * n * w + m * n * 4}};
  }

  template <class Op>
  json operator()(const Op& op) const {
    if constexpr (HasDescriptor<Op>::value) {
      const auto& d = op.descriptor;
      return {{"op", "dma"},
              {"src", space(d.src.space)},
              {"dst", space(d.dst.space)},
              {"shape", json::array({d.shape[0], d.shape[1], d.shape[2]})},
              {"element_bytes", d.element_bytes},
              {"src_base", d.src.base},
              {"dst_base", d.dst.base},
              {"bytes", d.total_bytes()}};
    } else {
      return {{"op", "instruction"}};
    }
  }

  std::string space(int id) const {
    if (id < 0) return "hbm";
    if (static_cast<size_t>(id) < result.scratchpads.size())
      return result.scratchpads[static_cast<size_t>(id)].name;
    return fmt::format("sram{}", id);
  }
};

const Stream* stream_of(const Program& program, EngineId id) {
  for (const auto& s : program.streams)
    if (s.engine == id) return &s;
  return nullptr;
}

std::string sem_name(const Program& program, int sem) {
  if (sem >= 0 && static_cast<size_t>(sem) < program.semaphores.size())
    return program.semaphores[static_cast<size_t>(sem)];
  return fmt::format("sem{}", sem);
}

}  // namespace

json describe_operation(const Operation& op, const ChipConfig& config, const SimResult& result) {
  return std::visit(Describe{config, result}, op);
}

json make_timeline(const ChipConfig& config, const Program& program, const SimResult& result,
                   const std::vector<TimelineCounter>& counters) {
  json events = json::array();
  const int pid = 0;
  events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid},
                    {"args", {{"name", fmt::format("{} (time axis: 1 us = 1 cycle)", config.name)}}}});
  events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid},
                    {"args", {{"sort_index", 0}}}});

  // Every signal, per semaphore, in the order it happened: the n-th one raised it to n.
  struct Signal {
    uint64_t cycle;
    size_t engine;
    size_t record;
  };
  std::map<int, std::vector<Signal>> signals;
  for (size_t e = 0; e < result.engines.size(); ++e) {
    const Stream* stream = stream_of(program, result.engines[e].id);
    if (!stream) continue;
    for (size_t i = 0; i < result.engines[e].records.size(); ++i) {
      const InstrRecord& rec = result.engines[e].records[i];
      for (int s : stream->instructions[static_cast<size_t>(rec.index)].signals)
        signals[s].push_back({rec.end, e, i});
    }
  }
  for (auto& [sem, list] : signals)
    std::stable_sort(list.begin(), list.end(),
                     [](const Signal& a, const Signal& b) { return a.cycle < b.cycle; });

  const Describe describe{config, result};
  uint64_t flow_id = 0;
  for (size_t e = 0; e < result.engines.size(); ++e) {
    const EngineResult& engine = result.engines[e];
    const int tid = static_cast<int>(e) + 1;
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", tid},
                      {"args", {{"name", engine.name}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", pid}, {"tid", tid},
                      {"args", {{"sort_index", tid}}}});
    const Stream* stream = stream_of(program, engine.id);
    if (!stream) continue;
    for (const InstrRecord& rec : engine.records) {
      const Instruction& instr = stream->instructions[static_cast<size_t>(rec.index)];
      json args = std::visit(describe, instr.op);
      const std::string op = args["op"].get<std::string>();
      std::string layer;
      if (rec.layer >= 0 && static_cast<size_t>(rec.layer) < program.layers.size())
        layer = program.layers[static_cast<size_t>(rec.layer)].name;
      args["instruction"] = rec.index;
      args["layer"] = layer;
      args["ready_cycle"] = rec.ready;
      args["start_cycle"] = rec.start;
      args["end_cycle"] = rec.end;
      args["cycles"] = rec.end - rec.start;
      args["stalled_cycles"] = rec.start - rec.ready;
      json waits = json::array();
      for (const auto& w : instr.waits)
        waits.push_back(fmt::format("{} >= {}", sem_name(program, w.sem), w.at_least));
      json sigs = json::array();
      for (int s : instr.signals) sigs.push_back(sem_name(program, s));
      args["waits"] = std::move(waits);
      args["signals"] = std::move(sigs);

      if (rec.start > rec.ready) {
        // The stall, and an arrow from the instruction whose signal ended it.
        std::string names;
        const Signal* release = nullptr;
        for (const auto& w : instr.waits) {
          names += (names.empty() ? "" : ", ") + sem_name(program, w.sem);
          auto it = signals.find(w.sem);
          if (w.at_least == 0 || it == signals.end() || it->second.size() < w.at_least) continue;
          const Signal& s = it->second[w.at_least - 1];
          if (!release || s.cycle > release->cycle) release = &s;
        }
        events.push_back({{"ph", "X"}, {"cat", "stall"}, {"name", "wait " + names},
                          {"pid", pid}, {"tid", tid}, {"ts", rec.ready},
                          {"dur", rec.start - rec.ready},
                          {"args", {{"instruction", rec.index}, {"layer", layer},
                                    {"waits", args["waits"]}, {"stalled_cycles", rec.start - rec.ready}}}});
        if (release && release->engine != e) {
          const InstrRecord& src = result.engines[release->engine].records[release->record];
          const uint64_t id = ++flow_id;
          const uint64_t at = src.end > src.start ? src.end - 1 : src.start;  // inside the slice
          events.push_back({{"ph", "s"}, {"cat", "dependency"}, {"name", "semaphore"}, {"id", id},
                            {"pid", pid}, {"tid", static_cast<int>(release->engine) + 1}, {"ts", at}});
          events.push_back({{"ph", "f"}, {"bp", "e"}, {"cat", "dependency"}, {"name", "semaphore"},
                            {"id", id}, {"pid", pid}, {"tid", tid}, {"ts", rec.start}});
        }
      }
      events.push_back({{"ph", "X"}, {"cat", op}, {"name", layer.empty() ? op : layer},
                        {"pid", pid}, {"tid", tid}, {"ts", rec.start}, {"dur", rec.end - rec.start},
                        {"args", std::move(args)}});
    }
  }

  // How many engines of a kind are busy, when a chip has several of that kind.
  std::map<std::string, std::vector<const EngineResult*>> kinds;
  for (const auto& engine : result.engines) {
    std::string kind = engine.name;
    while (!kind.empty() && kind.back() >= '0' && kind.back() <= '9') kind.pop_back();
    kinds[kind].push_back(&engine);
  }
  std::vector<TimelineCounter> all = counters;
  for (const auto& [kind, engines] : kinds) {
    const bool ran = std::any_of(engines.begin(), engines.end(),
                                 [](const EngineResult* e) { return !e->records.empty(); });
    if (engines.size() < 2 || !ran) continue;
    std::map<uint64_t, int64_t> delta;
    for (const EngineResult* engine : engines)
      for (const auto& rec : engine->records)
        if (rec.end > rec.start) {
          ++delta[rec.start];
          --delta[rec.end];
        }
    TimelineCounter c{fmt::format("busy {} engines", kind), {}};
    if (delta.empty() || delta.begin()->first > 0) c.points.emplace_back(0, 0.0);
    int64_t busy = 0;
    for (const auto& [cycle, d] : delta) {
      busy += d;
      if (c.points.empty() || c.points.back().second != static_cast<double>(busy))
        c.points.emplace_back(cycle, static_cast<double>(busy));
    }
    all.push_back(std::move(c));
  }
  // HBM bandwidth as the HBM model saw it: bytes completed per window of 1000 cycles.
  const auto& windows = result.hbm.bytes_per_window;
  if (!windows.empty()) {
    TimelineCounter c{"hbm bandwidth (GB/s)", {}};
    const uint64_t cycles = HbmStats::kWindowPs / kTicksPerCycle;
    const double seconds = static_cast<double>(cycles) / (config.clock_mhz * 1e6);
    for (size_t i = 0; i < windows.size(); ++i)
      c.points.emplace_back(i * cycles, static_cast<double>(windows[i]) / seconds / 1e9);
    c.points.emplace_back(std::min<uint64_t>(windows.size() * cycles, result.total_cycles), 0.0);
    all.push_back(std::move(c));
  }

  for (const auto& c : all)
    for (const auto& [cycle, value] : c.points)
      events.push_back({{"ph", "C"}, {"name", c.name}, {"pid", pid}, {"ts", cycle},
                        {"args", {{"value", value}}}});

  json out;
  out["traceEvents"] = std::move(events);
  out["otherData"] = {{"generator", fmt::format("systolic {}", SYSTOLIC_VERSION)},
                      {"chip", config.name},
                      {"clock_mhz", config.clock_mhz},
                      {"time_unit", "1 trace us = 1 cycle"},
                      {"total_cycles", result.total_cycles}};
  return out;
}

}  // namespace systolic
