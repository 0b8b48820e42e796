// The four packers: items of a window into lanes of one length (docs/packing.md, "Packers").
// first-fit uses a max segment tree over the lanes' free room, best-fit an ordered set, so a
// window of n items costs O(n log n) whatever its size.
#include <algorithm>
#include <set>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "sim/packing/packer.hpp"

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

void append(Lane& lane, const Item& item) {
  Segment s;
  s.request_id = item.request_id;
  s.offset = lane.used();
  s.tokens = item.tokens;
  s.chunk = item.chunk;
  s.chunks = item.chunks;
  s.request_offset = item.request_offset;
  lane.segments.push_back(s);
}

std::vector<Lane> first_fit(const std::vector<const Item*>& order, int64_t lane_length) {
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

std::vector<Lane> best_fit(const std::vector<const Item*>& order, int64_t lane_length) {
  std::vector<Lane> lanes;
  std::set<std::pair<int64_t, size_t>> room;  // (free room, lane): tightest, then oldest
  for (const Item* item : order) {
    auto it = room.lower_bound({item->tokens, 0});
    size_t k;
    int64_t left;
    if (it == room.end()) {
      k = lanes.size();
      lanes.emplace_back();
      left = lane_length;
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

}  // namespace

int64_t Lane::used() const {
  return segments.empty() ? 0 : segments.back().offset + segments.back().tokens;
}

std::vector<int64_t> Lane::cu_seqlens() const {
  std::vector<int64_t> cu{0};
  for (const Segment& s : segments) cu.push_back(s.offset + s.tokens);
  return cu;
}

std::vector<Lane> pack_lanes(const std::vector<Item>& items, int64_t lane_length, Packer packer) {
  if (lane_length < 1) throw std::invalid_argument("pack_lanes: lane_length must be positive");
  std::vector<const Item*> order;
  order.reserve(items.size());
  for (const Item& item : items) {
    if (item.tokens < 1 || item.tokens > lane_length)
      throw std::invalid_argument(fmt::format(
          "pack_lanes: request {} has {} tokens, not in 1..{}", item.request_id, item.tokens,
          lane_length));
    order.push_back(&item);
  }
  switch (packer) {
    case Packer::none: {
      std::vector<Lane> lanes(items.size());
      for (size_t i = 0; i < items.size(); ++i) append(lanes[i], items[i]);
      return lanes;
    }
    case Packer::first_fit:
      return first_fit(order, lane_length);
    case Packer::first_fit_decreasing:
      std::stable_sort(order.begin(), order.end(),
                       [](const Item* a, const Item* b) { return a->tokens > b->tokens; });
      return first_fit(order, lane_length);
    case Packer::best_fit:
      return best_fit(order, lane_length);
  }
  throw std::invalid_argument("pack_lanes: unknown packer");
}

}  // namespace systolic::packing
