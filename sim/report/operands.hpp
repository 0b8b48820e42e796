#pragma once
// Per-layer traffic of the MXU's three operands (docs/report.md, `layers[i].operands`): A, the
// activations in vmem; B, the weights (or the K/V operand of attention) in the weight buffer;
// C, the partial sums in the accumulators. For each: the bytes the MXUs read and wrote in that
// scratchpad, the bytes the DMA engines moved between it and HBM, and the cycles over which each
// happened. SCALE-Sim's BANDWIDTH_REPORT.csv and DETAILED_ACCESS_REPORT.csv are made of these
// (sim/report/scalesim_csv.hpp), its ifmap, filter and ofmap being A, B and C.
#include <array>
#include <cstdint>
#include <limits>

#include <nlohmann/json.hpp>

#include "models/chip/chip_config.hpp"
#include "models/isa/dma_descriptor.hpp"
#include "models/isa/program.hpp"

namespace systolic::report_detail {

// The cycles [first, last) from the start of an operand's first access of one kind in one
// layer instance to the end of its last.
struct Span {
  uint64_t first = std::numeric_limits<uint64_t>::max();
  uint64_t last = 0;
  void add(uint64_t start, uint64_t end);
  bool empty() const { return first == std::numeric_limits<uint64_t>::max(); }
  uint64_t cycles() const { return empty() ? 0 : last - first; }
};

// One operand in one layer instance (an entry of the program's layer table).
struct OperandAccess {
  uint64_t sram_read = 0, sram_written = 0;  // by the MXUs
  uint64_t hbm_read = 0, hbm_written = 0;    // by the DMA engines: HBM -> this scratchpad, and back
  Span sram, hbm;
};
using OperandAccesses = std::array<OperandAccess, kScratchpadCount>;  // indexed by ScratchpadId

// Adds what one MXU instruction moved ([start, end) its cycles), as the MXU counted it
// (models/mxu/mxu_engine.hpp, matmul_sram_bytes).
void count_matmul(const ChipConfig& config, const MatmulOp& op, uint64_t start, uint64_t end,
                  OperandAccesses& out);
// Adds what one DMA instruction moved between HBM and a scratchpad. SRAM-to-SRAM and
// HBM-to-HBM copies (hand-written traces only) belong to no operand.
void count_dma(const DmaDescriptor& d, uint64_t start, uint64_t end, OperandAccesses& out);

// One operand of a report row (one or more merged layer instances): bytes summed; for each kind
// of access, the cycles summed over the instances and the start of the first instance's
// accesses from that instance's start (negative: the loads began before the layer did, while
// the layer before it computed).
struct OperandRow {
  OperandAccess bytes;  // its spans unused
  int64_t sram_start = 0, hbm_start = 0;
  uint64_t sram_cycles = 0, hbm_cycles = 0;
  bool sram_seen = false, hbm_seen = false;
};
using OperandRows = std::array<OperandRow, kScratchpadCount>;

// Adds one layer instance whose span starts at `instance_start`.
void add_instance(OperandRows& rows, const OperandAccesses& instance, uint64_t instance_start);

// {"a": {...}, "b": {...}, "c": {...}}: sram_bytes_read, sram_bytes_written, sram_start_cycle,
// sram_cycles, hbm_bytes_read, hbm_bytes_written, hbm_start_cycle, hbm_cycles.
nlohmann::ordered_json operands_json(const OperandRows& rows);

}  // namespace systolic::report_detail
