// `continuous`: JetStream-style continuous batching on static shapes (run_continuous,
// sim/serving/batching.hpp): prefill in prefill buckets, finished prefills inserted into free
// slots of the fixed [B slots, L] decode shape, every decode step running the whole shape,
// admission limited by the slots and the KV budget.
#include "sim/serving/batching.hpp"
#include "sim/serving/scheduler.hpp"

namespace systolic::serving {
namespace {

class ContinuousBatching : public Scheduler {
 public:
  void validate(const ServeOptions& options) const override {
    validate_decode_shape(options.buckets.decode.back().shape, options);
  }
  void run(Engine& engine, const ServeOptions& options) const override {
    run_continuous(engine, options, Shapes::fixed);
  }
  std::vector<StepShape> shapes(const ServeOptions& options) const override {
    return grown_on_demand(prefill_and_decode(options.buckets, false), options.buckets);
  }
};

const Registration<Scheduler> registration{
    {"continuous", 20, "prefill buckets feeding the free slots of one [B, L] decode shape (JetStream)",
     std::make_shared<ContinuousBatching>()}};

}  // namespace

}  // namespace systolic::serving
