#include "sim/report/timeline.hpp"

#include "sim/report/run_index.hpp"

#include "models/common/clock.hpp"
#include "models/common/divide.hpp"
#include "models/mxu/dataflow.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <type_traits>
#include <utility>

namespace systolic {
namespace {

using timeline_detail::occupancy_of;
using timeline_detail::RunIndex;
using timeline_detail::stream_of;

using json = nlohmann::ordered_json;

// Operations that carry a DMA-style descriptor (models/isa/dma_descriptor.hpp), recognised by
// shape rather than by name so that this file compiles whichever operations exist.
struct Describe {
  const ChipConfig& config;
  const SimResult& result;

  json operator()(const MatmulOp& op) const {
    const Folds f = dataflow_of(config.mxu.dataflow).folds(config.mxu.shape(op.dtype), {op.m, op.k, op.n});
    const uint64_t w = dtype_storage_bytes(op.dtype, 1);  // an MXU type: whole bytes
    const uint64_t m = static_cast<uint64_t>(op.m), k = static_cast<uint64_t>(op.k),
                   n = static_cast<uint64_t>(op.n);
    return {{"op", "matmul"},
            {"shape", fmt::format("[{},{}]x[{},{}]", op.m, op.k, op.k, op.n)},
            {"m", op.m},
            {"k", op.k},
            {"n", op.n},
            {"n_offset", op.n_offset},
            {"dtype", std::string(kDTypeNames.name(op.dtype))},
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

  json operator()(const VpuOp& op) const {
    const VpuTraffic t = vpu_traffic(op);
    return {{"op", "vector"},
            {"kind", std::string(kVectorKindNames.name(op.kind))},
            {"shape", fmt::format("[{},{}]", op.rows, op.cols)},
            {"rows", op.rows},
            {"cols", op.cols},
            {"dtype", std::string(kDTypeNames.name(op.dtype))},
            {"vreg_ops", vpu_vreg_ops(config.vpu, op.kind, static_cast<uint64_t>(op.rows), static_cast<uint64_t>(op.cols))},
            {"bytes_read", t.bytes_read},
            {"bytes_written", t.bytes_written},
            {"bytes", t.bytes_read + t.bytes_written}};
  }

  json operator()(const IciOp& op) const {
    json messages = json::array();
    for (const IciCopy& c : op.copies) {
      json m = {{"to_chip", c.to}, {"bytes", c.bytes}, {"recv_sem", c.recv_sem}};
      if (c.via_hbm) m["src_hbm"] = c.src_addr, m["dst_hbm"] = c.dst_addr;
      messages.push_back(std::move(m));
    }
    return {{"op", "send"}, {"messages", std::move(messages)}, {"bytes", op.bytes()}};
  }

  json operator()(const DmaOp& op) const {
    const auto& d = op.descriptor;
    return {{"op", "dma"},
            {"src", space(d.src.space)},
            {"dst", space(d.dst.space)},
            {"shape", json::array({d.shape[0], d.shape[1], d.shape[2]})},
            {"element_bytes", d.element_bytes},
            {"src_base", d.src.base},
            {"dst_base", d.dst.base},
            {"bytes", d.total_bytes()}};
  }

  std::string space(int id) const {
    if (id < 0) return "hbm";
    if (static_cast<size_t>(id) < result.scratchpads.size())
      return result.scratchpads[static_cast<size_t>(id)].name;
    return fmt::format("sram{}", id);
  }
};

std::string sem_name(const Program& program, int sem) {
  if (sem >= 0 && static_cast<size_t>(sem) < program.semaphores.size())
    return program.semaphores[static_cast<size_t>(sem)];
  return fmt::format("sem{}", sem);
}

}  // namespace

json describe_operation(const Operation& op, const ChipConfig& config, const SimResult& result) {
  return std::visit(Describe{config, result}, op);
}

namespace {

// The slices, stalls and dependency arrows of one chip's engines, one track per engine.
class EngineTracks {
 public:
  EngineTracks(const ChipConfig& config, const Program& program, const SimResult& result, const RunIndex& index,
               TimelineSink& events)
      : program_(program), result_(result), index_(index), describe_{config, result}, events_(events) {}

  void add_all() {
    for (size_t e = 0; e < result_.engines.size(); ++e) add_engine(e);
  }

 private:
  static constexpr int kPid = 0;

  void add_engine(size_t e) {
    const EngineResult& engine = result_.engines[e];
    const int tid = static_cast<int>(e) + 1;
    events_.event({{"ph", "M"}, {"name", "thread_name"}, {"pid", kPid}, {"tid", tid},
                       {"args", {{"name", engine.name}}}});
    events_.event({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", kPid}, {"tid", tid},
                       {"args", {{"sort_index", tid}}}});
    const Stream* stream = stream_of(program_, engine.id);
    if (!stream) return;
    for (const InstrRecord& rec : engine.records)
      add_instruction(e, stream->instructions[static_cast<size_t>(rec.index)], rec);
  }

  std::string layer_name(const InstrRecord& rec) const {
    if (rec.layer >= 0 && static_cast<size_t>(rec.layer) < program_.layers.size())
      return program_.layers[static_cast<size_t>(rec.layer)].name;
    return "";
  }

  // What the slice shows when clicked: the operation, its timing, semaphores and buffer.
  json instruction_args(const Instruction& instr, const InstrRecord& rec, const std::string& layer) const {
    json args = std::visit(describe_, instr.op);
    args["instruction"] = rec.index;
    args["layer"] = layer;
    args["ready_cycle"] = rec.ready;
    args["start_cycle"] = rec.start;
    args["end_cycle"] = rec.end;
    args["cycles"] = rec.end - rec.start;
    args["stalled_cycles"] = rec.start - rec.ready;
    json waits = json::array();
    for (const auto& w : instr.waits) waits.push_back(fmt::format("{} >= {}", sem_name(program_, w.sem), w.at_least));
    json sigs = json::array();
    for (int s : instr.signals) sigs.push_back(sem_name(program_, s));
    args["waits"] = std::move(waits);
    args["signals"] = std::move(sigs);
    if (const auto* dma = std::get_if<DmaOp>(&instr.op)) {
      // The scratchpad buffer (a ping or pong copy) it fills or drains.
      const DmaEndpoint& side = dma->descriptor.dst.space >= 0 ? dma->descriptor.dst : dma->descriptor.src;
      for (const Buffer& b : program_.buffers)
        if (side.space >= 0 && b.space == side.space && side.base >= b.offset && side.base < b.offset + b.bytes)
          args["buffer"] = b.name;
    }
    return args;
  }

  void add_instruction(size_t e, const Instruction& instr, const InstrRecord& rec) {
    const int tid = static_cast<int>(e) + 1;
    const std::string layer = layer_name(rec);
    json args = instruction_args(instr, rec, layer);
    const std::string op = args["op"].get<std::string>();
    if (rec.start > rec.ready) add_stall(e, instr, rec, layer, args["waits"]);
    events_.event({{"ph", "X"}, {"cat", op}, {"name", layer.empty() ? op : layer},
                       {"pid", kPid}, {"tid", tid}, {"ts", rec.start}, {"dur", rec.end - rec.start},
                       {"args", std::move(args)}});
  }

  // The stall, and an arrow from the instruction whose signal ended it.
  void add_stall(size_t e, const Instruction& instr, const InstrRecord& rec, const std::string& layer,
                 const json& waits) {
    const int tid = static_cast<int>(e) + 1;
    std::string names;
    const RunIndex::Signal* release = nullptr;
    for (const auto& w : instr.waits) {
      names += (names.empty() ? "" : ", ") + sem_name(program_, w.sem);
      // Every signal, per semaphore, in the order it happened: the n-th one raised it to n.
      auto it = index_.signals.find(w.sem);
      if (w.at_least == 0 || it == index_.signals.end() || it->second.size() < w.at_least) continue;
      const RunIndex::Signal& s = it->second[w.at_least - 1];
      if (!release || s.cycle > release->cycle) release = &s;
    }
    events_.event({{"ph", "X"}, {"cat", "stall"}, {"name", "wait " + names},
                       {"pid", kPid}, {"tid", tid}, {"ts", rec.ready},
                       {"dur", rec.start - rec.ready},
                       {"args", {{"instruction", rec.index}, {"layer", layer},
                                 {"waits", waits}, {"stalled_cycles", rec.start - rec.ready}}}});
    if (!release || release->engine == e) return;
    const InstrRecord& src = result_.engines[release->engine].records[release->record];
    const uint64_t id = ++flow_id_;
    const uint64_t at = src.end > src.start ? src.end - 1 : src.start;  // inside the slice
    events_.event({{"ph", "s"}, {"cat", "dependency"}, {"name", "semaphore"}, {"id", id},
                       {"pid", kPid}, {"tid", static_cast<int>(release->engine) + 1}, {"ts", at}});
    events_.event({{"ph", "f"}, {"bp", "e"}, {"cat", "dependency"}, {"name", "semaphore"},
                       {"id", id}, {"pid", kPid}, {"tid", tid}, {"ts", rec.start}});
  }

  const Program& program_;
  const SimResult& result_;
  const RunIndex& index_;
  const Describe describe_;
  TimelineSink& events_;
  uint64_t flow_id_ = 0;
};

// How many engines of a kind are busy, when a chip has several of that kind.
void add_busy_engine_counters(const SimResult& result, std::vector<TimelineCounter>& all) {
  std::map<std::string, std::vector<const EngineResult*>> kinds;
  for (const auto& engine : result.engines) {
    std::string kind = engine.name;
    while (!kind.empty() && kind.back() >= '0' && kind.back() <= '9') kind.pop_back();
    kinds[kind].push_back(&engine);
  }
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
}

// HBM bandwidth as the HBM model saw it: bytes completed per window of 1000 cycles, a point
// where the value changes (a counter holds its value until the next point), so an idle
// stretch is one point however long it lasts.
void add_hbm_bandwidth_counter(const ChipConfig& config, const SimResult& result, std::vector<TimelineCounter>& all) {
  const WindowSeries& series = result.hbm.bytes_per_window;
  if (series.empty()) return;
  TimelineCounter c{"hbm bandwidth (GB/s)", {}};
  const uint64_t cycles = HbmStats::kWindowPs / kTicksPerCycle;
  const double seconds = static_cast<double>(cycles) / (config.clock_mhz * 1e6);
  const auto point = [&](uint64_t window, double gbps) {
    if (c.points.empty() || c.points.back().second != gbps) c.points.emplace_back(window * cycles, gbps);
  };
  uint64_t next = 0;  // the window after the last one that completed bytes
  for (const auto& [window, bytes] : series.windows()) {
    if (window > next) point(next, 0.0);  // the idle windows before this one
    point(window, static_cast<double>(bytes) / seconds / 1e9);
    next = window + 1;
  }
  c.points.emplace_back(std::min<uint64_t>(next * cycles, result.total_cycles), 0.0);
  all.push_back(std::move(c));
}

// HBM channels: the share of each channel's data buses (its pseudo-channels) in use, in
// windows of whole HbmStats windows, at most kMaxChannelPoints per channel.
void add_hbm_channel_counters(const ChipConfig& config, const SimResult& result, std::vector<TimelineCounter>& all) {
  const auto& channel_windows = result.hbm.channel_busy_per_window;
  uint64_t longest = 0;
  for (const WindowSeries& w : channel_windows) longest = std::max(longest, w.end());
  if (longest == 0) return;
  constexpr uint64_t kMaxChannelPoints = 2000;
  const uint64_t group = ceil_div(longest, kMaxChannelPoints);
  const uint64_t cycles = group * (HbmStats::kWindowPs / kTicksPerCycle);
  for (size_t ch = 0; ch < channel_windows.size(); ++ch) {
    TimelineCounter c{fmt::format("hbm ch{} busy (%)", ch), {}};
    const std::vector<WindowSeries::Window>& w = channel_windows[ch].windows();
    auto window = w.begin();
    uint64_t end = 0;
    for (uint64_t g = 0; g * group < longest && g * cycles < result.total_cycles; ++g) {
      const uint64_t start = g * cycles;
      end = std::min(start + cycles, result.total_cycles);  // the last window ends with the run
      uint64_t ps = 0;
      for (; window != w.end() && window->first < (g + 1) * group; ++window) ps += window->second;
      const double bus_ps = static_cast<double>((end - start) * kTicksPerCycle) * config.hbm.pseudo_channels;
      const double value = 100.0 * static_cast<double>(ps) / bus_ps;
      if (c.points.empty() || c.points.back().second != value) c.points.emplace_back(start, value);
    }
    c.points.emplace_back(end, 0.0);
    all.push_back(std::move(c));
  }
}

json other_data(const ChipConfig& config, const SimResult& result, const std::vector<SramOccupancy>& sram) {
  json other = {{"generator", fmt::format("systolic {}", SYSTOLIC_VERSION)},
                {"chip", config.name},
                {"clock_mhz", config.clock_mhz},
                {"time_unit", "1 trace us = 1 cycle"},
                {"total_cycles", result.total_cycles}};
  if (!sram.empty()) {
    json capacity = json::object();
    for (const auto& o : sram) capacity[o.scratchpad] = o.capacity_bytes;
    other["sram_capacity_bytes"] = std::move(capacity);
  }
  return other;
}

}  // namespace

json stream_timeline(const ChipConfig& config, const Program& program, const SimResult& result, TimelineSink& sink,
                     const std::vector<TimelineCounter>& counters) {
  sink.event({{"ph", "M"}, {"name", "process_name"}, {"pid", 0},
              {"args", {{"name", fmt::format("{} (time axis: 1 us = 1 cycle)", config.name)}}}});
  sink.event({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", 0}, {"args", {{"sort_index", 0}}}});
  const RunIndex index(program, result);
  EngineTracks(config, program, result, index, sink).add_all();

  std::vector<TimelineCounter> all = counters;
  add_busy_engine_counters(result, all);
  add_hbm_bandwidth_counter(config, result, all);
  add_hbm_channel_counters(config, result, all);
  // SRAM occupancy per scratchpad, in bytes (see sram_residency for the rule).
  const std::vector<SramOccupancy> sram = occupancy_of(config, program, result, index);
  for (const auto& o : sram) {
    TimelineCounter c{fmt::format("sram {} (bytes)", o.scratchpad), {}};
    for (const auto& [cycle, bytes] : o.points) c.points.emplace_back(cycle, static_cast<double>(bytes));
    all.push_back(std::move(c));
  }
  for (const auto& c : all)
    for (const auto& [cycle, value] : c.points)
      sink.event({{"ph", "C"}, {"name", c.name}, {"pid", 0}, {"ts", cycle}, {"args", {{"value", value}}}});
  return other_data(config, result, sram);
}

json make_timeline(const ChipConfig& config, const Program& program, const SimResult& result,
                   const std::vector<TimelineCounter>& counters) {
  CollectingSink sink;
  json other = stream_timeline(config, program, result, sink, counters);
  json out;
  out["traceEvents"] = std::move(sink.events);
  out["otherData"] = std::move(other);
  return out;
}

}  // namespace systolic
