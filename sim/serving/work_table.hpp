#pragma once
// The work table of a serving replay (docs/replay.md, "Columns"): one row per phase and step
// shape with what the replay's steps computed there (runs, requests, useful and pad tokens,
// attention cells) and what they cost (seconds, energy). The engine adds every part of every
// step it runs, so the table and the latencies are one replay: its seconds sum to the engine's
// busy time and its energy to the records' (check_conservation, metrics.hpp).
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "sim/packing/metrics.hpp"
#include "sim/serving/step_cost.hpp"

namespace systolic::serving {

struct Work;  // engine.hpp

struct ShapeWork {
  Phase phase = Phase::prefill;
  bool varlen = false;         // varlen steps (`dynamic`): no shape
  Shape shape;                 // static steps: the shape run ({0, 0} when varlen)
  bool runtime_shape = false;  // compiled during the replay, not one of the bucket set's
  int64_t runs = 0;            // steps with this part
  int64_t requests = 0;        // distinct requests with tokens in it
  int64_t segments = 0;        // prefill: request pieces placed in lanes; decode: tokens
  int64_t useful_tokens = 0;   // prompt tokens (prefill) or new tokens (decode)
  int64_t pad_tokens = 0;      // positions the shape computed for no request
  // Prefill: each lane's full S x S rectangle (useful: each segment against itself; cross:
  // between segments; pad: rows and columns of pads). Decode: the KV positions every slot
  // attends over (B x L), useful those of the requests present, the rest pad.
  packing::AttentionCells cells;
  double seconds = 0;
  double energy_pj = 0;
};

class WorkTable {
 public:
  // `requests`: how many requests the replay has (ids 0..requests-1), to count them per row.
  explicit WorkTable(size_t requests = 0) : requests_(requests) {}
  WorkTable(const WorkTable&) = delete;  // last_ points into rows_
  WorkTable& operator=(const WorkTable&) = delete;
  // Adds one part of one step (runs, tokens, cells and charge in `part`; requests from `works`).
  void add(const ShapeWork& part, const std::vector<Work>& works);
  // Prefill rows, then decode rows; static shapes by (L, B), then the varlen row.
  std::vector<ShapeWork> rows() const;

 private:
  struct Row {
    ShapeWork work;
    std::vector<bool> seen;  // by request id
  };
  using Key = std::tuple<int, bool, int64_t, int64_t>;  // phase, varlen, L, B
  size_t requests_;
  std::map<Key, Row> rows_;
  // The row each phase added to last: steps repeat their shapes, so most adds skip the lookup.
  Row* last_[2] = {nullptr, nullptr};
  Key last_key_[2];
};

// The rows of two tables as one, in rows()'s order: requests add up, as every request is on one
// replica.
std::vector<ShapeWork> merge_rows(const std::vector<ShapeWork>& a, const std::vector<ShapeWork>& b);

}  // namespace systolic::serving
