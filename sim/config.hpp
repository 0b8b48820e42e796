#pragma once
// Chip configuration: the resolved, validated values every block reads. Files and
// `--set key=value` overrides go through one schema (config_schema.cpp), which names each
// key, its kind, unit, range and default; docs/config.md is generated from that schema.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/common/names.hpp"
#include "models/common/dtype.hpp"
#include "models/dma/dma_core.hpp"
#include "models/hbm/hbm_config.hpp"
#include "models/ici/ici_config.hpp"
#include "models/mxu/mxu_timing.hpp"
#include "models/sram/scratchpad.hpp"
#include "models/vpu/vpu_core.hpp"
#include "sim/energy.hpp"

namespace systolic {

enum class MxuModel { exact, fast };
inline constexpr auto kMxuModelNames = name_table<MxuModel>({{MxuModel::exact, "exact"}, {MxuModel::fast, "fast"}});

struct MxuConfig {
  int64_t rows = 128;
  int64_t cols = 128;
  int64_t count = 1;
  MxuModel model = MxuModel::fast;
  Convention convention = Convention::tpu;
  DType dtype = DType::bf16;
  uint64_t seed = 1;  // operand values of the exact model (workloads carry shapes, not data)
  ArrayShape shape() const { return {rows, cols}; }
};

struct MemoryConfig {
  // What-if: the same program (same tiles, same schedule) with HBM and DMA transfers taking no
  // time and their bytes still counted, so a run is a lower bound on the real memory system's.
  bool ideal = false;
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
  VpuConfig vpu;
  IciConfig ici;  // topology none: a single chip

  std::string source;  // file it came from, for messages; not part of the schema
};

// Reads `path`, applies `overrides` ("key=value", YAML scalar syntax) and validates.
// Throws InputError: "<file>: key 'mxu.rows': expected an integer in [1, 65536], got 'x'".
ChipConfig load_config(const std::string& path, const std::vector<std::string>& overrides = {});

// Applies overrides to an already loaded config (same validation as load_config).
void apply_overrides(ChipConfig& config, const std::vector<std::string>& overrides);

// Every schema key with its resolved value, nested by the dots in its name.
nlohmann::ordered_json config_to_json(const ChipConfig& config);

// A markdown table of every key (name, kind, unit, default, meaning) for docs/config.md.
std::string config_reference_markdown();

}  // namespace systolic
