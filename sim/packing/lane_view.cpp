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

json instance_json(const LaneInstance& inst, size_t index) {
  BucketInstance whole;  // all B lanes, for the instance's counts
  whole.shape = inst.shape;
  whole.lanes = inst.lanes;
  whole.lanes.resize(static_cast<size_t>(inst.shape.batch));
  json lanes = json::array();
  for (int64_t b = 0; b < inst.shape.batch; ++b)
    lanes.push_back(lane_json(whole.lanes[static_cast<size_t>(b)], b, inst.shape.length));
  return {{"index", index},
          {"shape", {inst.shape.batch, inst.shape.length}},
          {"replica", inst.replica},
          {"dispatch_s", inst.dispatch_s},
          {"runtime_shape", inst.runtime_shape},
          {"useful_tokens", useful_tokens(whole)},
          {"pad_tokens", pad_tokens(whole)},
          {"cells", cells_json(attention_cells(whole))},
          {"lanes", lanes}};
}

}  // namespace

json lanes_json(const LaneViewHeader& header, const std::vector<LaneInstance>& instances) {
  json out = json::array();
  for (size_t i = 0; i < instances.size(); ++i) out.push_back(instance_json(instances[i], i));
  return {{"lanes_schema", kLanesSchemaVersion},
          {"bucket_set", header.bucket_set},
          {"packer", header.packer},
          {"window_ms", header.window_ms},
          {"instances", out}};
}

json lanes_json(const PackResult& r) {
  std::vector<LaneInstance> instances;
  for (const BucketInstance& inst : r.prefill)
    instances.push_back({inst.shape, inst.dispatch_s, 0, inst.runtime_shape, inst.lanes});
  return lanes_json({r.bucket_set, r.options.packer, r.options.window_ms}, instances);
}

}  // namespace systolic::packing
