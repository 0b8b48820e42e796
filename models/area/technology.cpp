// The technology table. Each figure's source is beside it and in docs/area.md; where a figure
// could not be retrieved and checked while writing this, the comment says so.
#include "models/area/technology.hpp"

#include <array>

namespace systolic {
namespace {

static_assert(kTechNodeNames.dense());

// logic_area: 45 -> 28 nm the ideal (28/45)^2 = 0.387 (assumption: a full shrink); 28 -> 16 nm
// x 0.5 (TSMC's "2x density" claim for 16FF+ over 28HPM; not re-checked here); 16 -> 7 nm x
// 28.88 / 91.20 MTr/mm^2 (TSMC 16FF+ and N7 logic densities as WikiChip tabulates them);
// 7 -> 5 nm / 1.8 (TSMC's N5 claim, quoted by Angstronomics, "The truth of TSMC 5nm", 2022).
// sram_bitcell_um2: Intel 45 nm 0.346 (IEDM 2007); TSMC 28 nm 0.127, 16FF+ 0.074, N7 0.027,
// N5 0.021 (the last as quoted from TSMC's IEDM 2022 paper by WikiChip, "Did we just witness
// the death of SRAM"; the others as widely tabulated, not re-checked here).
// dynamic_energy: approximate C*V^2 steps (45 nm 1.0, 28 nm 0.6, 16 nm 0.4, 7 nm 0.3, 5 nm 0.25).
// Stillmaker & Baas, "Scaling equations ... from 180 nm to 7 nm", Integration 58 (2017), fit
// this trend per device; their table's coefficients could not be retrieved here, so these
// rounded steps are an assumption accurate to perhaps +-30 %.
// wafer_usd: Khan & Mann, "AI Chips: What They Are and Why They Matter", CSET 2020, appendix
// (foundry sale price per 300 mm wafer: 40 nm 2274, 28 nm 2891, 16/12 nm 3984, 7 nm 9346,
// 5 nm 16988 USD); 45 nm takes the 40 nm price.
constexpr std::array<NodeFactors, 5> kTable = {{
    {1.0, 0.346, 1.0, 2274.0},                                  // 45 nm
    {0.387, 0.127, 0.6, 2891.0},                                // 28 nm
    {0.387 * 0.5, 0.074, 0.4, 3984.0},                          // 16 nm
    {0.387 * 0.5 * 28.88 / 91.20, 0.027, 0.3, 9346.0},          // 7 nm
    {0.387 * 0.5 * 28.88 / 91.20 / 1.8, 0.021, 0.25, 16988.0},  // 5 nm
}};

}  // namespace

const NodeFactors& node_factors(TechNode node) { return kTable[static_cast<size_t>(node)]; }

}  // namespace systolic
