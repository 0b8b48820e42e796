// torus: dimension by dimension, a bidirectional ring along each line of the torus:
// reduce-scatter along x, then y, ... (each on what the one before left), all-gather back in
// reverse order. Only neighbours talk, so no message crosses more than one hop
// (docs/interconnect.md).
#include <algorithm>

#include "sim/compile/collective_algorithm.hpp"

namespace systolic::compile_detail {
namespace {

class Torus final : public CollectiveAlgorithm {
 public:
  std::optional<std::string> unsupported(const IciConfig& ici) const override {
    if (ici.topology == IciTopologyKind::ring) return std::string("a ring topology");
    return std::nullopt;
  }

  std::vector<SemWait> lower(RingEmitter& emit, const CollectiveStep& step,
                             std::vector<SemWait> done) const override {
    const CollectiveWork& c = step.work;
    const auto& dims = step.group.grid.dims();
    const auto line_rank = [&](size_t d) { return line_of(step, d); };
    uint64_t bytes = c.bytes;
    if (c.kind != CollectiveKind::all_gather)
      for (size_t d = 0; d < dims.size(); ++d) {
        const auto [line, r] = line_rank(d);
        done = emit.ring({line, r, bytes, true, false, {+1, -1}, {}}, done);
        bytes /= static_cast<uint64_t>(dims[d]);
      }
    if (c.kind == CollectiveKind::reduce_scatter) return done;
    if (c.kind == CollectiveKind::all_gather)
      bytes = c.bytes / static_cast<uint64_t>(step.group.grid.chips());
    for (size_t d = dims.size(); d-- > 0;) {
      bytes *= static_cast<uint64_t>(dims[d]);
      const auto [line, r] = line_rank(d);
      done = emit.ring({line, r, bytes, false, c.kind == CollectiveKind::all_reduce, {+1, -1}, {}}, done);
    }
    return done;
  }

  // A group that spans one dimension is a single line: its ring.
  std::optional<RingPhase> single_ring(const CollectiveStep& step) const override {
    const auto& dims = step.group.grid.dims();
    std::optional<size_t> only;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] < 2) continue;
      if (only) return std::nullopt;
      only = d;
    }
    if (!only) return std::nullopt;
    const auto [line, r] = line_of(step, *only);
    return RingPhase{line, r, 0, false, false, {+1, -1}, {}};
  }

 private:
  // The chips of this chip's line along `d` (in order) and its position on it.
  static std::pair<std::vector<int>, size_t> line_of(const CollectiveStep& step, size_t d) {
    const auto line = step.group.grid.line(step.group.local, d);
    const size_t r =
        static_cast<size_t>(std::find(line.begin(), line.end(), step.group.local) - line.begin());
    return {step.group.chips_of(line), r};
  }
};

}  // namespace

const Registration<CollectiveAlgorithm> registration{"torus", 30,
                                                     "dimension by dimension, a bidirectional ring per torus line", Torus{}};
}  // namespace systolic::compile_detail
