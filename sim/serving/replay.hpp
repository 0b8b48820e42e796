#pragma once
// The work table of a serving replay on one bucket set (docs/replay.md, "Columns"): the
// engine's rows (work_table.hpp: every step it ran, by phase and shape, with the seconds and
// energy the replay's latencies are built from), each static shape's MACs on pad tokens and on
// masked cells from its simulated attention share, the totals and the rejected requests.
// The same steps make the latencies, so the table's seconds sum to the busy time and its energy
// to the requests' (check_conservation).
#include <string>

#include <nlohmann/json.hpp>

#include "sim/packing/buckets.hpp"
#include "sim/packing/request_log.hpp"
#include "sim/serving/engine.hpp"
#include "sim/serving/shape_simulator.hpp"

namespace systolic {

// report["bucket_set"], ["bucket_file"], ["buckets"], ["totals"], ["rejected_requests"] of one
// set's replay; the shapes' utilization and attention share from `simulator` (simulated already:
// the replay ran them).
nlohmann::ordered_json work_table(ShapeSimulator& simulator, const packing::RequestLog& log,
                                  const packing::BucketSet& buckets, const serving::ServeResult& result);

// The per-bucket table and totals of one replay, then its tax and serving summary (when the
// replay has them), for the terminal.
std::string format_replay(const nlohmann::ordered_json& replay);

}  // namespace systolic
