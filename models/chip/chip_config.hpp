#pragma once
// The chip description: what every block of one chip is (MXUs, scratchpads, HBM, DMA, VPU,
// ICI, energy, area). A plain struct of resolved values; loading and validating it from YAML is
// sim/config/config.hpp's job, which names each key, its unit, range, default and source.
#include <cstdint>
#include <string>
#include <vector>

#include "models/area/area_config.hpp"
#include "models/chip/energy_config.hpp"
#include "models/common/dtype.hpp"
#include "models/common/names.hpp"
#include "models/dma/dma_core.hpp"
#include "models/hbm/hbm_config.hpp"
#include "models/ici/ici_config.hpp"
#include "models/mxu/mxu_timing.hpp"
#include "models/sram/scratchpad.hpp"
#include "models/vpu/vpu_core.hpp"

namespace systolic {

enum class MxuModel { exact, fast };
inline constexpr auto kMxuModelNames = name_table<MxuModel>({{MxuModel::exact, "exact"}, {MxuModel::fast, "fast"}});

struct MxuConfig {
  int64_t rows = 128;
  int64_t cols = 128;
  int64_t count = 1;
  MxuModel model = MxuModel::fast;
  Convention convention = Convention::tpu;
  DataflowKind dataflow = DataflowKind::ws;  // which operand the array holds (docs/mxu.md)
  DType dtype = DType::bf16;
  uint64_t seed = 1;  // operand values of the exact model (workloads carry shapes, not data)
  MacRates rate{};    // per compute type, default one product a cycle (docs/mxu.md "MAC rate")
  // The geometry alone (rate 1): for views of the grid.
  ArrayShape shape() const { return {rows, cols}; }
  // The array as a matmul computing in `compute` sees it: timing, folds, peak.
  ArrayShape shape(DType compute) const { return at_rate(shape(), rate, compute); }
  // A type's rate; a type the MXU never multiplies (int4, a vector layer's) counts no MACs: 1.
  MacRate rate_of(DType t) const { return dtype_on_mxu(t) ? rate[static_cast<size_t>(t)] : MacRate{}; }
  // All MXUs' MACs a cycle at the peak of `compute`.
  double peak_macs_per_cycle(DType compute) const {
    return static_cast<double>(rows * cols * count) * rate_of(compute).per_cycle();
  }
};

// How the compiler lays activations out in HBM (docs/memory.md, "Activation layout"): in
// tiles of a vector register (vpu.sublanes x vpu.lanes elements, each tile contiguous), as XLA
// lays arrays out on TPUs, or row by row.
enum class ActivationLayout { tiled, row_major };
inline constexpr auto kActivationLayoutNames = name_table<ActivationLayout>(
    {{ActivationLayout::tiled, "tiled"}, {ActivationLayout::row_major, "row_major"}});

struct MemoryConfig {
  // What-if: the same program (same tiles, same schedule) with HBM and DMA transfers taking no
  // time and their bytes still counted, so a run is a lower bound on the real memory system's.
  bool ideal = false;
  ActivationLayout activation_layout = ActivationLayout::tiled;
};

// The scratchpads every chip has; ids are the DmaEndpoint spaces the compiler uses.
enum ScratchpadId : int { kVmem = 0, kWeights = 1, kAccumulators = 2, kScratchpadCount = 3 };

struct SramConfig {
  ScratchpadConfig vmem{"vmem", 16ull << 20, 32, 1024, 2};
  ScratchpadConfig weights{"weights", 4ull << 20, 16, 1024, 2};
  ScratchpadConfig accumulators{"accumulators", 4ull << 20, 16, 2048, 2};
  std::vector<ScratchpadConfig> all() const { return {vmem, weights, accumulators}; }
};

struct DmaSettings {
  DmaConfig engine;           // engines, request size, outstanding requests, quantum
  bool double_buffer = true;  // ping/pong tiles so loads overlap compute
};

struct ChipConfig {
  std::string name = "unnamed";
  double clock_mhz = 1000.0;
  MxuConfig mxu;
  MemoryConfig memory;
  std::string hbm_preset = "hbm2";  // the preset hbm.* started from ("custom": none)
  HbmConfig hbm = hbm2_tpu_v4i();
  SramConfig sram;
  DmaSettings dma;
  EnergyConfig energy;
  AreaConfig area;  // process node and per-unit areas (docs/area.md)
  VpuConfig vpu;
  IciConfig ici;  // topology none: a single chip

  std::string source;  // file it came from, for messages; not part of the schema
};

}  // namespace systolic
