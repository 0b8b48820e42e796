#include "sim/compile/capacity.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "models/common/divide.hpp"
#include "models/common/error.hpp"
#include "models/sram/scratchpad.hpp"  // format_bytes
#include "sim/compile/detail.hpp"

namespace systolic {
namespace {

constexpr double kGB = 1e9;
constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr int64_t kMaxChips = 65536;  // the largest degree --mesh takes

// Bits per element of the weights: the first matmul's B operand type (a transformer model has
// one weight type for all of them).
int weight_bits(const ChipConfig& config, const Workload& workload) {
  for (const Gemm& g : workload.gemms)
    if (g.kind == LayerKind::matmul) return dtype_bits(g.b_type(config.mxu.dtype));
  return 0;
}

// Splitting one copy of the model over N chips (tensor and pipeline parallelism) splits the
// weights and the KV cache N ways (the activations, an upper bound, stay): the smallest N for
// which that fits, or 0 when even the activations alone do not. `shards`: the ways this
// workload is already split.
uint64_t chips_to_fit(const compile_detail::HbmFootprint& f, uint64_t capacity, int64_t shards) {
  if (f.activations >= capacity) return 0;
  const double shared = static_cast<double>(f.weights + f.kv_cache) * static_cast<double>(shards);
  return static_cast<uint64_t>(std::ceil(shared / static_cast<double>(capacity - f.activations)));
}

// A split of one copy of the model over tp x pp chips (sim/workload/transformer/shard.cpp): tp
// divides the model's heads, KV heads and FFN widths (Workload::tp_divides), pp its layers.
struct Split {
  int64_t tp = 1, pp = 1;
  int64_t chips() const { return tp * pp; }
};

int64_t pp_of(const Workload& w) {
  if (w.mesh)
    for (const MeshAxisPlace& a : w.mesh->axes)
      if (a.name == "pp") return a.degree;
  return 1;
}

// The split over exactly `chips` chips with the most tensor parallelism (it also splits the
// activations and needs no micro-batches), if the model has one.
std::optional<Split> split_over(const Workload& w, int64_t chips) {
  for (int64_t tp = std::min(chips, w.tp_divides); tp >= 1; --tp)
    if (w.tp_divides % tp == 0 && chips % tp == 0 && w.pp_divides % (chips / tp) == 0)
      return Split{tp, chips / tp};
  return std::nullopt;
}

// The flags that run `s` on a system of `chips` (the chips past the split data-parallel): --tp
// when it is tensor parallelism over all of them, else a --mesh.
std::string split_flags(const Split& s, int64_t chips) {
  if (s.pp == 1 && s.tp == chips) return fmt::format("--tp {}", chips);
  std::vector<std::string> axes;
  if (chips > s.chips()) axes.push_back(fmt::format("dp={}", chips / s.chips()));
  if (s.pp > 1) axes.push_back(fmt::format("pp={}", s.pp));
  if (s.tp > 1) axes.push_back(fmt::format("tp={}", s.tp));
  return fmt::format("--mesh {}", fmt::join(axes, ","));
}

// This config's chips when enough of them fit it (as many as can hold one copy: a data-parallel
// split of the batch may not exist), else a system of the fewest chips that can: a power of two
// (TPU slices come in powers of two) when one has a split, else any count that has.
std::string split_hint(const ChipConfig& config, const compile_detail::HbmFootprint& f, const Workload& w) {
  if (w.tp == 0 || w.tp_divides == 0) return {};  // not a transformer model
  const int64_t shards = w.tp * pp_of(w);
  const auto n = static_cast<int64_t>(
      std::min<uint64_t>(chips_to_fit(f, config.hbm.capacity_bytes, shards), kMaxChips + 1));
  if (n <= shards) return {};
  const int64_t chips = config.ici.chips();
  for (int64_t k = chips; chips > 1 && k >= n; --k)
    if (const std::optional<Split> s = split_over(w, k); s && chips % k == 0)
      return fmt::format("shard it over this config's {} chips: {} (the weights and KV cache split {} ways)",
                         chips, split_flags(*s, chips), k);
  std::optional<Split> s;
  for (int64_t k = 1; k <= kMaxChips && !s; k *= 2)
    if (k >= n) s = split_over(w, k);
  for (int64_t k = n; k <= std::min(kMaxChips, w.tp_divides * w.pp_divides) && !s; ++k) s = split_over(w, k);
  if (!s) return {};
  const std::string widest =
      s->tp < s->chips()
          ? fmt::format("; tp={} is the most that divides the model's heads, KV heads and FFN width", s->tp)
          : "";
  return fmt::format(
      "shard it over {} or more chips: {} on a system of that many (ici.topology, ici.dims; the "
      "weights and KV cache split {} ways{})",
      s->chips(), split_flags(*s, s->chips()), s->chips(), widest);
}

std::vector<std::string> hints(const ChipConfig& config, const Workload& workload,
                               const compile_detail::HbmFootprint& f) {
  std::vector<std::string> out;
  if (std::string split = split_hint(config, f, workload); !split.empty()) out.push_back(std::move(split));
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
