#pragma once
// A chip's forwarding side of the ICI: a chunk that crosses this chip on its way to another is
// booked onto its next link here, by this chip, when the chunk's head gets here.
//
// Why each hop is booked where the link leaves, not by the sender all at once: a link is
// reserved first come first served in call order (models/ici/ici_network.hpp), and chunks of
// different chips meet on a link once messages cross several. Booked by their senders, which
// chunk goes first would be the order the kernel runs the senders, which differs between chips
// that otherwise run alike (and between simulating every chip and one per class,
// models/system/symmetry.hpp). Here every link is booked only by the chip it leaves: its ICI
// engine books the first hops of its own messages (models/ici/ici_engine.hpp), and its router
// the chunks passing through, those due at one time in an order fixed by the chunks (the
// direction they came in from, ...), never by chip ids; the router is an SC_METHOD, which
// SystemC runs before the engines (SC_THREADs) of a delta. Booked as soon as it can be, a chunk
// passing through competes on equal terms with the engine's own, which the engine books ahead
// of time (up to a quantum); booked only when its head arrived, it would queue behind every
// chunk the engine had booked by then. So a
// link's reservations are the same whichever chips run beside it, as a chip's HBM writes are
// (models/ici/ici_port.hpp).
//
// With one chip simulated per class (translations of a torus only) a chunk that reaches chip t
// is handed to the router of t's representative, which books the same hop on the image of the
// link under that translation: the representative's links carry exactly what every link of
// their orbit carries.
#include <systemc>

#include <cstdint>
#include <queue>
#include <utility>
#include <vector>

#include "models/ici/ici_network.hpp"
#include "models/ici/ici_port.hpp"

namespace systolic {

struct IciFabric;

// What the chunks of one message share on their way.
struct IciTransit {
  std::vector<int> route;  // the sender's route (Topology::route): links of its own frame
  // Each port it lands on and the message's handle there (IciFabric::for_each_landing).
  std::vector<std::pair<IciPort*, uint32_t>> landings;
  uint64_t dst_addr = 0;
  // Told when each chunk of a message over several links arrives (counted in its `pending`
  // by the sender); nullptr for a message over one link, whose sender knows at once.
  SendReceipt* receipt = nullptr;
};

class IciRouter : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(IciRouter);
  IciRouter(const sc_core::sc_module_name& name, int chip, IciFabric& fabric);

  // A chunk of `bytes` at `offset` of `transit`'s message has been booked on `link`, hop
  // `hop` of its route, over `booked`: it goes on to the router of the chip the link enters,
  // or, after the last hop, lands (each port, and the sender's receipt, told its arrival).
  static void pass_on(IciFabric& fabric, const IciTransit& transit, size_t hop, int link,
                      IciNetwork::Hop booked, uint64_t offset, uint64_t bytes);

 private:
  struct Item {
    uint64_t due = 0;             // when it is booked: just after its hop before was
    uint64_t head = 0, tail = 0;  // the head reaches this chip; the tail cannot leave before
    int from = 0;                 // the direction it came from: the link's dim * 2 + (- ? 1 : 0)
    uint64_t bytes = 0, offset = 0;
    uint32_t hop = 0;  // the hop of the route to book here
    const IciTransit* transit = nullptr;
  };
  struct Later {  // the priority queue's order: the latest last
    bool operator()(const Item& a, const Item& b) const;
  };

  void arrive(const Item& item);
  void forward();  // the SC_METHOD: books every chunk due now, in Later's order

  int chip_;
  IciFabric& fabric_;
  std::priority_queue<Item, std::vector<Item>, Later> due_;
  sc_core::sc_event wake_;
};

}  // namespace systolic
