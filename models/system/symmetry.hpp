#pragma once
// Which chips of a system evolve identically, so that one chip per class is simulated
// (docs/interconnect.md, "Scale"). A symmetry is a relabelling σ of the chips that maps the
// system onto itself: chip σ(c) runs chip c's program with every message to chip d sent to
// σ(d) instead (and nothing else changed: sizes, semaphores, waits, and with a timed memory
// system the HBM addresses, which the collectives place rank-relative), over the image of the
// link c used. Then chip σ(c)'s inputs are the images of chip c's, so the two run the same
// instructions at the same times, and their records, counters and links agree. The classes are the orbits of
// the symmetries found; the smallest chip of each is its representative, the one simulated.
//
// Candidates (each checked on every chip, and kept only if it holds): one step along the ring
// order (Topology::ring_order: the ring collectives' order), one step along each wrapped
// dimension, and the reflection of each dimension. With messages over several links, chunks of
// different chips meet on a link; each link is booked by the chip it leaves, the chunks passing
// through in an order of directions (models/ici/ici_router.hpp), which a translation keeps and
// a mirror does not: then only translations are candidates (and steps along two dimensions at
// once, which keep the parity all-to-all's ties follow), and a chunk reaching chip t is booked
// by t's representative on the image of its link, so a representative's links carry what each
// link of their orbit carries. A mesh has no translations, and without hop latency a router
// would book in the same instant as the engines: every chip then.
// With a timed memory system, what shares a chip's HBM must do so in the same order on every
// chip of a class. Two things make it so by construction: a chip writes what it receives into
// its own HBM itself, at arrival, in an order fixed by the chunks (models/ici/ici_port.hpp),
// and a chip of a system wakes its engines in an order of its own
// (models/engine/wake_order.hpp). This check adds the rest: the HBM addresses are compared, and
// no class is formed where two chips would write the same bytes of one chip at once under one
// semaphore (the port could tell their chunks apart only by the order they were sent in).
// Where any of this fails, or no candidate holds, every chip is its own class and `limit` says
// why.
// Plain C++, no SystemC.
#include <string>
#include <vector>

#include "models/ici/topology.hpp"
#include "models/isa/program.hpp"

namespace systolic {

// A relabelling of the chips and, for the links messages use, of the links.
struct ChipSymmetry {
  std::string name;       // "ring+1", "x+1", "mirror y": how it was found
  std::vector<int> chip;  // chip c -> σ(c)
  std::vector<int> link;  // link l -> σ(l) for the links messages cross, -1 for the others
  // σ moves every chip by one offset; with messages over several links `link` then maps every
  // link (a representative's router books on the images of links its messages never cross).
  bool translation = false;
};

struct ChipClasses {
  std::vector<int> representative;  // per chip: the chip of its class that is simulated
  // Per chip: the chip of its class it was reached from and the symmetry that maps that chip
  // to it (-1 at a representative), so g_s, which maps the representative to chip s, is a
  // product of symmetries.
  std::vector<int> parent, via;
  std::vector<ChipSymmetry> symmetries;
  std::string limit;  // why chips are not merged further ("" when the symmetries explain all)

  int chips() const { return static_cast<int>(representative.size()); }
  bool simulated(int chip) const { return representative[static_cast<size_t>(chip)] == chip; }
  std::vector<int> simulated_chips() const;
  // g_s(x): where chip x (of the representative's frame) sits in chip s's, and the same for a
  // link the representative's messages cross.
  int image(int s, int x) const;
  int image_link(int s, int link) const;
};

struct SymmetryRules {
  bool memory_timed = true;  // memory.ideal false: HBM addresses matter
  // ici.link_latency_ns > 0: a chunk reaches the next chip after it left this one, so the
  // routers (models/ici/ici_router.hpp) book each time's chunks in an order of their own.
  bool hop_latency = true;
};

// Every chip its own class, for `why` (e.g. the option that asked for it).
ChipClasses every_chip(int chips, std::string why);

// The classes of the system `topology` wires, chip c running *programs[c]. Programs it cannot
// compare (a message to no chip of the system) leave every chip its own class, so the system
// check reports them as before.
ChipClasses chip_classes(const Topology& topology, const std::vector<const Program*>& programs,
                         const SymmetryRules& rules);

}  // namespace systolic
