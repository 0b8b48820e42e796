#pragma once
// The MXU as a SystemC engine: a thin wrapper that hands each matmul instruction to its core
// and advances simulated time by the returned duration, so the kernel stays out of the
// per-cycle loop even in the exact model.
#include <memory>

#include "models/chip/engine.hpp"
#include "models/mxu/mxu_core.hpp"

namespace systolic {

class MxuEngine : public Engine {
 public:
  MxuEngine(const sc_core::sc_module_name& name, int index, std::vector<Instruction> stream,
            SemaphoreBank& semaphores, std::unique_ptr<MxuCore> core, uint64_t seed);

  uint64_t macs_issued() const { return macs_issued_; }

 protected:
  void execute(const Instruction& instruction) override;

 private:
  std::unique_ptr<MxuCore> core_;
  uint64_t seed_;
  uint64_t macs_issued_ = 0;
};

}  // namespace systolic
