// none: one item per lane, zero-padded (the baseline every other packer is measured against).
#include "sim/packing/bin_packer.hpp"

namespace systolic::packing {
namespace {

class NoPacking final : public BinPacker {
 public:
  std::vector<Lane> pack(const std::vector<const Item*>& order, int64_t) const override {
    std::vector<Lane> lanes(order.size());
    for (size_t i = 0; i < order.size(); ++i) append(lanes[i], *order[i]);
    return lanes;
  }
};

}  // namespace

const Registration<BinPacker> registration{"none", 10, "one request (or chunk) per lane, zero-padded", NoPacking{}};

}  // namespace systolic::packing
