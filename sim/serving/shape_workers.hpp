#pragma once
// Bucket shapes simulated ahead of the serving replay, in worker processes (docs/serving.md,
// "Speed"). A replay asks for one shape's cost at a time, in its own order, and a large shape
// takes seconds to compile and simulate; the shapes a scheduler may run are known before it
// starts, so other processes simulate them meanwhile, in parallel, each in its own SystemC
// context. Each shape is taken by exactly one process (a compare-and-swap on a slot in memory
// shared by all of them), and its cost comes back as the bytes the simulator computed, so a
// replay reads the same numbers as when it simulates every shape itself.
//
// A shape a worker could not simulate (an error, or the worker died) is simulated again by the
// replay's own process when the replay asks for it, so it fails there with the error it would
// have had anyway; a shape nobody asks for costs only a worker's time.
#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "sim/serving/step_cost.hpp"

namespace systolic {

struct ShapeCost {
  double seconds = 0;
  double energy_pj = 0;
  double utilization = 0;
  double attention_share = 0;  // attention MACs / all MACs issued
};

class ShapeWorkers {
 public:
  using Simulate = std::function<ShapeCost(const serving::StepShape&)>;
  // Forks `workers` processes (>= 1) that take `shapes` in order, each the next one nobody has
  // taken, until none is left. `simulate` runs in them and, for what they leave, here.
  // std::system_error when the shared memory, the pipe or a fork cannot be had.
  ShapeWorkers(std::vector<serving::StepShape> shapes, int workers, Simulate simulate);
  ~ShapeWorkers();  // stops the workers still running (SIGKILL) and reaps them
  ShapeWorkers(const ShapeWorkers&) = delete;
  ShapeWorkers& operator=(const ShapeWorkers&) = delete;

  // The cost of `shape` when it is one of the shapes: a worker's result (waited for), or
  // simulated here when no worker has it (while waiting for a worker, this process simulates
  // the next shape nobody has taken, on-demand ones left to the workers). nullopt when it is not one of the
  // shapes.
  std::optional<ShapeCost> cost(const serving::StepShape& shape);

 private:
  struct Slot;
  [[noreturn]] void work();        // a worker's life
  bool take(size_t i, pid_t by);   // compare-and-swap: open -> taken by `by`
  void run_here(size_t i);         // simulates slot i in this process (a shape nobody needs yet)
  void wait_for_worker(size_t i);  // until slot i is done, failed, or its worker is gone
  bool worker_gone(pid_t pid);

  std::vector<serving::StepShape> shapes_;
  Simulate simulate_;
  Slot* slots_ = nullptr;  // shared with the workers
  size_t bytes_ = 0;
  int wake_[2] = {-1, -1};  // a worker writes a byte to wake_[1] each time it finishes a shape
  std::vector<pid_t> workers_;
  std::vector<pid_t> reaped_;
};

}  // namespace systolic
