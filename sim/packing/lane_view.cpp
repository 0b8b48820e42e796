#include "sim/packing/lane_view.hpp"

#include "sim/packing/metrics.hpp"

namespace systolic::packing {
namespace {

using json = nlohmann::ordered_json;

json cells_json(const AttentionCells& c) {
  return {{"computed", c.computed}, {"useful", c.useful}, {"cross", c.cross}, {"pad", c.pad}};
}

json lane_json(const Lane& lane, int64_t index, int64_t length) {
  json segments = json::array();
  int64_t id = 0;
  for (const Segment& s : lane.segments)
    segments.push_back({{"segment_id", ++id},
                        {"request", s.request_id},
                        {"offset", s.offset},
                        {"tokens", s.tokens},
                        {"chunk", s.chunk},
                        {"chunks", s.chunks}});
  return {{"lane", index},
          {"used", lane.used()},
          {"pad_tokens", pad_tokens(lane, length)},
          {"cu_seqlens", lane.cu_seqlens()},
          {"cells", cells_json(attention_cells(lane, length))},
          {"segments", segments}};
}

}  // namespace

json lanes_json(const PackResult& r) {
  json instances = json::array();
  for (size_t i = 0; i < r.prefill.size(); ++i) {
    const BucketInstance& inst = r.prefill[i];
    json lanes = json::array();
    // An instance built by the packer has all B lanes; any missing would be empty (all pad).
    for (int64_t b = 0; b < inst.shape.batch; ++b)
      lanes.push_back(
          lane_json(b < static_cast<int64_t>(inst.lanes.size()) ? inst.lanes[static_cast<size_t>(b)] : Lane{},
                    b, inst.shape.length));
    instances.push_back({{"index", i},
                         {"shape", {inst.shape.batch, inst.shape.length}},
                         {"window", inst.window},
                         {"dispatch_s", inst.dispatch_s},
                         {"runtime_shape", inst.runtime_shape},
                         {"useful_tokens", useful_tokens(inst)},
                         {"pad_tokens", pad_tokens(inst)},
                         {"cells", cells_json(attention_cells(inst))},
                         {"lanes", lanes}});
  }
  return {{"lanes_schema", kLanesSchemaVersion},
          {"bucket_set", r.bucket_set},
          {"packer", r.options.packer},
          {"window_ms", r.options.window_ms},
          {"instances", instances}};
}

}  // namespace systolic::packing
