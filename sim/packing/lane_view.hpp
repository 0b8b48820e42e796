#pragma once
// The lane view (docs/packing.md, "Lane view"): for every prefill bucket instance of a packing,
// which requests sit in which lane, where, and with which segment ids: the ids a packed
// attention kernel masks with (tokens attend only to tokens of the same id; 1..k for the k
// segments of a lane in order, 0 for pad positions). As JSON (lanes.json) and as a
// self-contained HTML page that draws each instance and one lane's attention mask.
#include <string>

#include <nlohmann/json.hpp>

#include "sim/packing/packer.hpp"

namespace systolic::packing {

// The version of lanes.json (docs/packing.md, "Lane view").
constexpr int kLanesSchemaVersion = 1;

// {"lanes_schema", "bucket_set", "packer", "window_ms", "instances": [{"index", "shape",
// "window", "dispatch_s", "runtime_shape", "useful_tokens", "pad_tokens", "cells", "lanes":
// [{"lane", "used", "pad_tokens", "cu_seqlens", "cells", "segments": [{"segment_id",
// "request", "offset", "tokens", "chunk", "chunks"}]}]}]}; cells are {"computed", "useful",
// "cross", "pad"} as attention_cells (metrics.hpp) counts them.
nlohmann::ordered_json lanes_json(const PackResult& result);

// The HTML page of lanes_json's value: no external resources, the data embedded.
std::string lanes_html(const nlohmann::ordered_json& lanes);

}  // namespace systolic::packing
