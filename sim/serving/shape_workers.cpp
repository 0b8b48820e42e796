#include "sim/serving/shape_workers.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <new>
#include <type_traits>

namespace systolic {

// A shape's state: open, done, failed, or the pid of the process simulating it.
constexpr int32_t kOpen = 0, kDone = -1, kFailed = -2;
constexpr int kPollMs = 100;  // how often a waiting replay checks that the worker is still there

struct ShapeWorkers::Slot {
  std::atomic<int32_t> state{kOpen};
  ShapeCost cost;  // written before `state` becomes kDone
};
static_assert(std::atomic<int32_t>::is_always_lock_free, "slots are shared between processes");
static_assert(std::is_trivially_copyable_v<ShapeCost>, "costs cross processes as bytes");
static_assert(sizeof(pid_t) == sizeof(int32_t));

ShapeWorkers::ShapeWorkers(std::vector<serving::StepShape> shapes, int workers, Simulate simulate)
    : shapes_(std::move(shapes)), simulate_(std::move(simulate)) {
  // Without the shared memory or the pipe no worker starts: cost() then answers nullopt and the
  // caller simulates every shape itself, as without workers.
  bytes_ = sizeof(Slot) * std::max<size_t>(shapes_.size(), 1);
  void* memory = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return;
  if (pipe2(wake_, O_CLOEXEC) != 0) {
    munmap(memory, bytes_);
    return;
  }
  slots_ = static_cast<Slot*>(memory);
  for (size_t i = 0; i < shapes_.size(); ++i) new (&slots_[i]) Slot();
  std::fflush(nullptr);  // a worker must not write this process's buffered output a second time
  const pid_t parent = getpid();
  for (int w = 0; w < workers; ++w) {
    const pid_t pid = fork();
    if (pid < 0) break;  // fewer workers: this process simulates what they leave
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // a replay that dies takes its workers with it
      if (getppid() != parent) _exit(0);
      work();
    }
    workers_.push_back(pid);
  }
  close(wake_[1]);  // the read end sees EOF once every worker has gone
  wake_[1] = -1;
}

ShapeWorkers::~ShapeWorkers() {
  for (const pid_t pid : workers_)
    if (std::find(reaped_.begin(), reaped_.end(), pid) == reaped_.end()) kill(pid, SIGKILL);
  for (const pid_t pid : workers_)
    if (std::find(reaped_.begin(), reaped_.end(), pid) == reaped_.end()) waitpid(pid, nullptr, 0);
  if (wake_[0] >= 0) close(wake_[0]);
  if (slots_) munmap(slots_, bytes_);
}

// A worker: the shapes in order, each one nobody has taken; then it ends without running this
// process's exit handlers or destructors (they belong to the replay).
[[noreturn]] void ShapeWorkers::work() {
  close(wake_[0]);
  const pid_t me = getpid();
  for (size_t i = 0; i < shapes_.size(); ++i) {
    if (!take(i, me)) continue;
    int32_t result = kFailed;
    try {
      slots_[i].cost = simulate_(shapes_[i]);
      result = kDone;
    } catch (...) {  // the replay simulates it again if it needs it, and meets the error itself
    }
    slots_[i].state.store(result);
    const char byte = 1;
    if (write(wake_[1], &byte, 1) < 0) _exit(0);  // the replay has gone
  }
  _exit(0);
}

bool ShapeWorkers::take(size_t i, pid_t by) {
  int32_t open = kOpen;
  return slots_[i].state.compare_exchange_strong(open, by);
}

void ShapeWorkers::run_here(size_t i) {
  int32_t result = kFailed;
  try {
    slots_[i].cost = simulate_(shapes_[i]);
    result = kDone;
  } catch (...) {  // nobody asked for it yet; whoever does meets the error then
  }
  slots_[i].state.store(result);
}

bool ShapeWorkers::worker_gone(pid_t pid) {
  if (std::find(reaped_.begin(), reaped_.end(), pid) != reaped_.end()) return true;
  const pid_t r = waitpid(pid, nullptr, WNOHANG);
  if (r == pid || (r < 0 && errno == ECHILD)) {
    reaped_.push_back(pid);
    return true;
  }
  return false;
}

// Rather than idle while a worker simulates slot i, this process simulates the next shape
// nobody has taken that the replay surely asks for (not an on-demand one, which it may never
// want); with none left, it sleeps until a worker finishes one (or a moment passes).
void ShapeWorkers::wait_for_worker(size_t i) {
  const pid_t me = getpid();
  for (size_t j = 0; j < shapes_.size(); ++j)
    if (j != i && !shapes_[j].on_demand && take(j, me)) {
      run_here(j);
      return;
    }
  pollfd wake{wake_[0], POLLIN, 0};
  if (poll(&wake, 1, kPollMs) > 0) {
    char drain[64];
    if (read(wake_[0], drain, sizeof drain) == 0) poll(nullptr, 0, 1);  // EOF: the workers are exiting
  }
}

std::optional<ShapeCost> ShapeWorkers::cost(const serving::StepShape& shape) {
  if (!slots_) return std::nullopt;
  const auto it = std::find(shapes_.begin(), shapes_.end(), shape);
  if (it == shapes_.end()) return std::nullopt;
  const auto i = static_cast<size_t>(it - shapes_.begin());
  const pid_t me = getpid();
  for (;;) {
    int32_t s = slots_[i].state.load();
    if (s == kDone) return slots_[i].cost;
    if (s == kFailed || (s == kOpen && take(i, me))) break;
    if (s > 0 && worker_gone(s) && slots_[i].state.compare_exchange_strong(s, me)) break;
    if (s > 0) wait_for_worker(i);
  }
  // Nobody has it: simulated here, an error thrown here as without workers.
  try {
    slots_[i].cost = simulate_(shape);
  } catch (...) {  // marks the slot failed, then rethrows: the error the replay has without workers
    slots_[i].state.store(kFailed);
    throw;
  }
  slots_[i].state.store(kDone);
  return slots_[i].cost;
}

}  // namespace systolic
