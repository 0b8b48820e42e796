#pragma once
// A chip's ICI engine: a SystemC engine whose instructions send messages to other chips
// (models/isa/program.hpp IciOp). It books each message chunk by chunk on its own HBM (with a
// real memory system: the read) and on the shared network (models/ici/ici_network.hpp), and
// hands each chunk, with its arrival time, to the destination chip's port
// (models/ici/ici_port.hpp; a message over several links books its first link here and the
// others at the chips it crosses, models/ici/ici_router.hpp), which writes it into that chip's HBM and
// signals the destination's semaphore once the message's last byte is written. An instruction completes when
// all its messages have landed (been written). Like the DMA engines it books at most a quantum ahead of
// simulated time before yielding, so messages of different chips on one link interleave.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/engine/engine.hpp"
#include "models/hbm/hbm_core.hpp"
#include "models/ici/ici_network.hpp"
#include "models/ici/ici_port.hpp"
#include "models/ici/ici_router.hpp"

namespace systolic {

// What the engines of all chips share: the network, and each chip's semaphores and HBM
// (indexed by chip). Owned by the system; filled in as its chips are built.
struct IciFabric {
  explicit IciFabric(IciNetwork net) : network(std::move(net)) {}
  IciNetwork network;
  std::vector<SemaphoreBank*> semaphores;
  std::vector<HbmCore*> hbms;
  std::vector<IciPort*> ports;
  // Per chip, the router that books the chunks reaching it (with one chip per class, its
  // representative's: models/ici/ici_router.hpp).
  std::vector<IciRouter*> routers;
  std::vector<const std::vector<std::string>*> semaphore_names;  // each chip's program's
  // The id of `name` in chip `chip`'s program, or -1.
  int semaphore_id(int chip, const std::string& name) const;

  // With one chip simulated per class (models/system/symmetry.hpp) a simulated chip's message
  // stands for the same message of every chip of its class: `mirrored` lists, per (sender,
  // destination), the simulated chips those land on and how many land on each, at the same
  // time. Empty: every chip is simulated and a message lands on its destination.
  struct Landing {
    int chip = 0;
    int messages = 1;
  };
  std::map<std::pair<int, int>, std::vector<Landing>> mirrored;
  // Calls f(chip) once for each message that lands from `from`'s message to `to`.
  template <class F>
  void for_each_landing(int from, int to, F&& f) const {
    if (mirrored.empty()) return f(to);
    const auto it = mirrored.find({from, to});
    if (it == mirrored.end()) return;
    for (const Landing& at : it->second)
      for (int k = 0; k < at.messages; ++k) f(at.chip);
  }
};

// nullopt when chip `chip` can send every message of `op` (a destination outside the system or
// the chip itself, a semaphore the destination does not declare, an HBM range past its
// capacity are refused), else what is wrong. Call once every chip of the fabric is registered.
std::optional<std::string> check_ici_op(const IciFabric& fabric, int chip, const IciOp& op);

struct IciStats {
  uint64_t messages = 0;
  uint64_t bytes_sent = 0;
  uint64_t chunks = 0;
};

class IciEngine : public Engine {
 public:
  IciEngine(const sc_core::sc_module_name& name, int chip, InstructionStream stream,
            SemaphoreBank& semaphores, IciFabric& fabric, uint64_t quantum_cycles);

  // check_ici_op for this engine's chip.
  std::optional<std::string> check(const IciOp& op) const { return check_ici_op(fabric_, chip_, op); }
  const IciStats& stats() const { return stats_; }

 protected:
  void execute(const Instruction& instruction) override;

 private:
  // One message of an instruction being sent, chunk by chunk.
  struct Flow {
    const IciCopy* copy;
    // Its route and where it lands (a message of a chip simulated for its class can land on
    // several chips, IciFabric::mirrored).
    IciTransit transit;
    uint64_t sent = 0;       // bytes booked so far
    uint64_t ready = 0;      // when the next chunk may be read and enter the network
    uint64_t prev_left = 0;  // when the chunk before the last one left the source's port
    uint64_t arrived = 0;    // when the last booked chunk arrived (over one link: known at once)
  };
  Flow start_flow(const IciCopy& c, uint64_t now);
  SendReceipt receipt_;  // the instruction being sent's landings (one send at a time)
  void send_chunk(Flow& f);

  int chip_;
  IciFabric& fabric_;
  uint64_t quantum_ps_;
  IciStats stats_;
};

}  // namespace systolic
