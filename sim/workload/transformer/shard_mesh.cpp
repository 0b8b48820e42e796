#include "sim/workload/transformer/shard_mesh.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <utility>

#include "models/common/error.hpp"
#include "models/common/suggest.hpp"
#include "models/ici/ici_config.hpp"

namespace systolic::transformer {
namespace {

constexpr char kTorusAxes[] = "xyz";
constexpr int64_t kMaxDegree = 65536;

[[noreturn]] void bad(const std::string& text, const std::string& why) {
  throw InputError(fmt::format("--mesh '{}': {}", text, why));
}

int64_t degree_of(const std::string& text, const std::string& key, const std::string& value) {
  int64_t d = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), d);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || d < 1 || d > kMaxDegree)
    bad(text, fmt::format("{}={}: expected a degree, an integer in [1, {}]", key, value, kMaxDegree));
  return d;
}

std::vector<size_t> torus_axes_of(const std::string& text, const std::string& key,
                                  const std::string& letters) {
  std::vector<size_t> axes;
  for (char c : letters) {
    const char* at = std::find(kTorusAxes, kTorusAxes + 3, c);
    if (at == kTorusAxes + 3 || std::find(axes.begin(), axes.end(), at - kTorusAxes) != axes.end())
      bad(text,
          fmt::format("{}@{}: expected distinct torus axes among x, y, z (e.g. {}@xy)", key, letters, key));
    axes.push_back(static_cast<size_t>(at - kTorusAxes));
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

using AxisDims = std::array<std::vector<size_t>, kMeshAxes>;  // per mesh axis: torus dimensions

// Whether `taken` (each axis's whole torus dimensions, in order) gives every axis its degree and
// every @ axis exactly the dimensions it names (of those longer than one chip).
bool fits_whole(const MeshSpec& spec, const std::vector<int64_t>& dims, const AxisDims& taken) {
  for (size_t a = 0; a < kMeshAxes; ++a) {
    int64_t product = 1;
    for (size_t d : taken[a]) product *= dims[d];
    if (product != spec.degree[a]) return false;
    if (spec.torus_axes[a].empty()) continue;
    std::vector<size_t> named;
    for (size_t d : spec.torus_axes[a])
      if (dims[d] > 1) named.push_back(d);
    if (named != taken[a]) return false;
  }
  return true;
}

// Whole torus lines, the default placement (docs/interconnect.md, section 11): every dimension
// longer than one chip goes whole to one axis, each axis's dimensions multiply to its degree (an
// @ axis: exactly the ones it names). Of all such assignments (3^dimensions of them), the one
// that gives tp the fewest dimensions, then the lowest, then pp, then dp the same way: tp's rings
// the wrapped lines, a pipeline's stages next to each other along its lines (dp sends nothing in
// a forward step). nullopt when none exists, e.g. a degree that is no product of whole
// dimensions, or an @ axis the system does not have (the tiling names that error).
std::optional<std::array<std::vector<int64_t>, kMeshAxes>> whole_lines(const MeshSpec& spec,
                                                                       const std::vector<int64_t>& dims) {
  for (const auto& named : spec.torus_axes)
    for (size_t d : named)
      if (d >= dims.size()) return std::nullopt;
  std::vector<size_t> open;  // the dimensions to hand out
  for (size_t d = 0; d < dims.size(); ++d)
    if (dims[d] > 1) open.push_back(d);
  constexpr std::array<MeshAxis, kMeshAxes> kPreference{MeshAxis::tp, MeshAxis::pp, MeshAxis::dp};
  using Rank = std::vector<std::pair<size_t, std::vector<size_t>>>;  // per preferred axis: count, dims
  std::optional<Rank> best_rank;
  AxisDims best;
  std::vector<size_t> owner(open.size(), 0);  // owner[i]: the axis of open[i]; counts in base 3
  for (bool more = true; more;) {
    AxisDims taken;
    for (size_t i = 0; i < open.size(); ++i) taken[owner[i]].push_back(open[i]);
    if (fits_whole(spec, dims, taken)) {
      Rank rank;
      for (MeshAxis a : kPreference)
        rank.emplace_back(taken[static_cast<size_t>(a)].size(), taken[static_cast<size_t>(a)]);
      if (!best_rank || rank < *best_rank) {
        best_rank = std::move(rank);
        best = taken;
      }
    }
    more = false;
    for (size_t i = 0; i < owner.size() && !more; ++i) more = (owner[i] = (owner[i] + 1) % kMeshAxes) != 0;
  }
  if (!best_rank) return std::nullopt;
  std::array<std::vector<int64_t>, kMeshAxes> factors;
  for (size_t a = 0; a < kMeshAxes; ++a) {
    factors[a].assign(dims.size(), 1);
    for (size_t d : best[a]) factors[a][d] = dims[d];
  }
  return factors;
}

}  // namespace

MeshSpec parse_mesh(const std::string& text) {
  MeshSpec spec;
  spec.text = text;
  if (text.empty()) bad(text, "expected degrees such as dp=4,tp=8 (keys tp, dp, pp, ep)");
  std::vector<std::string> seen;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    at = comma + 1;
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    if (eq == std::string::npos) bad(text, fmt::format("'{}': expected KEY=DEGREE, e.g. tp=8", item));
    const std::vector<std::string> keys{"tp", "dp", "pp", "ep"};
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      bad(text, fmt::format("unknown key '{}': expected tp, dp, pp or ep{}", key, did_you_mean(key, keys)));
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      bad(text, fmt::format("key '{}' given twice", key));
    seen.push_back(key);
    const std::string value = item.substr(eq + 1);
    const size_t sign = value.find('@');
    const int64_t degree = degree_of(text, key, value.substr(0, sign));
    if (key == "ep") {
      if (sign != std::string::npos) bad(text, "ep folds over the chips of dp x tp: it takes no @axes");
      spec.ep = degree;
      continue;
    }
    const size_t axis = static_cast<size_t>(*kMeshAxisNames.parse(key));
    spec.degree[axis] = degree;
    if (sign != std::string::npos) spec.torus_axes[axis] = torus_axes_of(text, key, value.substr(sign + 1));
  }
  return spec;
}

MeshLayout::MeshLayout(MeshSpec spec, const Topology& system) : spec_(std::move(spec)), system_(system) {
  const auto& dims = system.dims();
  int64_t product = 1;
  for (int64_t d : spec_.degree) product *= d;
  if (product != system.chips())
    bad(spec_.text, fmt::format("tp x dp x pp = {}, expected the system's chip count {} (ici.dims {})",
                                product, system.chips(), dims_text(dims)));
  const int64_t stage = spec_.of(MeshAxis::tp) * spec_.of(MeshAxis::dp);
  if (stage % spec_.ep != 0)
    bad(spec_.text,
        fmt::format("ep={} does not divide dp x tp = {}, the chips of a pipeline stage the experts "
                    "fold over (expected a divisor of it)",
                    spec_.ep, stage));
  if (auto lines = whole_lines(spec_, dims)) {
    factors_ = std::move(*lines);
    return;
  }
  // No whole-line placement: each axis in turn, tp first, the sub-grid of its size that tiles
  // what the axes before it left.
  std::vector<int64_t> left = dims;
  for (size_t a = 0; a < kMeshAxes; ++a) {
    for (size_t axis : spec_.torus_axes[a])
      if (axis >= dims.size())
        bad(spec_.text,
            fmt::format("{}: the system has no {} axis (ici.dims {})",
                        kMeshAxisNames.name(static_cast<MeshAxis>(a)), kTorusAxes[axis], dims_text(dims)));
    const auto slice = tiling_slice(left, spec_.degree[a], spec_.torus_axes[a]);
    if (!slice) {
      const std::string on = spec_.torus_axes[a].empty() ? "" : fmt::format(" on its @ axes");
      bad(spec_.text,
          fmt::format("{} groups of {} chips do not tile {} (what is left of ici.dims {} after the axes "
                      "before it){}: expected a degree whose groups tile it",
                      kMeshAxisNames.name(static_cast<MeshAxis>(a)), spec_.degree[a], dims_text(left),
                      dims_text(dims), on));
    }
    factors_[a] = *slice;
    for (size_t d = 0; d < left.size(); ++d) left[d] /= (*slice)[d];
  }
}

std::array<std::vector<int64_t>, kMeshAxes> MeshLayout::digits(int chip) const {
  std::array<std::vector<int64_t>, kMeshAxes> out;
  std::vector<int64_t> c = system_.coords(chip);
  for (size_t a = 0; a < kMeshAxes; ++a)
    for (size_t d = 0; d < c.size(); ++d) {
      out[a].push_back(c[d] % factors_[a][d]);
      c[d] /= factors_[a][d];
    }
  return out;
}

int MeshLayout::chip_of(const std::array<std::vector<int64_t>, kMeshAxes>& digits) const {
  std::vector<int64_t> c(system_.dims().size(), 0);
  for (size_t d = 0; d < c.size(); ++d)
    for (size_t a = kMeshAxes; a-- > 0;) c[d] = c[d] * factors_[a][d] + digits[a][d];
  return system_.chip_at(c);
}

int64_t MeshLayout::rank(MeshAxis a, int chip) const {
  const auto all = digits(chip);
  const auto& digit = all[static_cast<size_t>(a)];
  const auto& f = factors(a);
  int64_t r = 0;
  for (size_t d = f.size(); d-- > 0;) r = r * f[d] + digit[d];
  return r;
}

ChipGroup MeshLayout::group(MeshAxis a, int chip) const {
  const size_t axis = static_cast<size_t>(a);
  const auto& f = factors_[axis];
  ChipGroup g;
  g.dims = f;
  g.wraps = system_.wraps();
  for (size_t d = 0; d < f.size(); ++d)
    if (f[d] > 1 && f[d] != system_.dims()[d]) g.wraps = false;
  auto at = digits(chip);
  for (int64_t r = 0; r < spec_.degree[axis]; ++r) {
    int64_t left = r;
    for (size_t d = 0; d < f.size(); ++d) {
      at[axis][d] = left % f[d];
      left /= f[d];
    }
    g.members.push_back(chip_of(at));
  }
  return g;
}

int64_t MeshLayout::stage_rank(int chip) const {
  return rank(MeshAxis::tp, chip) + spec_.of(MeshAxis::tp) * rank(MeshAxis::dp, chip);
}

int64_t MeshLayout::expert_rank(int chip) const { return stage_rank(chip) % spec_.ep; }

ChipGroup MeshLayout::expert_group(int chip) const {
  const int64_t tp = spec_.of(MeshAxis::tp), first = stage_rank(chip) / spec_.ep * spec_.ep;
  const ChipGroup tp_group = group(MeshAxis::tp, chip);
  ChipGroup g;
  g.dims = {spec_.ep};
  for (int64_t s = first; s < first + spec_.ep; ++s) {
    // The chip of stage rank s: tp rank s % tp in the tp group of dp rank s / tp.
    const ChipGroup dp_group = group(MeshAxis::dp, tp_group.members[static_cast<size_t>(s % tp)]);
    g.members.push_back(dp_group.members[static_cast<size_t>(s / tp)]);
  }
  return g;
}

MeshPlace MeshLayout::place(int chip, int64_t micro_batches) const {
  MeshPlace p;
  p.text = spec_.text;
  p.micro_batches = micro_batches;
  for (size_t a = 0; a < kMeshAxes; ++a) {
    const auto axis = static_cast<MeshAxis>(a);
    p.axes.push_back({std::string(kMeshAxisNames.name(axis)), spec_.degree[a], rank(axis, chip),
                      group(axis, chip), factors_[a]});
  }
  if (spec_.ep > 1) p.axes.push_back({"ep", spec_.ep, expert_rank(chip), expert_group(chip), {}});
  return p;
}

}  // namespace systolic::transformer
