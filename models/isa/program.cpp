#include "models/isa/program.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <utility>

namespace systolic {

// The comparisons below name every field. A field added to one of these structs changes its
// size on the platforms the project builds on (x86-64, 64-bit libstdc++): these fire there,
// so the new field joins its operator== (stream sharing and chip symmetry rely on them).
static_assert(sizeof(void*) != 8 || sizeof(MatmulOp) == 88, "MatmulOp changed: update operator==");
static_assert(sizeof(void*) != 8 || sizeof(IciCopy) == 72, "IciCopy changed: update operator==");
static_assert(sizeof(void*) != 8 || sizeof(Instruction) == 192, "Instruction changed: update operator==");
static_assert(sizeof(void*) != 8 || sizeof(LayerInfo) == 120, "LayerInfo changed: update operator==");
static_assert(sizeof(void*) != 8 || sizeof(DmaOp) == 112, "DmaOp changed: update operator==");
static_assert(sizeof(void*) != 8 || sizeof(VpuOp) == 40, "VpuOp changed: update operator==");
static_assert(sizeof(void*) != 8 || sizeof(Buffer) == 56, "Buffer changed: update operator==");
static_assert(sizeof(void*) != 8 || sizeof(SramRegion) == 32, "SramRegion changed: update operator==");

bool MatmulOp::operator==(const MatmulOp& o) const {
  return m == o.m && k == o.k && n == o.n && n_offset == o.n_offset && dtype == o.dtype &&
         m_offset == o.m_offset && instance == o.instance && a_dtype == o.a_dtype && b_dtype == o.b_dtype &&
         a_scale == o.a_scale && b_scale == o.b_scale;
}

bool IciCopy::operator==(const IciCopy& o) const {
  return to == o.to && bytes == o.bytes && recv_sem == o.recv_sem && tie == o.tie && via_hbm == o.via_hbm &&
         src_addr == o.src_addr && dst_addr == o.dst_addr;
}

bool Instruction::operator==(const Instruction& o) const {
  return op == o.op && layer == o.layer && waits == o.waits && signals == o.signals && frees == o.frees;
}

bool LayerInfo::operator==(const LayerInfo& o) const {
  return name == o.name && m == o.m && k == o.k && n == o.n && dtype == o.dtype && repeat == o.repeat &&
         useful_macs == o.useful_macs && source == o.source && kind == o.kind;
}

const Instruction& InstructionList::at(size_t i) const {
  if (i >= size()) throw std::out_of_range("instruction list: index past the end");
  return (*this)[i];
}

std::vector<Instruction> InstructionList::to_vector() const {
  return std::vector<Instruction>(begin(), end());
}

void InstructionList::push_back(Instruction i) {
  Blocks& b = own();
  // The first block grows as a vector does (a system of many chips holds many short streams, and
  // a block reserved whole is 0.8 MB each); once it is full the list is long, and each further
  // block is reserved whole, so it never moves.
  if ((b.size & (kBlock - 1)) == 0) {
    b.blocks.emplace_back();
    if (b.expected > b.size)
      b.blocks.back().reserve(std::min(kBlock, b.expected - b.size));
    else if (b.size > 0)
      b.blocks.back().reserve(kBlock);
  }
  b.blocks.back().push_back(std::move(i));
  ++b.size;
}

bool InstructionList::operator==(const InstructionList& o) const {
  return shares(o) || (size() == o.size() && std::equal(begin(), end(), o.begin()));
}

InstructionList::Blocks& InstructionList::own() {
  if (!data_)
    data_ = std::make_shared<Blocks>();
  else if (data_.use_count() > 1)
    data_ = std::make_shared<Blocks>(*data_);  // a copy's last block grows as a vector does
  return *data_;
}

std::string engine_name(EngineKind kind, int index) {
  return std::string(kEngineKindNames.name(kind)) + std::to_string(index);
}

std::string layer_kind_choices() {
  const auto names = kLayerKindNames.names();
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

}  // namespace systolic
