// best-fit: items in arrival order, each into the lane it leaves with the least room (ties: the
// oldest lane), else a new lane. An ordered set of (room, lane) makes a window O(n log n).
#include <set>
#include <utility>

#include "sim/packing/bin_packer.hpp"

namespace systolic::packing {
namespace {

class BestFit final : public BinPacker {
 public:
  std::vector<Lane> pack(const std::vector<const Item*>& order, int64_t lane_length) const override {
    std::vector<Lane> lanes;
    std::set<std::pair<int64_t, size_t>> room;  // (free room, lane): tightest, then oldest
    for (const Item* item : order) {
      auto it = room.lower_bound({item->tokens, 0});
      size_t k = lanes.size();
      int64_t left = lane_length;
      if (it == room.end()) {
        lanes.emplace_back();
      } else {
        k = it->second;
        left = it->first;
        room.erase(it);
      }
      append(lanes[k], *item);
      room.insert({left - item->tokens, k});
    }
    return lanes;
  }
};

}  // namespace

const Registration<BinPacker> registration{"best-fit", 40, "arrival order; each item into the lane it leaves tightest",
                                           BestFit{}, {"bf", "best_fit"}};

}  // namespace systolic::packing
