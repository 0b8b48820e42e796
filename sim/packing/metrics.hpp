#pragma once
// Padding and attention metrics of packed buckets, and the per-shape summary of a replay
// (definitions in docs/packing.md, "Metrics").
//
// Prefill, per lane of length S holding segments of lengths l_i (used u = sum l_i):
//   useful tokens = u, pad tokens = S - u;
//   attention score cells, full rectangle (every query against every key of the lane, as a
//   dense kernel computes them; a causal kernel halves every term alike):
//     computed = S^2, useful = sum l_i^2 (each segment against itself),
//     cross = u^2 - sum l_i^2 (between segments: erased by the segment mask),
//     pad = S^2 - u^2 (rows or columns of pad tokens), masked = computed - useful = cross + pad.
//   An instance [B, S] sums its B lanes (empty lanes are all pad): B·S tokens, B·S^2 cells.
// Decode, per step of a [B, L] pool with n occupied slots:
//   useful tokens = n (one generated token each), pad tokens = B - n (empty slots);
//   computed cells = B·L (every slot attends over L KV positions), useful = sum over occupied
//   slots of the request's KV length (prompt + tokens so far + 1), masked = computed - useful.
// Varlen ideal: no pad tokens and no cross cells — prefill computes sum p^2 cells over the
// accepted prompts p (whole prompts, even when split), decode sum of KV lengths.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/packing/packer.hpp"

namespace systolic::packing {

struct AttentionCells {
  int64_t computed = 0;
  int64_t useful = 0;
  int64_t cross = 0;
  int64_t pad = 0;
  int64_t masked() const { return computed - useful; }
  double masked_fraction() const;  // masked / computed (0 when nothing computed)
  // Sums every count; InputError when one overflows 64 bits.
  AttentionCells& operator+=(const AttentionCells& c);
};

int64_t pad_tokens(const Lane& lane, int64_t length);
int64_t useful_tokens(const BucketInstance& instance);
int64_t pad_tokens(const BucketInstance& instance);
double pad_fraction(const BucketInstance& instance);  // pad / (B·S)
double fill(const BucketInstance& instance);          // useful / (B·S)
AttentionCells attention_cells(const Lane& lane, int64_t length);
AttentionCells attention_cells(const BucketInstance& instance);

// One row of the report: one compiled shape of one phase.
struct ShapeSummary {
  Phase phase = Phase::prefill;
  Shape shape;                 // prefill [B, S]; decode [B slots, L]
  bool runtime_shape = false;  // compiled at run time
  int64_t runs = 0;            // prefill: instances dispatched; decode: steps executed
  int64_t requests = 0;        // distinct requests that had tokens in it
  int64_t segments = 0;        // prefill: segments (requests or chunks); decode: 0
  int64_t useful_tokens = 0;   // prefill: prompt tokens; decode: occupied slot-steps
  int64_t pad_tokens = 0;      // prefill: pad positions; decode: empty slot-steps
  double fill = 0;             // useful / (useful + pad)
  AttentionCells cells;        // decode: cross = 0, pad = masked
};

struct PhaseTotals {
  int64_t runs = 0;
  int64_t useful_tokens = 0;
  int64_t pad_tokens = 0;
  double fill = 0;
  AttentionCells cells;
  int64_t ideal_tokens = 0;  // varlen ideal: tokens computed without any padding
  int64_t ideal_cells = 0;   // varlen ideal: score cells computed without pads or cross cells
};

struct WaitStats {  // prefill dispatch - arrival, over accepted requests (seconds)
  double mean = 0, p50 = 0, p99 = 0, max = 0;
};

struct Summary {
  std::string bucket_set;
  std::string packer = "first-fit";
  double window_ms = 0;
  Overflow overflow = Overflow::reject;
  bool compile_new_shapes = false;

  int64_t requests = 0;          // given
  int64_t accepted = 0;
  int64_t rejected = 0;          // = rejected_prefill + rejected_decode
  int64_t rejected_prefill = 0;  // prompt longer than every prefill S
  int64_t rejected_decode = 0;   // prompt + output longer than every decode L
  int64_t split = 0;             // requests split into chunks
  int64_t chunks = 0;            // chunks those requests became
  int64_t truncated = 0;         // generations cut at the longest decode L
  int64_t truncated_tokens = 0;  // output tokens not generated
  int64_t compiled_shapes = 0;
  double compile_stall_s = 0;
  int64_t windows = 0;
  WaitStats wait;

  std::vector<ShapeSummary> shapes;  // prefill shapes then decode shapes, each by (L, B)
  PhaseTotals prefill;
  PhaseTotals decode;
  // Score cells of split prompts between their chunks (p^2 - sum chunk^2): part of the ideal,
  // computed by no lane (a chunked-prefill kernel reads them from the KV cache; not modelled).
  // prefill.cells.useful + split_cross_cells == prefill.ideal_cells.
  int64_t split_cross_cells = 0;
};

Summary summarize(const PackResult& result);

// Versioned JSON of a summary ("packing_schema": kPackingSchemaVersion), for report.json.
constexpr int kPackingSchemaVersion = 1;
nlohmann::ordered_json to_json(const Summary& summary);

// Every prefill instance with its lanes as [[request_id, tokens], ...] (large: one entry per
// dispatch), for a detailed dump.
nlohmann::ordered_json instances_to_json(const PackResult& result);

// A terminal table: one row per shape, then totals and the varlen ideal.
std::string format_summary(const Summary& summary);

}  // namespace systolic::packing
