#pragma once
// Pieces the schedulers share (sim/serving/schedulers/): choosing a bucket, a pool of decode
// slots, and the continuous-batching loop that `continuous` runs on static shapes and `dynamic`
// runs with no shape constraint.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "sim/packing/packer.hpp"
#include "sim/serving/engine.hpp"

namespace systolic::serving {

// The first bucket, in the set's (length, batch) order, with batch >= `batch` and length >=
// `length`: the shortest that holds them, then the narrowest; nullopt when none does.
std::optional<Shape> smallest_fit(const std::vector<packing::Bucket>& buckets, int64_t batch, int64_t length);
int64_t widest_batch(const std::vector<packing::Bucket>& buckets);
// Every prefill bucket of `buckets`, then its decode buckets: all of them, or only the last
// (the [B slots, L] shape continuous batching runs).
std::vector<StepShape> prefill_and_decode(const packing::BucketSet& buckets, bool every_decode);
// Marks on_demand the prefill shapes no single prompt is laid in (smallest_fit of one lane never
// picks them): select_prefill grows a batch into one only when worth_growing lets it.
std::vector<StepShape> grown_on_demand(std::vector<StepShape> shapes, const packing::BucketSet& buckets);
// The longest prompt a static-shape scheduler prefills: the longest S, or with
// compile_new_shapes the model's context (0: no limit).
int64_t prefill_limit(const ServeOptions& options);

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

// Removes the works whose request finished, returning their slots (if any) to `pool`.
void release_finished(const Engine& engine, std::vector<Work>& works, SlotPool& pool);

// A static prefill step for some prompts: their lanes and the shape that holds them.
struct PrefillPlan {
  Shape shape;
  bool runtime = false;  // a shape compiled during the replay (options.compile_new_shapes)
  std::vector<packing::Lane> lanes;
};

// `prompts` (request, tokens; in arrival order) packed by options.packer into lanes of the
// longest prefill S, in the smallest prefill bucket holding the lanes; nullopt when none does.
// With compile_new_shapes, a prompt longer than every S runs alone in [1, round_up(prompt,
// granule)] (with others: nullopt), and a lone lane more than compile_pad_threshold pad in its
// bucket gets [1, round_up(used, granule)] when that is shorter.
std::optional<PrefillPlan> plan_prefill(const ServeOptions& options,
                                        const std::vector<packing::Item>& prompts);

// The step's prefill part as `plan` lays it out: one work per segment, lane by lane; `slots`
// gives each request's decode slot (-1: it does not decode).
void lay_out(const PrefillPlan& plan, const std::vector<std::pair<int64_t, int64_t>>& slots, Step& step);

enum class Shapes { fixed, varlen };

// Gives a request about to be prefilled its KV reservation and, when it decodes, its decode
// slot (-1 when it does not: its only token comes from prefill); nullopt when either is not free.
using SlotBinder = std::function<std::optional<int64_t>(int64_t request)>;

// Fills step.prefill (and, with Shapes::fixed, its shape and lanes) from the waiting queue in
// arrival order, as many as the prefill buckets (fixed: plan_prefill; varlen: the widest
// bucket's batch) and `bind` allow, stopping at the first request that does not fit; false
// when nothing could start, or when the batching window of the oldest waiting request is still
// open at `at` (Engine::batch_ready_s). With fixed shapes a request joins only if the grown
// batch's step costs no more than the batch so far plus a step of its own.
bool select_prefill(Engine& engine, const ServeOptions& options, Shapes shapes, const SlotBinder& bind,
                    Step& step, double at);

// Continuous batching (JetStream-style). Whenever a slot of the decode shape
// options.buckets.decode.back() = [B, L] is free and requests wait, one prefill step
// (select_prefill, a free slot and the KV budget per request) starts them; their first token
// comes out of it and they keep their slot. Otherwise one decode step runs every occupied slot.
// With Shapes::varlen, steps are varlen (no pads) and prompts and contexts are not limited by S
// or L; the slot count B and batch widths stay the same.
void run_continuous(Engine& engine, const ServeOptions& options, Shapes shapes);

}  // namespace systolic::serving
