#include "sim/serving/work_table.hpp"

#include "sim/common/add_members.hpp"
#include "sim/serving/engine.hpp"

namespace systolic::serving {
namespace {

auto key_of(const ShapeWork& w) {
  return std::make_tuple(static_cast<int>(w.phase), w.varlen, w.shape.length, w.shape.batch);
}

void add_counts(ShapeWork& into, const ShapeWork& w) {
  add_members(into, w, &ShapeWork::runs, &ShapeWork::requests, &ShapeWork::segments,
              &ShapeWork::useful_tokens, &ShapeWork::pad_tokens, &ShapeWork::cells, &ShapeWork::seconds,
              &ShapeWork::energy_pj);
}

}  // namespace

void WorkTable::add(const ShapeWork& part, const std::vector<Work>& works) {
  const Key key = key_of(part);
  const auto phase = static_cast<size_t>(part.phase);
  if (!last_[phase] || last_key_[phase] != key) {
    auto [it, fresh] = rows_.try_emplace(key);
    if (fresh) {
      it->second.work.phase = part.phase;
      it->second.work.varlen = part.varlen;
      it->second.work.shape = part.shape;
      it->second.work.runtime_shape = part.runtime_shape;
      it->second.seen.assign(requests_, false);
    }
    last_[phase] = &it->second;
    last_key_[phase] = key;
  }
  Row& row = *last_[phase];
  ShapeWork counted = part;
  counted.requests = 0;
  for (const Work& w : works) {
    const auto id = static_cast<size_t>(w.request);
    if (row.seen[id]) continue;
    row.seen[id] = true;
    ++counted.requests;
  }
  add_counts(row.work, counted);
}

std::vector<ShapeWork> WorkTable::rows() const {
  std::vector<ShapeWork> out;
  out.reserve(rows_.size());
  for (const auto& [key, row] : rows_) out.push_back(row.work);
  return out;
}

std::vector<ShapeWork> merge_rows(const std::vector<ShapeWork>& a, const std::vector<ShapeWork>& b) {
  std::map<decltype(key_of(ShapeWork{})), ShapeWork> rows;
  for (const auto* table : {&a, &b})
    for (const ShapeWork& w : *table) {
      auto [it, fresh] = rows.try_emplace(key_of(w), w);
      if (!fresh) add_counts(it->second, w);
    }
  std::vector<ShapeWork> out;
  for (auto& [key, w] : rows) out.push_back(w);
  return out;
}

}  // namespace systolic::serving
