#pragma once
// Pieces the schedulers share (sim/serving/schedulers/): choosing a bucket, a pool of decode
// slots, and the continuous-batching loop that `continuous` runs on static shapes and `dynamic`
// runs with no shape constraint.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "sim/serving/engine.hpp"

namespace systolic::serving {

// The first bucket, in the set's (length, batch) order, with batch >= `batch` and length >=
// `length`: the shortest that holds them, then the narrowest; nullopt when none does.
std::optional<Shape> smallest_fit(const std::vector<packing::Bucket>& buckets, int64_t batch, int64_t length);
int64_t widest_batch(const std::vector<packing::Bucket>& buckets);

// Decode slots first..first+n-1 of a [B slots, L] shape: the lowest free slot is taken first.
class SlotPool {
 public:
  explicit SlotPool(int64_t slots, int64_t first = 0);
  int64_t free_count() const { return static_cast<int64_t>(free_.size()); }
  bool any_free() const { return !free_.empty(); }
  int64_t take();
  void give_back(int64_t slot);

 private:
  std::vector<int64_t> free_;  // descending: the lowest free slot is at the back
};

// Removes the works whose request finished, returning their slots to `pool`.
void release_finished(const Engine& engine, std::vector<Work>& works, SlotPool& pool);

enum class Shapes { fixed, varlen };

// Gives a request about to be prefilled its decode slot and KV reservation; nullopt when none
// is free.
using SlotBinder = std::function<std::optional<int64_t>(int64_t request)>;

// Fills step.prefill (and, with Shapes::fixed, its shape) from the waiting queue in arrival
// order, as many as the widest prefill bucket and `bind` allow, stopping at the first request
// that does not fit; false when nothing could start. With fixed shapes a request joins only if
// the grown batch's step costs no more than the batch so far plus a step of its own.
bool select_prefill(Engine& engine, const ServeOptions& options, Shapes shapes, const SlotBinder& bind,
                    Step& step);

// Continuous batching (JetStream-style). Whenever a slot of the decode shape
// options.buckets.decode.back() = [B, L] is free and requests wait, one prefill step
// (select_prefill, a free slot and the KV budget per request) starts them; their first token
// comes out of it and they keep their slot. Otherwise one decode step runs every occupied slot.
// With Shapes::varlen, steps are varlen (no pads) and prompts and contexts are not limited by S
// or L; the slot count B and batch widths stay the same.
void run_continuous(Engine& engine, const ServeOptions& options, Shapes shapes);

}  // namespace systolic::serving
