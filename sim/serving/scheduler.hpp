#pragma once
// Serving schedulers (docs/serving.md): one file each under sim/serving/schedulers/, each
// registering itself by name (models/common/registry.hpp). A scheduler decides what every
// forward step holds and drives the engine until every request has an outcome; the engine
// keeps the clock, the records and the invariants.
#include <string_view>
#include <vector>

#include "models/common/registry.hpp"
#include "sim/packing/request_log.hpp"
#include "sim/serving/engine.hpp"
#include "sim/serving/step_cost.hpp"

namespace systolic::serving {

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // InputError naming the option when `options` cannot run this scheduler (a shape it needs
  // is missing, or cannot hold a request in the KV budget).
  virtual void validate(const ServeOptions& options) const = 0;
  // Runs steps on `engine` until engine.done().
  virtual void run(Engine& engine, const ServeOptions& options) const = 0;
  // How many chips hold KV caches, each with its own budget of options.kv_capacity_bytes.
  virtual int64_t kv_pools(const ServeOptions& /*options*/) const { return 1; }
  // The static shapes its steps may run on `options`, which the chip simulator may simulate
  // ahead of the replay (ShapeSimulator::ahead). A shape left out is simulated when a step first
  // needs it; one listed that no step runs costs a worker's time only. Default: none.
  virtual std::vector<StepShape> shapes(const ServeOptions& /*options*/) const { return {}; }
};

// Every registered scheduler.
const Registry<Scheduler>& schedulers();

// Replays `log` through the named scheduler: one record per request, checked for conservation
// (check_conservation, metrics.hpp) before it is returned. InputError, before any step, for an
// unknown scheduler, an empty log or options the scheduler cannot run.
ServeResult serve(const packing::RequestLog& log, std::string_view scheduler, const StepCost& cost,
                  const ServeOptions& options);

// The overload line's capacity: the requests per second `scheduler` completes on this log's
// requests when they all wait from the start (every arrival moved to the first one), i.e.
// (served + truncated) / the makespan of that backlogged replay. Batching schedulers batch
// most when backlogged, so this is the most this chip serves this mix at.
double backlogged_capacity(const packing::RequestLog& log, std::string_view scheduler, const StepCost& cost,
                           const ServeOptions& options);

// Checks shared by every scheduler: the KV budget is given, the bucket lists it needs exist.
void validate_common(const ServeOptions& options);
// InputError unless one slot of `decode` holds a full context of L tokens within the KV budget
// and L leaves room for a prompt token and a generated one.
void validate_decode_shape(const Shape& decode, const ServeOptions& options);

}  // namespace systolic::serving
