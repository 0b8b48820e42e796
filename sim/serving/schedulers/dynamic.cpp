// `dynamic`: the continuous-batching loop of `continuous` with no shape constraint: every step
// is varlen (exactly the prompts or contexts present: no pad tokens, no cross-request attention
// cells, what varlen kernels on a GPU do), prompts and contexts are not limited by the buckets'
// S or L. The slot count B of the decode shape, the widest prefill batch and the KV budget still
// apply. The baseline the static-shape tax is measured against: it does not move when only the
// packer or the bucket lengths change.
#include "sim/serving/batching.hpp"
#include "sim/serving/scheduler.hpp"

namespace systolic::serving {
namespace {

class DynamicBatching : public Scheduler {
 public:
  void validate(const ServeOptions& options) const override {}
  void run(Engine& engine, const ServeOptions& options) const override {
    run_continuous(engine, options, Shapes::varlen);
  }
};

const Registration<Scheduler> registration{
    {"dynamic", 50, "continuous batching without shapes: varlen steps, no pads (the baseline)",
     std::make_shared<DynamicBatching>()}};

}  // namespace

}  // namespace systolic::serving
