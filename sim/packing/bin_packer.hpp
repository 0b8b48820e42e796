#pragma once
// The bin packers of a prefill window (docs/packing.md, "Packers"): the interface, its registry
// and the building blocks the packers share. Each packer is one file in sim/packing/packers/
// that registers itself (docs/architecture.md, "How to add a packer").
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/registry.hpp"
#include "sim/packing/packer.hpp"

namespace systolic::packing {

class BinPacker {
 public:
  virtual ~BinPacker() = default;
  // Packs `order` (the window's items in arrival order, each 1..lane_length tokens) into lanes
  // of `lane_length` tokens; lanes come back in the order they were opened.
  virtual std::vector<Lane> pack(const std::vector<const Item*>& order, int64_t lane_length) const = 0;
};

using PackerRegistry = Registry<BinPacker>;

// The registered name of the packer a user named (by name, short form or '_' for '-');
// InputError "<what> 'x': expected one of none, first-fit (ff), ... (did you mean ...)".
std::string packer_name(std::string_view name, const std::string& what);
// "none, first-fit (ff), ...": every packer with its short form, joined by `separator`.
std::string packer_choices(std::string_view separator);

// Building blocks of the packers.
// Appends `item` to `lane` after its last segment.
void append(Lane& lane, const Item& item);

}  // namespace systolic::packing
