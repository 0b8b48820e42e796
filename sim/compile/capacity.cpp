#include "sim/compile/capacity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/common/error.hpp"
#include "models/sram/scratchpad.hpp"  // format_bytes
#include "sim/compile/detail.hpp"

namespace systolic {
namespace {

constexpr double kGB = 1e9;
constexpr uint64_t kGiB = uint64_t{1} << 30;

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Bits per element of the weights: the first matmul's B operand type (a transformer model has
// one weight type for all of them).
int weight_bits(const ChipConfig& config, const Workload& workload) {
  for (const Gemm& g : workload.gemms)
    if (g.kind == LayerKind::matmul) return dtype_bits(g.b_type(config.mxu.dtype));
  return 0;
}

// Tensor parallelism over N chips splits the weights and the KV cache N ways (the activations,
// an upper bound, stay): the smallest N for which that fits, or 0 when even the activations
// alone do not.
uint64_t chips_to_fit(const compile_detail::HbmFootprint& f, uint64_t capacity, int64_t tp) {
  if (f.activations >= capacity) return 0;
  const double shared = static_cast<double>(f.weights + f.kv_cache) * static_cast<double>(tp);
  return static_cast<uint64_t>(std::ceil(shared / static_cast<double>(capacity - f.activations)));
}

// --tp takes 1 or the system's chip count (sim/workload/transformer/shard.hpp): this config's chips
// when that is enough, else a system of at least the chips it needs.
std::string tp_hint(const ChipConfig& config, const compile_detail::HbmFootprint& f, int64_t tp) {
  if (tp == 0) return {};  // not a transformer model
  const uint64_t n = chips_to_fit(f, config.hbm.capacity_bytes, tp);
  if (n <= static_cast<uint64_t>(tp)) return {};
  const uint64_t chips = static_cast<uint64_t>(config.ici.chips());
  if (chips > 1 && n <= chips && static_cast<uint64_t>(tp) < chips)
    return fmt::format("shard it over this config's {} chips: --tp {} (the weights and KV cache split {} ways)",
                       chips, chips, chips);
  return fmt::format("shard it over {} or more chips: --tp {} on a system of that many (ici.topology, ici.dims; "
                     "the weights and KV cache split {} ways)", n, n, n);
}

std::vector<std::string> hints(const ChipConfig& config, const Workload& workload,
                               const compile_detail::HbmFootprint& f) {
  std::vector<std::string> out;
  if (std::string tp = tp_hint(config, f, workload.tp); !tp.empty()) out.push_back(std::move(tp));
  if (const int bits = weight_bits(config, workload); bits > 8 && f.weights > 0)
    out.push_back(fmt::format("int8 weights (weight_dtype: int8 or --weight-dtype int8; the weights would "
                              "take {:.2f} GB)",
                              static_cast<double>(f.weights) * 8 / bits / kGB));
  if (f.kv_cache > 0 && f.weights + f.activations < config.hbm.capacity_bytes)  // else no bucket fits
    out.push_back(fmt::format("a smaller bucket: fewer decode slots or prefill lanes, or a shorter length "
                              "(the KV cache takes {:.2f} GB)",
                              f.kv_cache / kGB));
  out.push_back(fmt::format("only as a what-if (a part that does not exist), a larger HBM: "
                            "--set \"hbm.capacity_bytes={} GiB\"",
                            ceil_div(f.total(), kGiB)));
  return out;
}

// 64-bit arithmetic that remembers whether any step overflowed.
struct Checked {
  bool overflow = false;
  uint64_t mul(uint64_t a, uint64_t b) {
    uint64_t r = 0;
    overflow |= __builtin_mul_overflow(a, b, &r);
    return r;
  }
  uint64_t add(uint64_t a, uint64_t b) {
    uint64_t r = 0;
    overflow |= __builtin_add_overflow(a, b, &r);
    return r;
  }
  uint64_t align(uint64_t a) {
    using compile_detail::kHbmAlign;
    return mul(add(a, kHbmAlign - 1) / kHbmAlign, kHbmAlign);
  }
};

// The layout (compile_detail::hbm_footprint) adds operand sizes in 64 bits. An upper bound of
// what it adds, each entry's A and C as transient regions (two of them) and every instance's
// B, must not overflow: such a workload cannot be laid out, nor fit any HBM.
void require_operand_bytes_in_range(const ChipConfig& config, const Workload& workload) {
  Checked c;
  uint64_t bound = 0;
  for (const Gemm& g : workload.gemms) {
    const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
    // The widest operand's bytes per element, rounded up: an upper bound for every operand.
    const uint64_t e = u((std::max({dtype_bits(g.a_type(config.mxu.dtype)), dtype_bits(g.b_type(config.mxu.dtype)),
                                    dtype_bits(g.dtype.value_or(config.mxu.dtype))}) + 7) / 8);
    const auto bytes = [&](int64_t rows, int64_t cols) { return c.align(c.mul(c.mul(u(rows), u(cols)), e)); };
    const uint64_t transient = std::max(bytes(g.m, g.k), bytes(g.m, g.n));
    const uint64_t b = c.mul(bytes(g.k, g.n), u(g.repeat));
    bound = c.add(bound, c.add(c.mul(transient, 2), b));
    if (c.overflow)
      throw InputError(fmt::format("{}: layer '{}': the bytes of its operands overflow 64 bits", g.source, g.name));
  }
}

}  // namespace

void require_hbm_fits(const ChipConfig& config, const Workload& workload, int chip, const std::string& where) {
  require_operand_bytes_in_range(config, workload);
  const compile_detail::HbmFootprint f = compile_detail::hbm_footprint(config, workload);
  const uint64_t capacity = config.hbm.capacity_bytes;
  if (f.total() <= capacity) return;
  std::string who = where;
  if (who.empty()) {
    who = fmt::format("{}: workload '{}'", workload.path.empty() ? workload.name : workload.path, workload.name);
    if (config.ici.chips() > 1)
      who += workload.tp > 0 ? fmt::format(" (chip {}'s share, --tp {})", chip, workload.tp)
                             : fmt::format(" (chip {})", chip);
  }
  std::string message = fmt::format(
      "{} needs {:.2f} GB ({} B) of HBM (weights {:.2f} GB, KV cache {:.2f} GB, activations {:.2f} GB) but "
      "hbm.capacity_bytes = {} ({}): it does not fit. To make it fit: ",
      who, f.total() / kGB, f.total(), f.weights / kGB, f.kv_cache / kGB, f.activations / kGB, format_bytes(capacity),
      config.source.empty() ? config.name : config.source);
  const std::vector<std::string> options = hints(config, workload, f);
  for (size_t i = 0; i < options.size(); ++i) message += (i ? "; " : "") + options[i];
  throw InputError(message);
}

HbmNeed hbm_need(const ChipConfig& config, const Workload& workload) {
  require_operand_bytes_in_range(config, workload);
  const compile_detail::HbmFootprint f = compile_detail::hbm_footprint(config, workload);
  return {f.weights, f.kv_cache, f.activations};
}

uint64_t program_hbm_footprint(const Program& program) {
  uint64_t end = 0;
  for (const Stream& s : program.streams)
    for (const Instruction& instr : s.instructions) {
      if (const auto* dma = std::get_if<DmaOp>(&instr.op)) {
        if (dma->descriptor.elements() == 0) continue;
        for (const DmaEndpoint* side : {&dma->descriptor.src, &dma->descriptor.dst})
          if (side->is_hbm()) end = std::max(end, side->base + dma->descriptor.extent_bytes(*side));
      } else if (const auto* ici = std::get_if<IciOp>(&instr.op)) {
        for (const IciCopy& c : ici->copies)
          if (c.via_hbm && c.bytes > 0) end = std::max({end, c.src_addr + c.bytes, c.dst_addr + c.bytes});
      }
    }
  return end;
}

void require_program_fits(const ChipConfig& config, const Program& program, const std::string& path) {
  const uint64_t need = program_hbm_footprint(program), capacity = config.hbm.capacity_bytes;
  if (need <= capacity) return;
  throw InputError(fmt::format(
      "{}: the compiled trace needs {:.2f} GB ({} B) of HBM (its DMA and ICI instructions touch HBM up to "
      "address {:#x}) but hbm.capacity_bytes = {} ({}): it does not fit. Compile it for this chip "
      "(systolic compile refuses a workload that does not fit), or, only as a what-if, "
      "--set \"hbm.capacity_bytes={} GiB\"",
      path, need / kGB, need, need, format_bytes(capacity), config.source.empty() ? config.name : config.source,
      ceil_div(need, kGiB)));
}

}  // namespace systolic
