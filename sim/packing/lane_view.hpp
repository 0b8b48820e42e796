#pragma once
// The lane view (docs/packing.md, "Lane view"): for every prefill step of a static shape, which
// requests sit in which lane, where, and with which segment ids: the ids a packed attention
// kernel masks with (tokens attend only to tokens of the same id; 1..k for the k segments of a
// lane in order, 0 for pad positions). As JSON (lanes.json) and as a self-contained HTML page
// that draws each instance and one lane's attention mask. `systolic pack` shows the prefill
// steps the serving replay ran (sim/serving/); the packing library's own instances show the
// same way.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/packing/packer.hpp"

namespace systolic::packing {

// The version of lanes.json (docs/packing.md, "Lane view"); 2: instances are prefill steps of
// the serving replay, with `replica` and `dispatch_s` (the step's start), no `window`.
constexpr int kLanesSchemaVersion = 2;

// One instance of a prefill shape [B, S] as it ran: its lanes (at most B; missing ones are
// all pad), when it started, on which replica.
struct LaneInstance {
  Shape shape;
  double dispatch_s = 0;
  int64_t replica = 0;
  bool runtime_shape = false;  // compiled during the replay, not one of the bucket set's
  std::vector<Lane> lanes;
};

// What the view is of: the bucket set, the packer and the batching window that made it.
struct LaneViewHeader {
  std::string bucket_set;
  std::string packer;
  double window_ms = 0;
};

// {"lanes_schema", "bucket_set", "packer", "window_ms", "instances": [{"index", "shape",
// "replica", "dispatch_s", "runtime_shape", "useful_tokens", "pad_tokens", "cells", "lanes":
// [{"lane", "used", "pad_tokens", "cu_seqlens", "cells", "segments": [{"segment_id",
// "request", "offset", "tokens", "chunk", "chunks"}]}]}]}; cells are {"computed", "useful",
// "cross", "pad"} as attention_cells (metrics.hpp) counts them.
nlohmann::ordered_json lanes_json(const LaneViewHeader& header, const std::vector<LaneInstance>& instances);
// The packing library's instances (pack()), each dispatched on replica 0.
nlohmann::ordered_json lanes_json(const PackResult& result);

// The HTML page of lanes_json's value: no external resources, the data embedded.
std::string lanes_html(const nlohmann::ordered_json& lanes);

}  // namespace systolic::packing
