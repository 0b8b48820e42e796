// first-fit: items in the order given (arrival order), each into the first lane (in opening
// order) with room, else a new lane. A max segment tree over the lanes' free room finds that
// lane in O(log n), so a window of n items costs O(n log n) whatever its size.
#include <algorithm>

#include "sim/packing/bin_packer.hpp"

namespace systolic::packing {
namespace {

// Leftmost lane whose free room is >= need, over lanes 0..n-1 (unopened lanes have room 0).
class FirstFitTree {
 public:
  explicit FirstFitTree(size_t n) {
    size_ = 1;
    while (size_ < std::max<size_t>(n, 1)) size_ *= 2;
    tree_.assign(2 * size_, 0);
  }
  void set(size_t lane, int64_t room) {
    size_t i = lane + size_;
    tree_[i] = room;
    for (i /= 2; i >= 1; i /= 2) tree_[i] = std::max(tree_[2 * i], tree_[2 * i + 1]);
  }
  int64_t room(size_t lane) const { return tree_[lane + size_]; }
  // -1 when no lane has room.
  int64_t find(int64_t need) const {
    if (tree_[1] < need) return -1;
    size_t i = 1;
    while (i < size_) i = tree_[2 * i] >= need ? 2 * i : 2 * i + 1;
    return static_cast<int64_t>(i - size_);
  }

 private:
  size_t size_ = 1;
  std::vector<int64_t> tree_;
};

class FirstFit final : public BinPacker {
 public:
  std::vector<Lane> pack(const std::vector<const Item*>& order, int64_t lane_length) const override {
    std::vector<Lane> lanes;
    FirstFitTree tree(order.size());
    for (const Item* item : order) {
      int64_t k = tree.find(item->tokens);
      if (k < 0) {
        k = static_cast<int64_t>(lanes.size());
        lanes.emplace_back();
        tree.set(static_cast<size_t>(k), lane_length);
      }
      append(lanes[static_cast<size_t>(k)], *item);
      tree.set(static_cast<size_t>(k), tree.room(static_cast<size_t>(k)) - item->tokens);
    }
    return lanes;
  }
};

}  // namespace

const Registration<BinPacker> registration{"first-fit", 20, "arrival order; each item into the first lane with room",
                                           FirstFit{}, {"ff", "first_fit"}};

}  // namespace systolic::packing
