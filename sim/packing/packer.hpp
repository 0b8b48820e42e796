#pragma once
// Packing a request log into static bucket shapes (docs/packing.md has the full model).
//
// Prefill: requests are grouped into arrival windows; the requests (or chunks) of a window
// are packed into lanes — one row of S tokens of a [B, S] bucket instance — each holding
// segments laid out like cu_seqlens; lanes are then given the shortest bucket length that
// holds them and gathered into instances. Decode: every accepted request then generates its
// output tokens, one per step, in a slot of a [B slots, L] decode bucket; finished requests
// free their slot for the next one (continuous batching).
//
// Plain C++ (no SystemC): the result says which shapes ran how often with how much padding;
// the chip simulation of each distinct shape is done elsewhere and combined with it.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/names.hpp"
#include "sim/packing/buckets.hpp"
#include "sim/packing/request_log.hpp"

namespace systolic::packing {

// A prompt longer than every prefill bucket: rejected as a shape mismatch, or split into
// chunks. (A generation longer than every decode L: rejected, or truncated under split.)
enum class Overflow { reject, split };
inline constexpr auto kOverflowNames =
    name_table<Overflow>({{Overflow::reject, "reject"}, {Overflow::split, "split"}});

struct PackOptions {
  // A packer registered in sim/packing/packers/ (none, first-fit, first-fit-decreasing,
  // best-fit; sim/packing/bin_packer.hpp): how a window's items fill lanes.
  std::string packer = "first-fit";
  // A window opens at the first arrival not yet dispatched and closes window_ms later; every
  // request that arrived by then (inclusive) is packed together, dispatched at the close.
  double window_ms = 0.0;
  Overflow overflow = Overflow::reject;

  // Runtime compilation of new shapes (off by default). When on, a prompt longer than every
  // prefill bucket gets its own new [1, round_up(len, compile_granule)] shape instead of the
  // overflow policy (unless that exceeds compile_max_length > 0), and a lane whose shortest
  // fitting bucket would be more than compile_pad_threshold padding gets a new
  // [1, round_up(fill, compile_granule)] shape. A decode generation longer than every decode
  // L gets a new [1, round_up(prompt + output, compile_granule)] decode shape. Each new
  // shape is compiled once and reused; each compilation stalls dispatch by compile_stall_s.
  bool compile_new_shapes = false;
  double compile_stall_s = 30.0;
  int64_t compile_granule = 256;  // make it a multiple of array_tile() of the target chip
  double compile_pad_threshold = 0.5;
  int64_t compile_max_length = 0;  // 0: no limit

};

// Throws InputError "option 'window_ms': expected ..." for values out of range.
void validate(const PackOptions& options);

// One request (or chunk of a request) inside a lane; offsets are cu_seqlens.
struct Segment {
  int64_t request_id = 0;
  int64_t offset = 0;          // first token within the lane
  int64_t tokens = 0;          // length
  int64_t chunk = 0;           // 0-based chunk index (0 for a request that was not split)
  int64_t chunks = 1;          // chunks the request was split into (1 when not split)
  int64_t request_offset = 0;  // first prompt token of this chunk within the request
};

struct Lane {
  std::vector<Segment> segments;  // in lane order, contiguous from offset 0
  int64_t used() const;           // tokens held (the rest of the lane is padding)
  std::vector<int64_t> cu_seqlens() const;  // {0, len0, len0+len1, ...}: segments.size()+1 items
};

// One dispatch of a compiled prefill shape [B, S]: exactly B lanes (unused lanes are empty).
struct BucketInstance {
  Shape shape;
  int64_t window = 0;          // index of the arrival window it was packed in
  double window_close_s = 0;   // when that window closed
  double dispatch_s = 0;       // >= window_close_s: later after compile stalls
  bool runtime_shape = false;  // a shape compiled at run time, not from the bucket set
  std::vector<Lane> lanes;
};

struct Rejection {
  int64_t request_id = 0;
  int line = 0;         // in the request log
  Phase phase = Phase::prefill;  // which bucket list it did not fit
  std::string reason;   // e.g. "prompt of 9000 tokens > longest prefill bucket S = 8192"
};

struct Truncation {  // overflow == split, decode: stopped when the KV cache reached L
  int64_t request_id = 0;
  int line = 0;
  int64_t generated_tokens = 0;  // tokens it received (>= 1: the first comes from prefill)
  int64_t dropped_tokens = 0;    // output_tokens - generated_tokens
};

struct CompiledShape {
  Phase phase = Phase::prefill;
  Shape shape;
  double at_s = 0;           // when compilation started
  int64_t request_id = 0;    // the request that first needed it
};

struct DecodeShapeStats {
  Shape shape;  // [B slots, L]
  bool runtime_shape = false;
  int64_t steps = 0;                // decode steps executed with this shape
  int64_t requests = 0;             // distinct requests that had a slot in at least one step
  int64_t occupied_slot_steps = 0;  // = tokens generated in this shape (useful)
  int64_t empty_slot_steps = 0;     // steps * B - occupied (padding)
  int64_t kv_used = 0;              // sum over occupied slot-steps of the request's KV length
  int64_t kv_capacity = 0;          // steps * B * L: KV positions every step attends over
};

// One line per accepted request.
struct RequestTiming {
  int64_t request_id = 0;
  double arrival_s = 0;
  int64_t prompt_tokens = 0;
  double prefill_dispatch_s = 0;  // dispatch of the instance holding its last prompt token
  int64_t chunks = 1;
  Shape decode_shape;             // its decode pool's [B_max, L] ({0,0} if nothing to decode)
  int64_t generated_tokens = 0;   // the first from prefill, then one per decode step
};

struct PackResult {
  std::string bucket_set;  // BucketSet::name
  PackOptions options;
  int64_t requests = 0;    // requests given
  int64_t windows = 0;
  std::vector<BucketInstance> prefill;    // in dispatch order
  std::vector<DecodeShapeStats> decode;   // one per decode shape that ran (by length, batch)
  std::vector<Rejection> rejected;        // shape mismatches, in arrival order
  std::vector<int64_t> split;             // ids of requests split into chunks
  std::vector<Truncation> truncated;
  std::vector<CompiledShape> compiled;    // shapes compiled at run time, in order
  double compile_stall_s = 0;             // compiled.size() * compile_stall_s
  std::vector<RequestTiming> accepted;    // in arrival order
};

// The whole replay: admission (reject / split / compile), prefill packing in windows, decode
// scheduling. `requests` need not be sorted (they are taken in arrival order, ties by id).
// Throws InputError for invalid options; a request that fits nothing is a Rejection, not an
// error.
PackResult pack(const std::vector<Request>& requests, const BucketSet& buckets,
                const PackOptions& options);

// --- Building blocks, public for tests and for callers with their own scheduling. ---

// A prompt, or one chunk of a split prompt, waiting to be placed.
struct Item {
  int64_t request_id = 0;
  int64_t tokens = 0;
  int64_t chunk = 0;
  int64_t chunks = 1;
  int64_t request_offset = 0;
};

// Bin-packs items (given in arrival order) into lanes of `lane_length` tokens with the packer
// registered as `packer` (InputError when none is). Every item must be 1..lane_length tokens.
// Lanes come back in the order they were opened.
std::vector<Lane> pack_lanes(const std::vector<Item>& items, int64_t lane_length, std::string_view packer);

// Gives each lane the shortest prefill bucket length that holds it and gathers lanes into
// instances (the rule of docs/packing.md, "From lanes to instances"): lengths longest first;
// while n lanes of one length wait, the bucket of that length with the largest B <= n, or,
// when n is below every B of that length, the smallest B; the empty lanes this leaves are
// filled with the longest lanes of shorter lengths still waiting. Every lane must fit the
// longest prefill bucket.
std::vector<BucketInstance> place_lanes(const std::vector<Lane>& lanes,
                                        const std::vector<Shape>& prefill_shapes);

struct DecodeJob {
  int64_t request_id = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;  // decode steps to run (>= 1): the tokens after prefill's
  double prefill_dispatch_s = 0;  // freed slots go to jobs in this order (then request id)
};

// Continuous batching, backlogged (docs/packing.md, "Decode"): each job goes to the decode
// length class with the smallest L >= prompt + output; each class is one pool of B_max slots
// (B_max = its largest B) where a freed slot is refilled at once with the next job (by prefill
// dispatch, then request id); a step with n occupied slots runs the class's shape with the
// smallest B >= n. This counts the work and the occupancy; it has no clock (timing is the
// serving engine's, sim/serving/engine.hpp). Jobs that fit no decode shape are a
// std::invalid_argument (admission should have rejected them).
std::vector<DecodeShapeStats> schedule_decode(const std::vector<DecodeJob>& jobs,
                                              const std::vector<Shape>& decode_shapes);

}  // namespace systolic::packing
