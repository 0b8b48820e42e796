#include "sim/config/schema.hpp"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>
#include <utility>

#include "models/common/error.hpp"
#include "models/mxu/dataflow.hpp"
#include "sim/compile/collective_algorithm.hpp"
#include "sim/config/schema_area.hpp"
#include "sim/config/schema_energy.hpp"
#include "sim/config/schema_ici.hpp"
#include "sim/config/schema_memory.hpp"
#include "sim/config/values.hpp"

namespace systolic {
namespace {
// mxu.rate.<type> for each type the MXU multiplies.
std::vector<ConfigKey> rate_keys() {
  std::vector<ConfigKey> out;
  for (size_t t = 0; t < kMxuDTypes; ++t)
    out.push_back(config_values::mac_rate_key(
        fmt::format("mxu.rate.{}", kDTypeNames.name(static_cast<DType>(t))), [t](auto& c) -> auto& { return c.mxu.rate[t]; },
        fmt::format("Products each PE computes per cycle in {}: n > 1 packs n products of K into one PE "
                    "(the array's peak in this type is n x R x C MACs a cycle), 1/n takes n cycles a "
                    "product (docs/mxu.md, MAC rate).",
                    kDTypeNames.name(static_cast<DType>(t)))));
  return out;
}

// The registered dataflows (models/mxu/dataflow/*.cpp), in the (value, name) form choice_key takes.
std::vector<std::pair<DataflowKind, std::string>> registered_dataflows() {
  std::vector<std::pair<DataflowKind, std::string>> out;
  for (const Dataflow* d : dataflows()) out.emplace_back(d->kind(), std::string(d->name()));
  return out;
}
}  // namespace

const std::vector<ConfigKey>& config_schema() {
  using namespace config_values;
  static const std::vector<ConfigKey> keys = {
      string_key(CONFIG_KEY(name), "Preset name, shown in reports."),
      number_key(CONFIG_KEY(clock_mhz), 1.0, 100000.0, "MHz",
                 "Core clock; one MXU cycle. Converts cycles to seconds."),
      integer_key(CONFIG_KEY(mxu.rows), 1, 65536, "PEs",
                  "R: array rows; K maps onto them under mxu.dataflow ws and is, M under os."),
      integer_key(CONFIG_KEY(mxu.cols), 1, 65536, "PEs",
                  "C: array columns; N maps onto them under mxu.dataflow ws and os, M under is."),
      integer_key(CONFIG_KEY(mxu.count), 1, 1024, "",
                  "MXUs per chip; a GEMM's column folds are split between them."),
      enum_key(CONFIG_KEY(mxu.model), kMxuModelNames,
               "exact: PE grid stepped every cycle with real values; fast: closed form."),
      enum_key(CONFIG_KEY(mxu.convention), kConventionNames,
               "Cycle convention (docs/mxu.md): tpu overlaps weight loads, "
               "scalesim reproduces SCALE-Sim v2."),
      choice_key(CONFIG_KEY(mxu.dataflow), registered_dataflows(),
                 "Which operand stays in the array (docs/mxu.md): ws weights (K x N), "
                 "os outputs (M x N), is inputs (K x M); the others stream."),
      // The types the MXU multiplies: the first kMxuDTypes of the table (int4 is storage only).
      choice_key(CONFIG_KEY(mxu.dtype),
                 std::vector(kDTypeNames.entries().begin(), kDTypeNames.entries().begin() + kMxuDTypes),
                 "Operand type; int8 accumulates in int32, floats in fp32."),
      integer_key(CONFIG_KEY(mxu.seed), 0, std::numeric_limits<int64_t>::max(), "",
                  "Seed of the operand values the exact model computes on."),
      bool_key(CONFIG_KEY(memory.ideal),
               "false: DMA from HBM through the scratchpads, timed. true (what-if, a lower bound): "
               "the same program with HBM and DMA transfers taking no time, bytes still counted."),
      enum_key(
          CONFIG_KEY(memory.activation_layout), kActivationLayoutNames,
          "Activations in HBM (docs/memory.md): tiled in vector-register tiles (vpu.sublanes x "
          "vpu.lanes) where a tensor's blocks cover whole tiles, as XLA on TPUs; row_major: row by row."),
  };
  static const std::vector<ConfigKey> all = [] {
    std::vector<ConfigKey> v = keys;
    // The rates beside the other mxu.* keys, before the memory.* keys.
    const auto rates = rate_keys();
    v.insert(v.end() - 2, rates.begin(), rates.end());
    for (auto* part : {&hbm_keys, &sram_keys, &dma_keys, &vpu_keys, &energy_keys, &area_keys, &ici_keys}) {
      auto more = (*part)();
      v.insert(v.end(), more.begin(), more.end());
    }
    return v;
  }();
  return all;
}

namespace {
[[noreturn]] void reject(const std::string& prefix, const ConfigIssue& bad) {
  throw InputError(fmt::format("key '{}{}': expected {}, got {}", prefix, bad.field, bad.expected, bad.got));
}

// The collective algorithm can run on this interconnect; else the ones that can.
void check_algorithm(const IciConfig& ici) {
  const auto& algorithms = compile_detail::CollectiveRegistry::instance();
  const auto why = algorithms.get(ici.algorithm, "key 'ici.algorithm'").unsupported(ici);
  if (!why) return;
  std::string can;
  for (const auto& e : algorithms.entries())
    if (!e.impl->unsupported(ici)) can += (can.empty() ? "" : " or ") + e.name;
  throw InputError(fmt::format("key 'ici.algorithm': expected {} on {}, got {}", can, *why, ici.algorithm));
}
}  // namespace

void validate_config(const ChipConfig& config) {
  // The memory blocks know their own impossible combinations and name the key.
  if (auto bad = config.hbm.validate()) reject("hbm.", *bad);
  if (auto bad = config.dma.engine.validate()) reject("", *bad);
  if (auto bad = config.vpu.validate()) reject("", *bad);
  if (auto bad = config.ici.validate()) reject("ici.", *bad);
  check_algorithm(config.ici);
  if (config.dma.engine.request_bytes % config.hbm.burst_bytes() != 0)
    throw InputError(fmt::format("key 'dma.request_bytes': expected a multiple of the HBM burst ({} B), got {}",
                                 config.hbm.burst_bytes(), config.dma.engine.request_bytes));
  for (const auto& s : config.sram.all())
    if (auto bad = s.validate()) reject("", *bad);
  // The smallest tile the compiler can make is one fold: R x C weights, one row of R
  // activations, one row of C accumulators, twice when double-buffered; R is the K rows of a
  // fold, the array's rows times the products a PE packs (mxu.rate). (memory.ideal times the
  // same tiles, so this holds in both modes.)
  const uint64_t copies = config.dma.double_buffer ? 2 : 1;
  const uint64_t width = dtype_storage_bytes(config.mxu.dtype, 1);
  const uint64_t r = static_cast<uint64_t>(config.mxu.rows * config.mxu.rate_of(config.mxu.dtype).products),
                 c = static_cast<uint64_t>(config.mxu.cols);
  const std::pair<const ScratchpadConfig*, uint64_t> needs[] = {
      {&config.sram.weights, copies * r * c * width},
      {&config.sram.vmem, copies * r * width},
      {&config.sram.accumulators, copies * c * 4}};
  for (const auto& [pad, need] : needs)
    if (need > pad->capacity_bytes)
      throw InputError(fmt::format(
          "key '{}': {} is smaller than one tile of a {}x{} {} array ({} with dma.double_buffer={})",
          pad->key("bytes"), format_bytes(pad->capacity_bytes), r, c, kDTypeNames.name(config.mxu.dtype),
          format_bytes(need), config.dma.double_buffer));
}

}  // namespace systolic
