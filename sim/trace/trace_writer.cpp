#include <fmt/format.h>

#include "sim/trace/trace.hpp"
#include "sim/trace/trace_fields.hpp"
#include "sim/trace/trace_tokens.hpp"

namespace systolic {
namespace {

struct FieldWriter {
  std::string out;
  template <class T>
  void integer(const char* key, T v, int64_t) { out += fmt::format(" {}={}", key, v); }
  void optional_integer(const char* key, int64_t v) {
    if (v != 0) integer(key, v, 0);
  }
  void dtype(const char* key, DType t) { out += fmt::format(" {}={}", key, kDTypeNames.name(t)); }
  void optional_dtype(const char* key, const std::optional<DType>& t) {
    if (t) dtype(key, *t);
  }
  // Written only where it applies (an fp8 operand), shortest round-tripping form.
  void scale(const char* key, double v, bool applies) {
    if (applies) out += fmt::format(" {}={}", key, v);
  }
  void vector_kind(const char* key, VectorKind k) { out += fmt::format(" {}={}", key, kVectorKindNames.name(k)); }
  void endpoint(const char* key, const DmaEndpoint& e) {
    out += fmt::format(" {}={}:{:#x}", key, e.is_hbm() ? "hbm" : trace_detail::kSpaces[e.space], e.base);
  }
  void messages(const char* key, const std::vector<IciCopy>& copies) {
    for (const IciCopy& c : copies) {
      out += fmt::format(" {}={},{},{},{}", key, c.to, c.bytes, c.recv_sem, c.tie < 0 ? '-' : '+');
      if (c.via_hbm) out += fmt::format(",{:#x},{:#x}", c.src_addr, c.dst_addr);
    }
  }
  void triple(const char* key, const std::array<uint64_t, 3>& v) {
    out += fmt::format(" {}={}x{}x{}", key, v[0], v[1], v[2]);
  }
};

}  // namespace

std::string write_trace(const Program& program, const ChipConfig& config, int64_t chip) {
  using trace_detail::quote;
  std::string out = write_trace_header(trace_header_for(config, chip));
  out += fmt::format("\nchip rows={} cols={} mxus={}\n\n", config.mxu.rows, config.mxu.cols,
                     config.mxu.count);
  for (size_t i = 0; i < program.layers.size(); ++i) {
    const LayerInfo& l = program.layers[i];
    out += fmt::format("layer {} name={} kind={} m={} k={} n={} dtype={} repeat={} macs={} source={}\n", i,
                       quote(l.name), kLayerKindNames.name(l.kind), l.m, l.k, l.n, kDTypeNames.name(l.dtype), l.repeat, l.useful_macs,
                       quote(l.source));
  }
  out += "\n";
  for (const auto& b : program.buffers)
    out += fmt::format("buffer {} space={} offset={:#x} bytes={}\n", quote(b.name),
                       trace_detail::kSpaces[b.space], b.offset, b.bytes);
  if (!program.buffers.empty()) out += "\n";
  for (const auto& s : program.semaphores) out += fmt::format("sem {}\n", quote(s));
  for (const Stream& s : program.streams) {
    out += fmt::format("\nstream {}\n", engine_name(s.engine.kind, s.engine.index));
    for (const Instruction& instr : s.instructions) {
      FieldWriter w;
      std::visit([&](auto op) { trace_detail::fields(op, w); }, instr.op);  // a copy: fields() takes non-const
      out += fmt::format("  {} layer={}{}", trace_detail::kOps[instr.op.index()].name, instr.layer, w.out);
      for (const auto& wt : instr.waits)
        out += fmt::format(" wait={}>={}", quote(program.semaphores[wt.sem]), wt.at_least);
      for (int sig : instr.signals) out += fmt::format(" signal={}", quote(program.semaphores[sig]));
      if (instr.frees >= 0) {
        const SramRegion& f = program.regions[static_cast<size_t>(instr.frees)];
        out += fmt::format(" frees={}", quote(fmt::format("{}:{:#x}+{}@{}", trace_detail::kSpaces[f.space], f.offset,
                                                          f.bytes, program.semaphores[f.full_sem])));
      }
      out += "\n";
    }
  }
  return out;
}

}  // namespace systolic
