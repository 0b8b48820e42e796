// Lanes, and what the packers of sim/packing/packers/ share: pack_lanes (checks the items,
// then runs the registered packer the options name), append, and the packers' names.
#include <algorithm>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "models/common/suggest.hpp"
#include "sim/packing/bin_packer.hpp"

namespace systolic::packing {
namespace {

// "first-fit (ff)": a packer's name with its short form, the first alias.
std::string label(const PackerRegistry::Entry& e) {
  return e.aliases.empty() ? e.name : e.name + " (" + e.aliases.front() + ")";
}

}  // namespace

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

std::string packer_choices(std::string_view separator) {
  std::string choices;
  for (const auto& e : PackerRegistry::instance().entries())
    choices += (choices.empty() ? "" : std::string(separator)) + label(e);
  return choices;
}

std::string packer_name(std::string_view name, const std::string& what) {
  const auto& packers = PackerRegistry::instance();
  if (const auto* e = packers.find(name)) return e->name;
  throw InputError(fmt::format("{} '{}': expected one of {}{}", what, name, packer_choices(", "),
                               did_you_mean(name, packers.names())));
}

int64_t Lane::used() const {
  return segments.empty() ? 0 : segments.back().offset + segments.back().tokens;
}

std::vector<int64_t> Lane::cu_seqlens() const {
  std::vector<int64_t> cu{0};
  for (const Segment& s : segments) cu.push_back(s.offset + s.tokens);
  return cu;
}

std::vector<Lane> pack_lanes(const std::vector<Item>& items, int64_t lane_length, std::string_view packer) {
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
  return PackerRegistry::instance().get(packer, "packer").pack(order, lane_length);
}

}  // namespace systolic::packing
