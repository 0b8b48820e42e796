#include "sim/report/operands.hpp"

#include <algorithm>

#include "models/mxu/dataflow.hpp"
#include "models/mxu/mxu_engine.hpp"

namespace systolic::report_detail {

using json = nlohmann::ordered_json;

void Span::add(uint64_t start, uint64_t end) {
  first = std::min(first, start);
  last = std::max(last, end);
}

void count_matmul(const ChipConfig& config, const MatmulOp& op, uint64_t start, uint64_t end,
                  OperandAccesses& out) {
  const MatmulSramBytes b =
      matmul_sram_bytes(dataflow_of(config.mxu.dataflow), config.mxu.shape(op.dtype), op);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].sram_read += b.read[i];
    out[i].sram_written += b.written[i];
    if (b.read[i] + b.written[i] > 0) out[i].sram.add(start, end);
  }
}

void count_dma(const DmaDescriptor& d, uint64_t start, uint64_t end, OperandAccesses& out) {
  if (d.src.is_hbm() == d.dst.is_hbm()) return;
  const int pad = d.src.is_hbm() ? d.dst.space : d.src.space;
  if (pad < 0 || pad >= kScratchpadCount) return;  // the DMA engine refuses these before the run
  OperandAccess& o = out[static_cast<size_t>(pad)];
  (d.src.is_hbm() ? o.hbm_read : o.hbm_written) += d.total_bytes();
  o.hbm.add(start, end);
}

namespace {
// The first instance with accesses of a kind sets its start; every instance adds its cycles.
void add_span(const Span& s, uint64_t instance_start, bool& seen, int64_t& start, uint64_t& cycles) {
  if (s.empty()) return;
  if (!seen) start = static_cast<int64_t>(s.first) - static_cast<int64_t>(instance_start);
  seen = true;
  cycles += s.cycles();
}
}  // namespace

void add_instance(OperandRows& rows, const OperandAccesses& instance, uint64_t instance_start) {
  for (size_t i = 0; i < rows.size(); ++i) {
    OperandRow& r = rows[i];
    const OperandAccess& a = instance[i];
    r.bytes.sram_read += a.sram_read;
    r.bytes.sram_written += a.sram_written;
    r.bytes.hbm_read += a.hbm_read;
    r.bytes.hbm_written += a.hbm_written;
    add_span(a.sram, instance_start, r.sram_seen, r.sram_start, r.sram_cycles);
    add_span(a.hbm, instance_start, r.hbm_seen, r.hbm_start, r.hbm_cycles);
  }
}

json operands_json(const OperandRows& rows) {
  json j = json::object();
  const char* names[kScratchpadCount] = {"a", "b", "c"};  // vmem, weights, accumulators
  for (size_t i = 0; i < rows.size(); ++i) {
    const OperandRow& r = rows[i];
    j[names[i]] = {{"sram_bytes_read", r.bytes.sram_read}, {"sram_bytes_written", r.bytes.sram_written},
                   {"sram_start_cycle", r.sram_start},     {"sram_cycles", r.sram_cycles},
                   {"hbm_bytes_read", r.bytes.hbm_read},   {"hbm_bytes_written", r.bytes.hbm_written},
                   {"hbm_start_cycle", r.hbm_start},       {"hbm_cycles", r.hbm_cycles}};
  }
  return j;
}

}  // namespace systolic::report_detail
