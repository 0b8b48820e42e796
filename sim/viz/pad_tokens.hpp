#pragma once
// Pad tokens in the PE-grid view (docs/watch-it-compute.md, "Pad tokens"): which rows of A are
// padding rather than tokens of a request, when a transformer's prefill runs at a static bucket
// [B, S] whose lanes the requests do not fill.
//
// A bucket instance has B lanes of S token positions; lane b holds useful[b] tokens at its
// start (one request, or several packed one after the other) and pad tokens after them. Rows
// of A are tokens in these layers of a model lowered at [B, S] (sim/workload/transformer/lower.hpp):
//  * every matmul with M = B*S rows (projections, FFN, router, LM head with all logits):
//    row t is position t % S of lane t / S;
//  * the attention matmuls (kind attention, M = S query positions): instance i of the layer
//    (its i-th matmul on an MXU, in order) serves lane i % B;
//  * the LM head with one row per lane (kind matmul, M = B): row b is lane b's last token, a
//    pad row only when lane b is empty.
// MoE expert matmuls (rows are routed token groups) and vector work have no token rows.
#include <cstdint>
#include <string>
#include <vector>

#include "models/isa/program.hpp"
#include "sim/packing/buckets.hpp"
#include "sim/packing/packer.hpp"

namespace systolic {

struct PadTokens {
  packing::Shape bucket;        // [B, S]
  std::vector<int64_t> useful;  // per lane: real tokens at its start, in [0, S]
  std::string origin;           // how the instance was chosen, for the page
  int64_t pad_count() const;    // B*S minus the useful tokens
};

// Every lane of `bucket` ends with `pad` pad tokens (0 <= pad <= S). Throws InputError.
PadTokens uniform_pad_tokens(packing::Shape bucket, int64_t pad);

// The lanes of a packed prefill instance.
PadTokens pad_tokens_of(const packing::BucketInstance& instance, std::string origin);

// Packs a request log through a bucket set, as `systolic pack` does (docs/packing.md), and
// returns prefill instance `index` (0-based, in dispatch order). `packer`: none, first-fit (ff),
// first-fit-decreasing (ffd), best-fit (bf); `window_ms` the arrival window. Throws InputError
// for bad input and for an index past the last instance.
PadTokens packed_instance(const std::string& requests, const std::string& buckets, int64_t index,
                          const std::string& packer, double window_ms);

// Per row of A of instance `instance` of `layer`: 1 for a pad token. Empty when the layer's
// rows are not the bucket's tokens (the rules above).
std::vector<uint8_t> pad_token_rows(const PadTokens& tokens, const LayerInfo& layer, int64_t instance);

}  // namespace systolic
