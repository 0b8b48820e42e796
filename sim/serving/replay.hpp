#pragma once
// The work of a request log on one bucket set (docs/replay.md, "Columns"): the log packed into
// the set's shapes by a packer (sim/packing/), each distinct shape simulated once (static
// hardware: its cost depends on the shape, not on the content) and multiplied by how often it
// ran, with each shape's MACs on pad tokens and masked cells. This answers where the pads and
// masked cells are; when each token comes out, and the static-shape tax against the dynamic
// baseline, are the serving engine's answers (pack_report.hpp).
#include <string>

#include <nlohmann/json.hpp>

#include "sim/packing/buckets.hpp"
#include "sim/packing/packer.hpp"
#include "sim/packing/request_log.hpp"
#include "sim/serving/shape_simulator.hpp"

namespace systolic {

// report["buckets"], ["totals"], ["rejected_requests"], ["packing"] of one set.
nlohmann::ordered_json replay(ShapeSimulator& simulator, const packing::RequestLog& log,
                              const packing::BucketSet& buckets, const packing::PackOptions& options);

// The per-bucket table and totals of one replay, then its tax and serving summary (when the
// replay has them), for the terminal.
std::string format_replay(const nlohmann::ordered_json& replay);

}  // namespace systolic
