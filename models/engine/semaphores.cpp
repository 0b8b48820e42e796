#include "models/engine/semaphores.hpp"

namespace systolic {

SemaphoreBank::SemaphoreBank(size_t count) : values_(count, 0) {
  for (size_t i = 0; i < count; ++i) changed_.emplace_back();
}

void SemaphoreBank::wait_until(int sem, uint64_t at_least) {
  const auto i = static_cast<size_t>(sem);
  while (values_.at(i) < at_least) sc_core::wait(changed_[i]);
}

void SemaphoreBank::signal(int sem) {
  const auto i = static_cast<size_t>(sem);
  ++values_.at(i);
  changed_[i].notify(sc_core::SC_ZERO_TIME);
}

}  // namespace systolic
