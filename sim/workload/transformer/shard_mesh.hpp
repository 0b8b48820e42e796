#pragma once
// Parallelism meshes (docs/interconnect.md, "Parallelism meshes"). The chips of a system split
// into tensor- (tp), data- (dp) and pipeline-parallel (pp) groups, tp x dp x pp = chips; the
// routed experts of a MoE model fold over ep chips of a stage's dp x tp ones (Megatron-Core's
// "MoE parallel folding"; DeepSeek-V3's own deployment is attention TP4 x DP8 with experts
// EP32). Where the degrees allow, each axis takes whole torus dimensions (whole lines: tp's
// rings wrap, a pipeline's stages sit one hop apart): of every assignment of the dimensions to
// the axes whose sizes multiply to the degrees, the one giving tp the fewest and lowest, then
// pp, then dp. Where none exists, each axis takes a sub-grid of the torus that tiles what the
// axes before it left (tiling_slice, as `pack --tp` carves replicas), tp first: a tp group is a
// block of neighbouring chips, a dp group strides over the tp groups, a pp group over both. A
// degree followed by "@" and torus axes ("tp=8@xy") keeps its groups on those axes either way.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/common/names.hpp"
#include "models/ici/topology.hpp"
#include "sim/workload/workload.hpp"

namespace systolic::transformer {

// The axes that partition the chips, innermost first.
enum class MeshAxis { tp, dp, pp };
inline constexpr auto kMeshAxisNames =
    name_table<MeshAxis>({{MeshAxis::tp, "tp"}, {MeshAxis::dp, "dp"}, {MeshAxis::pp, "pp"}});
inline constexpr size_t kMeshAxes = 3;

struct MeshSpec {
  std::array<int64_t, kMeshAxes> degree{1, 1, 1};
  std::array<std::vector<size_t>, kMeshAxes> torus_axes;  // "@xy": 0, 1; empty: any of them
  int64_t ep = 1;                                         // experts over ep chips of a stage
  std::string text;                                       // as given
  int64_t of(MeshAxis a) const { return degree[static_cast<size_t>(a)]; }
};

// "dp=4,tp=8@xy,ep=8" (keys tp, dp, pp, ep in any order, each at most once; missing ones 1).
// Throws InputError naming --mesh for an unknown or repeated key (with did-you-mean), a degree
// that is not an integer in [1, 65536], a torus axis other than x, y, z, or ep with "@".
MeshSpec parse_mesh(const std::string& text);

// A mesh laid on a system's torus.
class MeshLayout {
 public:
  // Throws InputError naming --mesh when tp x dp x pp is not the system's chip count, ep does
  // not divide dp x tp, or (with no whole-line placement) an axis's groups do not tile what the
  // axes before it left of the torus (on its @ axes).
  MeshLayout(MeshSpec spec, const Topology& system);

  const MeshSpec& spec() const { return spec_; }
  // The axis's share of each torus dimension (their product: its degree).
  const std::vector<int64_t>& factors(MeshAxis a) const { return factors_[static_cast<size_t>(a)]; }
  int64_t rank(MeshAxis a, int chip) const;
  // The chips of `chip`'s group along `a`, by rank, as a grid of the axis's factors; it wraps
  // when the system does and it spans every torus dimension it uses whole.
  ChipGroup group(MeshAxis a, int chip) const;
  // The experts' group: ep consecutive chips of the stage's dp x tp (tp fastest).
  int64_t expert_rank(int chip) const;
  ChipGroup expert_group(int chip) const;
  // What a report says of `chip`'s place: every axis with a degree above 1, and ep.
  MeshPlace place(int chip, int64_t micro_batches) const;

 private:
  std::array<std::vector<int64_t>, kMeshAxes> digits(int chip) const;
  int chip_of(const std::array<std::vector<int64_t>, kMeshAxes>& digits) const;
  int64_t stage_rank(int chip) const;  // tp rank + tp x dp rank

  MeshSpec spec_;
  Topology system_;
  std::array<std::vector<int64_t>, kMeshAxes> factors_;
};

}  // namespace systolic::transformer
