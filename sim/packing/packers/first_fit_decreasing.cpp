// first-fit-decreasing: items sorted longest first (stable, so ties keep arrival order), then
// the registered first-fit packer. Lanes are within 11/9 OPT + 6/9 of the fewest possible
// (Dosa 2007).
#include <algorithm>

#include "sim/packing/bin_packer.hpp"

namespace systolic::packing {
namespace {

class FirstFitDecreasing final : public BinPacker {
 public:
  std::vector<Lane> pack(const std::vector<const Item*>& order, int64_t lane_length) const override {
    std::vector<const Item*> longest_first = order;
    std::stable_sort(longest_first.begin(), longest_first.end(),
                     [](const Item* a, const Item* b) { return a->tokens > b->tokens; });
    static const BinPacker& first_fit = PackerRegistry::instance().get("first-fit", "packer");
    return first_fit.pack(longest_first, lane_length);
  }
};

}  // namespace

const Registration<BinPacker> registration{"first-fit-decreasing", 30, "longest first, then first-fit",
                                           FirstFitDecreasing{}, {"ffd", "first_fit_decreasing"}};

}  // namespace systolic::packing
