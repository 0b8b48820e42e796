#include "sim/report/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include "models/common/clock.hpp"
#include "models/common/error.hpp"
#include "models/mxu/dataflow.hpp"
#include "sim/common/add_members.hpp"
#include "sim/common/output_files.hpp"
#include "sim/compile/capacity.hpp"
#include "sim/compile/detail.hpp"
#include "sim/report/detail.hpp"
#include "sim/report/energy.hpp"
#include "sim/report/layer_graph.hpp"
#include "sim/report/operands.hpp"

namespace systolic {

using json = nlohmann::ordered_json;
using report_detail::MemoryCounts;
using report_detail::RunSums;

namespace {

double ratio(double num, double den) { return den > 0 ? num / den : 0.0; }

struct LayerTimes {
  uint64_t first_start = std::numeric_limits<uint64_t>::max();
  uint64_t first_compute = std::numeric_limits<uint64_t>::max();  // its first non-DMA instruction
  uint64_t last_end = 0;
  uint64_t busy = 0;      // summed over MXUs
  uint64_t stalled = 0;   // MXUs waiting for their operands, summed
  uint64_t vpu_busy = 0;
  uint64_t macs_issued = 0;
  uint64_t hbm_read = 0, hbm_written = 0;
  std::map<std::string, uint64_t> engine_busy;  // per engine, to find the busiest of each kind
  report_detail::OperandAccesses operands;      // A, B, C: SRAM and HBM bytes and their spans
  uint64_t busiest(EngineKind kind) const {
    uint64_t m = 0;
    for (const auto& [name, b] : engine_busy)
      if (name.rfind(engine_name(kind, 0).substr(0, 3), 0) == 0) m = std::max(m, b);
    return m;
  }
};

// Where a layer's cycles start (layer_span_start: prefetched loads are hidden, not its time).
uint64_t span_start(const std::vector<LayerTimes>& times, size_t i) {
  return layer_span_start(times[i].first_start, times[i].first_compute, i == 0 ? 0 : times[i - 1].last_end);
}

// Per layer, from the records of every engine.
std::vector<LayerTimes> layer_times(const ChipConfig& config, const Program& program,
                                    const SimResult& result) {
  std::vector<LayerTimes> times(program.layers.size());
  for (const auto& e : result.engines) {
    const Stream* stream = nullptr;
    for (const auto& s : program.streams)
      if (s.engine == e.id) stream = &s;
    for (const auto& rec : e.records) {
      if (rec.layer < 0) continue;
      auto& t = times[static_cast<size_t>(rec.layer)];
      t.first_start = std::min(t.first_start, rec.start);
      t.last_end = std::max(t.last_end, rec.end);
      t.engine_busy[e.name] += rec.end - rec.start;
      const Operation& op = stream->instructions[rec.index].op;
      if (!std::holds_alternative<DmaOp>(op)) t.first_compute = std::min(t.first_compute, rec.start);
      if (const auto* mm = std::get_if<MatmulOp>(&op)) {
        t.macs_issued += static_cast<uint64_t>(mm->m) * mm->k * mm->n;
        t.busy += rec.end - rec.start;
        t.stalled += rec.start - rec.ready;
        report_detail::count_matmul(config, *mm, rec.start, rec.end, t.operands);
      } else if (std::holds_alternative<VpuOp>(op)) {
        t.vpu_busy += rec.end - rec.start;
      } else if (const auto* dma = std::get_if<DmaOp>(&op)) {
        if (dma->descriptor.src.is_hbm()) t.hbm_read += dma->descriptor.total_bytes();
        if (dma->descriptor.dst.is_hbm()) t.hbm_written += dma->descriptor.total_bytes();
        report_detail::count_dma(dma->descriptor, rec.start, rec.end, t.operands);
      }
    }
  }
  return times;
}

// One row per op: the entries of one op in every layer (a transformer runs layer by layer,
// sim/workload/transformer/model_reader.cpp) merge into the row of their name and shape, their spans summed.
struct Row {
  LayerInfo info;
  LayerTimes t;
  uint64_t cycles = 0;
  report_detail::OperandRows operands;
};

std::vector<Row> merge_rows(const Program& program, const std::vector<LayerTimes>& times) {
  std::vector<Row> rows;
  std::map<std::string, size_t> row_of;
  for (size_t i = 0; i < program.layers.size(); ++i) {
    const LayerInfo& l = program.layers[i];
    const LayerTimes& t = times[i];
    const uint64_t span = t.last_end > t.first_start ? t.last_end - span_start(times, i) : 0;
    const std::string key =
        fmt::format("{}\n{}\n{}x{}x{}\n{}", l.name, kLayerKindNames.name(l.kind), l.m, l.k, l.n, kDTypeNames.name(l.dtype));
    const auto [it, added] = row_of.emplace(key, rows.size());
    if (added) rows.push_back({l, t, 0, {}});
    Row& r = rows[it->second];
    report_detail::add_instance(r.operands, t.operands, span_start(times, i));
    if (added) {
      r.cycles = span;
      continue;
    }
    r.info.repeat += l.repeat;
    r.info.useful_macs += l.useful_macs;
    r.cycles += span;
    add_members(r.t, t, &LayerTimes::busy, &LayerTimes::stalled, &LayerTimes::vpu_busy,
                &LayerTimes::macs_issued, &LayerTimes::hbm_read, &LayerTimes::hbm_written);
    for (const auto& [engine, b] : t.engine_busy) r.t.engine_busy[engine] += b;
  }
  return rows;
}

json layer_json(const ChipConfig& config, const Row& row) {
  const LayerInfo& l = row.info;
  // One MXU's and all MXUs' MACs a cycle at the peak of the layer's compute type.
  const double pes = static_cast<double>(config.mxu.rows * config.mxu.cols) * config.mxu.rate_of(l.dtype).per_cycle();
  const double peak = config.mxu.peak_macs_per_cycle(l.dtype);
  const LayerTimes& t = row.t;
  const Folds f = dataflow_of(config.mxu.dataflow).folds(config.mxu.shape(l.dtype), {l.m, l.k, l.n});
  json j = {{"name", l.name},
            {"kind", kLayerKindNames.name(l.kind)},
            {"m", l.m},
            {"k", l.k},
            {"n", l.n},
            {"dtype", kDTypeNames.name(l.dtype)},
            {"repeat", l.repeat},
            {"row_folds", f.row_folds},
            {"col_folds", f.col_folds},
            {"folds", f.total()},
            {"cycles", row.cycles},
            {"macs", l.useful_macs},
            {"macs_issued", t.macs_issued},
            {"mxu_busy_cycles", t.busy},
            {"mxu_stalled_cycles", t.stalled},
            {"vpu_busy_cycles", t.vpu_busy},
            {"utilization", ratio(l.useful_macs, peak * row.cycles)},
            {"mapping_efficiency", ratio(t.macs_issued, pes * t.busy)}};
  report_detail::add_memory_fields(j, config, 1, {t.hbm_read, t.hbm_written, row.cycles, t.busiest(EngineKind::mxu),
                                   t.busiest(EngineKind::dma)});
  j["operands"] = report_detail::operands_json(row.operands);
  return j;
}

// Appends each engine's row to `engines` and its counts to `sums`.
json engines_json(const SimResult& result, RunSums& sums) {
  json engines = json::array();
  for (const auto& e : result.engines) {
    engines.push_back({{"name", e.name},
                       {"instructions", e.records.size()},
                       {"busy_cycles", e.busy_cycles},
                       {"stalled_cycles", e.stalled_cycles},
                       {"idle_cycles", e.idle_cycles}});
    if (e.id.kind == EngineKind::dma) {
      engines.back()["bytes"] = e.dma.bytes;
      sums.busiest_dma = std::max(sums.busiest_dma, e.busy_cycles);
      sums.hbm_read += e.dma.hbm_bytes_read;
      sums.hbm_written += e.dma.hbm_bytes_written;
    } else {
      sums.busiest_compute = std::max(sums.busiest_compute, e.busy_cycles);
    }
  }
  return engines;
}

json memory_json(const ChipConfig& config, const Workload& workload, const Program& program,
                 const SimResult& result) {
  json memory = json::object();
  memory["hbm"] = {{"bytes_read", result.hbm.bytes_read},
                   {"bytes_written", result.hbm.bytes_written},
                   {"peak_gbps", config.hbm.peak_gb_per_second()},
                   {"row_hits", result.hbm.row_hits},
                   {"row_misses", result.hbm.row_misses},
                   {"refreshes", result.hbm.refreshes}};
  // Each channel's data buses (its pseudo-channels, summed) busy, in cycles: how evenly the
  // address mapping spread the traffic.
  json channel_busy = json::array();
  for (uint64_t ps : result.hbm.channel_busy_ps) channel_busy.push_back(static_cast<double>(ps) / kTicksPerCycle);
  memory["hbm"]["channel_busy_cycles"] = std::move(channel_busy);
  // What the workload needs resident in HBM, as the tiled lowering lays it out (a compiled
  // trace: the highest address it touches), against the capacity. Runs that do not fit were
  // refused before they ran (sim/compile/capacity.hpp), so `fits` is true in every report.
  uint64_t footprint = 0;
  if (!workload.gemms.empty()) {
    const compile_detail::HbmFootprint f = compile_detail::hbm_footprint(config, workload);
    footprint = f.total();
    memory["hbm"]["footprint"] = {
        {"weights", f.weights}, {"kv_cache", f.kv_cache}, {"activations", f.activations}};
  } else {
    footprint = program_hbm_footprint(program);
  }
  memory["hbm"]["footprint_bytes"] = footprint;
  memory["hbm"]["capacity_bytes"] = config.hbm.capacity_bytes;
  memory["hbm"]["fits"] = footprint <= config.hbm.capacity_bytes;
  json pads = json::object();
  for (const auto& p : result.scratchpads)
    pads[p.name] = {{"bytes_read", p.bytes_read}, {"bytes_written", p.bytes_written}};
  memory["scratchpads"] = std::move(pads);
  return memory;
}

// Per op kind (matmul, attention, vector, collective) from the layers, and the DMA engines' share.
json op_kinds_json(const json& layers, const SimResult& result) {
  json kinds = json::object();
  for (const auto& l : layers) {
    json& k = kinds[l["kind"].get<std::string>()];
    if (k.is_null()) k = json::object();
    for (const char* f : {"macs", "mxu_busy_cycles", "vpu_busy_cycles", "hbm_bytes_read", "hbm_bytes_written"})
      k[f] = k.value(f, uint64_t{0}) + l[f].get<uint64_t>();
    k["layers"] = k.value("layers", 0) + 1;
  }
  uint64_t dma_busy_total = 0, dma_bytes_total = 0;
  for (const auto& e : result.engines)
    if (e.id.kind == EngineKind::dma) dma_busy_total += e.busy_cycles, dma_bytes_total += e.dma.bytes;
  kinds["dma"] = {{"dma_busy_cycles", dma_busy_total}, {"bytes", dma_bytes_total}};
  return kinds;
}

// PE-cycles of the run in which no PE computed: all PE-cycles less those the issued MACs took at
// their types' rates (a PE packing two int8 products a cycle is busy half a cycle per MAC).
uint64_t idle_pe_cycles(const ChipConfig& config, uint64_t cycles, const std::array<uint64_t, kMxuDTypes>& issued) {
  const auto all = static_cast<unsigned __int128>(config.mxu.rows * config.mxu.cols * config.mxu.count) * cycles;
  unsigned __int128 busy = 0;
  for (size_t t = 0; t < issued.size(); ++t) {
    const MacRate r = config.mxu.rate[t];
    busy += (static_cast<unsigned __int128>(issued[t]) * static_cast<uint64_t>(r.cycles) + static_cast<uint64_t>(r.products) - 1) /
            static_cast<uint64_t>(r.products);
  }
  // A run faster than its compute peak is a bug in the timing model, never a negative count.
  if (busy > all) throw std::logic_error("MXUs issued more MACs than their peak allows in the run's cycles");
  return static_cast<uint64_t>(all - busy);
}

// Energy from what the blocks counted: the MXUs' MACs and operand traffic, the DMA engines'
// bytes, the scratchpads' and the HBM's own counters (DMA traffic = total - MXU traffic).
json chip_energy(const ChipConfig& config, const SimResult& result, double seconds) {
  EnergyCounts counts;
  counts.seconds = seconds;
  for (const auto& e : result.engines) {
    for (size_t t = 0; t < counts.macs.size(); ++t) counts.macs[t] += e.macs_by_dtype[t];
    for (size_t p = 0; p < 3; ++p) {
      counts.mxu_sram_read[p] += e.sram_read[p];
      counts.mxu_sram_write[p] += e.sram_written[p];
    }
    counts.dma_bytes += e.dma.bytes;
    counts.vpu_ops += e.vpu.vreg_ops * static_cast<uint64_t>(config.vpu.lanes * config.vpu.sublanes);
    if (!config.memory.ideal) {  // with ideal memory the VPU's operands do not touch vmem
      counts.vpu_sram_read[kVmem] += e.vpu.bytes_read;
      counts.vpu_sram_write[kVmem] += e.vpu.bytes_written;
      counts.vpu_sram_read[kWeights] += e.vpu.weights_bytes_read;
      counts.vpu_sram_write[kWeights] += e.vpu.weights_bytes_written;
    }
  }
  for (size_t p = 0; p < result.scratchpads.size() && p < 3; ++p) {
    counts.dma_sram_read[p] = result.scratchpads[p].bytes_read - counts.mxu_sram_read[p] - counts.vpu_sram_read[p];
    counts.dma_sram_write[p] = result.scratchpads[p].bytes_written - counts.mxu_sram_write[p] - counts.vpu_sram_write[p];
  }
  counts.hbm_read = result.hbm.bytes_read;
  counts.hbm_written = result.hbm.bytes_written;
  counts.ici_bytes = result.ici_link_bytes_out;
  counts.pe_idle_cycles = idle_pe_cycles(config, result.total_cycles, counts.macs);
  return energy_report(config, counts);
}

}  // namespace

namespace report_detail {

double pe_cycles(const ChipConfig& config, const std::array<uint64_t, kMxuDTypes>& macs) {
  double sum = 0;
  for (size_t t = 0; t < macs.size(); ++t)
    if (macs[t] > 0) sum += static_cast<double>(macs[t]) / config.mxu.rate[t].per_cycle();
  return sum;
}

void RunSums::add(const RunSums& o) {
  macs += o.macs;
  macs_issued += o.macs_issued;
  for (size_t t = 0; t < macs_by_type.size(); ++t) {
    macs_by_type[t] += o.macs_by_type[t];
    issued_by_type[t] += o.issued_by_type[t];
  }
  mxu_busy += o.mxu_busy;
  hbm_read += o.hbm_read;
  hbm_written += o.hbm_written;
  busiest_compute = std::max(busiest_compute, o.busiest_compute);
  busiest_dma = std::max(busiest_dma, o.busiest_dma);
}

void add_memory_fields(json& j, const ChipConfig& config, size_t chips, const MemoryCounts& c) {
  const double peak_bytes_per_cycle =
      config.hbm.peak_bytes_per_second() / (config.clock_mhz * 1e6) * static_cast<double>(chips);
  const double bytes_per_cycle = ratio(static_cast<double>(c.read + c.written), c.cycles);
  j["hbm_bytes_read"] = c.read;
  j["hbm_bytes_written"] = c.written;
  j["hbm_gbps"] = bytes_per_cycle * config.clock_mhz * 1e6 / 1e9;
  j["hbm_peak_share"] = ratio(bytes_per_cycle, peak_bytes_per_cycle);
  j["dma_busy_cycles"] = c.busiest_dma;
  // Whichever unit was busy longer set the pace: the busiest DMA engine or the busiest MXU.
  j["bound"] = c.busiest_dma > c.busiest_compute ? "memory" : "compute";
}

json totals_json(const ChipConfig& config, size_t chips, uint64_t cycles, const RunSums& s) {
  const double pes = static_cast<double>(config.mxu.rows * config.mxu.cols);
  const double all_pes = pes * static_cast<double>(config.mxu.count) * static_cast<double>(chips);
  // In PE-cycles, so that each type counts against its own peak (mxu.rate).
  json t = {{"cycles", cycles},
            {"seconds", static_cast<double>(cycles) / (config.clock_mhz * 1e6)},
            {"macs", s.macs},
            {"macs_issued", s.macs_issued},
            {"utilization", ratio(pe_cycles(config, s.macs_by_type), all_pes * cycles)},
            {"mapping_efficiency", ratio(pe_cycles(config, s.issued_by_type), pes * s.mxu_busy)}};
  add_memory_fields(t, config, chips, {s.hbm_read, s.hbm_written, cycles, s.busiest_compute, s.busiest_dma});
  return t;
}

ChipReport make_chip_report(const ChipConfig& config, const Workload& workload, const Program& program,
                            const SimResult& result) {
  ChipReport out;
  json layers = json::array();
  for (const Row& row : merge_rows(program, layer_times(config, program, result))) {
    out.sums.macs += row.info.useful_macs;
    out.sums.macs_issued += row.t.macs_issued;
    if (dtype_on_mxu(row.info.dtype)) {  // vector layers count no MACs
      out.sums.macs_by_type[static_cast<size_t>(row.info.dtype)] += row.info.useful_macs;
      out.sums.issued_by_type[static_cast<size_t>(row.info.dtype)] += row.t.macs_issued;
    }
    out.sums.mxu_busy += row.t.busy;
    layers.push_back(layer_json(config, row));
  }
  json engines = engines_json(result, out.sums);
  json kinds = op_kinds_json(layers, result);
  json& r = out.json;
  r["totals"] = totals_json(config, 1, result.total_cycles, out.sums);
  r["layers"] = std::move(layers);
  r["op_kinds"] = std::move(kinds);
  r["engines"] = std::move(engines);
  r["memory"] = memory_json(config, workload, program, result);
  r["energy_pj"] =
      chip_energy(config, result, r["totals"]["seconds"].get<double>());
  return out;
}

}  // namespace report_detail

const char* memory_timing(const ChipConfig& config) { return config.memory.ideal ? "ideal" : "real"; }

void write_file_atomically(const std::string& path, const std::string& text) {
  OutputSet out;  // an exclusive temporary beside `path`, renamed over it (sim/common/output_files.hpp)
  out.add(path, text);
  out.commit();
}

}  // namespace systolic
