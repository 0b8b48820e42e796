// The instruction list: blocks that never move, indexing across them, copy on write.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "models/isa/program.hpp"

namespace test_program {

using namespace systolic;

Instruction numbered(int layer) {
  Instruction i;
  i.op = VpuOp{VectorKind::add, layer, 1};
  i.layer = layer;
  i.waits.push_back({layer % 7, static_cast<uint64_t>(layer)});
  return i;
}

TEST_CASE("an instruction list holds its instructions in order across blocks", "[program]") {
  const size_t n = 2 * InstructionList::kBlock + 3;  // two full blocks and part of a third
  InstructionList list;
  std::vector<Instruction> expected;
  for (size_t k = 0; k < n; ++k) {
    list.push_back(numbered(static_cast<int>(k)));
    expected.push_back(numbered(static_cast<int>(k)));
  }
  REQUIRE(list.size() == n);
  CHECK(list[InstructionList::kBlock - 1].layer == static_cast<int>(InstructionList::kBlock) - 1);
  CHECK(list[InstructionList::kBlock].layer == static_cast<int>(InstructionList::kBlock));
  CHECK(list.back().layer == static_cast<int>(n) - 1);
  CHECK(std::equal(list.begin(), list.end(), expected.begin(), expected.end()));
  CHECK(list.end() - list.begin() == static_cast<std::ptrdiff_t>(n));
  CHECK(list.to_vector() == expected);
  CHECK(InstructionList(expected) == list);
  CHECK_THROWS_AS(list.at(n), std::out_of_range);
}

TEST_CASE("a full block's instructions stay where they are while the list grows", "[program]") {
  InstructionList list;
  for (int k = 0; k < static_cast<int>(InstructionList::kBlock); ++k) list.push_back(numbered(k));
  const Instruction* first = &list[0];
  const Instruction* second_block = nullptr;
  for (int k = static_cast<int>(InstructionList::kBlock); k < 3 * static_cast<int>(InstructionList::kBlock); ++k) {
    list.push_back(numbered(k));
    if (k == static_cast<int>(InstructionList::kBlock)) second_block = &list[InstructionList::kBlock];
  }
  CHECK(&list[0] == first);  // a vector would have moved it (and held up to twice the bytes)
  CHECK(&list[InstructionList::kBlock] == second_block);  // reserved whole when it began
}

TEST_CASE("copies of an instruction list share it until one changes", "[program]") {
  InstructionList a;
  for (int k = 0; k < 5; ++k) a.push_back(numbered(k));
  InstructionList b = a;
  CHECK(b.shares(a));
  b.push_back(numbered(5));
  CHECK_FALSE(b.shares(a));
  CHECK(a.size() == 5);
  CHECK(b.size() == 6);
  CHECK(a != b);
  InstructionList c = a;
  c.push_back(numbered(5));
  CHECK(c == b);  // equal, not shared
  CHECK_FALSE(c.shares(b));
  CHECK(InstructionList{}.empty());
  CHECK(InstructionList{} == InstructionList(std::vector<Instruction>{}));
}

}  // namespace test_program
