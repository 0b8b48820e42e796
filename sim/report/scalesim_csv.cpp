#include "sim/report/scalesim_csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "models/common/error.hpp"
#include "models/mxu/dataflow.hpp"

namespace systolic {

using json = nlohmann::ordered_json;

namespace {

// A float as Python's str() writes it (SCALE-Sim formats with str()): shortest round trip,
// and a whole number keeps its ".0".
std::string py_float(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // "n": nan, inf
  return s;
}

double per_cycle(uint64_t bytes, uint64_t cycles) {
  return static_cast<double>(bytes) / static_cast<double>(std::max<uint64_t>(cycles, 1));
}

// SCALE-Sim's Mapping Efficiency: the share of the array's PEs a fold maps the GEMM onto,
// averaged over the folds (compute/systolic_compute_*.py, mapping_efficiency_per_fold). Every
// fold covers fold_rows x C cells, so the average is (rows dim x cols dim) / (cells x folds).
double spatial_mapping_efficiency(const ChipConfig& config, const json& l) {
  const auto dtype = kDTypeNames.parse(l["dtype"].get<std::string>());
  const Dataflow& d = dataflow_of(config.mxu.dataflow);
  const ArrayShape a = config.mxu.shape(dtype.value_or(DType::int8));
  const MatmulShape s{l["m"].get<int64_t>(), l["k"].get<int64_t>(), l["n"].get<int64_t>()};
  const Folds f = d.folds(a, s);
  const double cells =
      static_cast<double>(d.fold_rows(a)) * static_cast<double>(a.cols) * static_cast<double>(f.total());
  return cells > 0 ? static_cast<double>(dim_of(s, d.mapping().rows)) *
                         static_cast<double>(dim_of(s, d.mapping().cols)) / cells
                   : 0.0;
}

std::string compute_row(const ChipConfig& config, const json& l) {
  return fmt::format("{}, {}, {}, {}, {}", l["cycles"].get<uint64_t>(),
                     l["mxu_stalled_cycles"].get<uint64_t>(), py_float(100 * l["utilization"].get<double>()),
                     py_float(100 * spatial_mapping_efficiency(config, l)),
                     py_float(100 * l["mapping_efficiency"].get<double>()));
}

// Operand `o` of a layer, and the count SCALE-Sim reports for it: reads of ifmap and filter,
// writes of ofmap.
struct Access {
  uint64_t sram_bytes, sram_cycles, hbm_bytes, hbm_cycles;
  int64_t sram_start, hbm_start;
};
Access access(const json& l, const char* o) {
  const json& x = l["operands"][o];
  const bool out = std::string(o) == "c";
  return {x[out ? "sram_bytes_written" : "sram_bytes_read"].get<uint64_t>(),
          x["sram_cycles"].get<uint64_t>(),
          x[out ? "hbm_bytes_written" : "hbm_bytes_read"].get<uint64_t>(),
          x["hbm_cycles"].get<uint64_t>(),
          x["sram_start_cycle"].get<int64_t>(),
          x["hbm_start_cycle"].get<int64_t>()};
}

// SRAM bandwidth over the layer's cycles; DRAM bandwidth over the cycles its transfers spanned
// (SCALE-Sim: reads / (stop - start + 1); transfers that took no time, with ideal memory, count
// one cycle as there).
std::string bandwidth_row(const ChipConfig&, const json& l) {
  const uint64_t cycles = l["cycles"].get<uint64_t>();
  std::string sram, dram;
  for (const char* o : {"a", "b", "c"}) {
    const Access x = access(l, o);
    sram += py_float(per_cycle(x.sram_bytes, cycles)) + ", ";
    dram += py_float(per_cycle(x.hbm_bytes, x.hbm_cycles)) + (o[0] == 'c' ? "" : ", ");
  }
  return sram + dram;
}

// Start and stop (inclusive, SCALE-Sim's) cycles from the layer's start, and the count.
std::string detail_row(const ChipConfig&, const json& l) {
  const auto interval = [](int64_t start, uint64_t cycles, uint64_t bytes) {
    return fmt::format("{}, {}, {}", start, start + static_cast<int64_t>(std::max<uint64_t>(cycles, 1)) - 1,
                       bytes);
  };
  std::string sram, dram;
  for (const char* o : {"a", "b", "c"}) {
    const Access x = access(l, o);
    sram += interval(x.sram_start, x.sram_cycles, x.sram_bytes) + ", ";
    dram += interval(x.hbm_start, x.hbm_cycles, x.hbm_bytes) + (o[0] == 'c' ? "" : ", ");
  }
  return sram + dram;
}

using RowWriter = std::function<std::string(const ChipConfig&, const json&)>;
std::string table(const ChipConfig& config, const json& layers, const std::string& header,
                  const RowWriter& row) {
  std::string out = header + ",\n";
  int id = 0;
  for (const auto& l : layers) {
    if (l["kind"] != "matmul") continue;  // SCALE-Sim's layers are all GEMMs
    out += fmt::format("{}, {},\n", id++, row(config, l));
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> scalesim_reports(const ChipConfig& config,
                                                                  const json& report) {
  const auto& chips = report["chips"];
  if (chips.size() != 1)
    throw InputError(fmt::format(
        "--scalesim-reports: SCALE-Sim's reports describe one array; this run has {} chips", chips.size()));
  const json& layers = chips[0]["layers"];
  return {
      {"COMPUTE_REPORT.csv",
       table(config, layers,
             "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %",
             compute_row)},
      {"BANDWIDTH_REPORT.csv", table(config, layers,
                                     "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, "
                                     "Avg IFMAP DRAM BW, Avg FILTER DRAM BW, Avg OFMAP DRAM BW",
                                     bandwidth_row)},
      {"DETAILED_ACCESS_REPORT.csv",
       table(config, layers,
             "LayerID, "
             "SRAM IFMAP Start Cycle, SRAM IFMAP Stop Cycle, SRAM IFMAP Reads, "
             "SRAM Filter Start Cycle, SRAM Filter Stop Cycle, SRAM Filter Reads, "
             "SRAM OFMAP Start Cycle, SRAM OFMAP Stop Cycle, SRAM OFMAP Writes, "
             "DRAM IFMAP Start Cycle, DRAM IFMAP Stop Cycle, DRAM IFMAP Reads, "
             "DRAM Filter Start Cycle, DRAM Filter Stop Cycle, DRAM Filter Reads, "
             "DRAM OFMAP Start Cycle, DRAM OFMAP Stop Cycle, DRAM OFMAP Writes",
             detail_row)},
  };
}

}  // namespace systolic
