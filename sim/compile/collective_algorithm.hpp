#pragma once
// Collective algorithms (config key `ici.algorithm`, docs/interconnect.md): how the compiler
// lowers reduce_scatter, all_gather and all_reduce to one chip's ICI messages and VPU adds.
// Each algorithm is one file in this folder that registers itself; all_to_all is sent
// directly whatever the algorithm (sim/compile/collective.cpp).
#include <optional>
#include <string>
#include <vector>

#include "models/common/registry.hpp"
#include "models/ici/ici_config.hpp"
#include "models/ici/topology.hpp"
#include "sim/compile/collective.hpp"

namespace systolic::compile_detail {

// One ring phase (reduce-scatter or all-gather) over `members`, in each direction of `dirs`
// at once, each direction carrying its share of `bytes`.
struct RingPhase {
  std::vector<int> members;  // ring order
  size_t rank = 0;           // this chip's position
  uint64_t bytes = 0;        // data on the ring (reduce-scatter: the input; all-gather: the result)
  bool reduce = false;       // reduce-scatter (adds on the VPU) or all-gather
  bool after_reduce = false; // all-gather of the blocks a reduce-scatter just left
  std::vector<int> dirs;     // +1: to the next member; -1: to the previous
  // A decomposed reduce-scatter (sim/compile/overlap.hpp): what this chip's own partial sums of
  // the block each step needs are waiting for, step by step (step 0: the block sent first;
  // step s: the block the s-th receipt is added to). Empty: all of it before step 0.
  std::vector<std::vector<SemWait>> own_blocks;
};

// The chips of one collective as the algorithms see them: a grid of their own (a mesh axis's
// group, or the whole system) and where this chip sits in it.
struct GroupView {
  std::vector<int> members;  // chip ids by position in `grid`
  Topology grid;
  int local = 0;  // this chip's position
  // Chip ids of grid positions.
  std::vector<int> chips_of(const std::vector<int>& positions) const {
    std::vector<int> out;
    out.reserve(positions.size());
    for (int p : positions) out.push_back(members[static_cast<size_t>(p)]);
    return out;
  }
};

// What an algorithm builds with: ring phases on one chip's program (sim/compile/collective.cpp).
class RingEmitter {
 public:
  virtual ~RingEmitter() = default;
  // Emits the phase's steps; the first waits for `before`; returns the conditions that hold
  // once this chip has all it receives in the phase.
  virtual std::vector<SemWait> ring(const RingPhase& phase, std::vector<SemWait> before) = 0;
};

// The group a collective runs over, as its algorithm sees it from `chip`: c.group, or the
// whole system on its own topology when that is empty. Throws std::logic_error when `chip` is
// not a member.
GroupView group_view(const CollectiveWork& c, const IciConfig& ici, int chip);

// One instance of a collective on one chip, as the algorithm sees it.
struct CollectiveStep {
  const CollectiveWork& work;  // kind and bytes (never all_to_all or permute here)
  const GroupView& group;
};

class CollectiveAlgorithm {
 public:
  virtual ~CollectiveAlgorithm() = default;
  // The interconnect, when the algorithm cannot run on it ("a ring topology": the config check
  // names the algorithms that can), or nullopt.
  virtual std::optional<std::string> unsupported(const IciConfig& ici) const { return std::nullopt; }
  // Emits the instance's phases with `emit`, the first waiting for `ready`; returns what a
  // consumer of its result waits for.
  virtual std::vector<SemWait> lower(RingEmitter& emit, const CollectiveStep& step,
                                     std::vector<SemWait> ready) const = 0;
  // The one ring phase this algorithm lowers an all-gather or a reduce-scatter of `step` to
  // (bytes, reduce and after_reduce left for the caller), or nullopt when it takes several
  // (the torus algorithm on a group of more than one dimension): what a decomposed collective
  // runs on (sim/compile/overlap.hpp).
  virtual std::optional<RingPhase> single_ring(const CollectiveStep& step) const = 0;
};

using CollectiveRegistry = Registry<CollectiveAlgorithm>;

// Reduce-scatter then all-gather (as the kind asks) on the ring through every chip of the
// group (Topology::ring_order of its grid), in each direction of `dirs` at once: ring is {+1}, bidir_ring
// {+1, -1} (sim/compile/collective.cpp).
class WholeRing final : public CollectiveAlgorithm {
 public:
  explicit WholeRing(std::vector<int> dirs) : dirs_(std::move(dirs)) {}
  std::vector<SemWait> lower(RingEmitter& emit, const CollectiveStep& step,
                             std::vector<SemWait> ready) const override;
  std::optional<RingPhase> single_ring(const CollectiveStep& step) const override;

 private:
  std::vector<int> dirs_;
};

}  // namespace systolic::compile_detail
