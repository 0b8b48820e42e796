#pragma once
// An engine (MXU, and later VPU, DMA, ICI) is an SC_THREAD that walks its instruction stream:
// wait for the instruction's semaphores, execute it (the subclass advances simulated time),
// signal. Every instruction leaves a record; statistics and timelines are built from those.
#include <systemc>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/engine/semaphores.hpp"
#include "models/engine/wake_order.hpp"
#include "models/isa/program.hpp"

namespace systolic {

// An engine's instructions: a copy of its program's stream, which shares the program's list
// (InstructionList is copy on write), so a program is never held twice; tests pass a list
// built for one engine.
using InstructionStream = InstructionList;

struct InstrRecord {
  int index = 0;        // position in the stream
  int layer = -1;
  uint64_t ready = 0;   // cycle the engine reached it (previous instruction done)
  uint64_t start = 0;   // cycle its semaphore waits were satisfied
  uint64_t end = 0;     // cycle it completed
};

class Engine : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Engine);
  Engine(const sc_core::sc_module_name& name, EngineId id, InstructionStream stream,
         SemaphoreBank& semaphores);

  EngineId id() const { return id_; }
  const InstructionStream& stream() const { return stream_; }
  const std::vector<InstrRecord>& records() const { return records_; }
  // The records, handed over once the run has ended (the engine keeps none, so finished() is
  // false after): the result takes them without a copy, which would be the run's largest
  // block after the program (32 B per instruction).
  std::vector<InstrRecord> take_records() { return std::move(records_); }
  bool finished() const { return records_.size() == stream().size(); }
  // For deadlock reports: "instruction 3 (layer conv2) waits for sem 'done' >= 5, it is 4".
  std::string blocked_reason() const;
  // For waveforms (sc_trace): true while executing an instruction / waiting on its semaphores.
  const bool& busy_flag() const { return busy_; }
  const bool& stalled_flag() const { return stalled_; }
  // The chip's wake order (models/engine/wake_order.hpp), this engine's rank in it. Without
  // one (an engine on its own, in tests) a timed wait is the kernel's.
  void join(WakeOrder& order, int rank) {
    order_ = &order;
    rank_ = rank;
  }

 protected:
  // Performs the instruction, advancing simulated time with sleep().
  virtual void execute(const Instruction& instruction) = 0;
  // Waits `ps` of simulated time (nothing for 0), woken in the chip's wake order.
  void sleep(uint64_t ps);

 private:
  void run();

  EngineId id_;
  InstructionStream stream_;
  SemaphoreBank& semaphores_;
  std::vector<InstrRecord> records_;
  bool busy_ = false, stalled_ = false;
  WakeOrder* order_ = nullptr;
  int rank_ = 0;
  sc_core::sc_event woken_;
};

}  // namespace systolic
