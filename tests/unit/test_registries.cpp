// The registries (models/common/registry.hpp) against the source tree: every implementation
// file in a registry's folder registered exactly one implementation, so none was forgotten
// or dropped by the linker (CMakeLists.txt links the core as a whole archive), and every
// registry answers a misspelt name with the choices and a did-you-mean.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "models/common/error.hpp"
#include "models/common/names.hpp"
#include "models/hbm/dram_standard.hpp"
#include "models/mxu/dataflow.hpp"
#include "sim/compile/collective_algorithm.hpp"
#include "sim/packing/bin_packer.hpp"
#include "sim/serving/router.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/workload/reader.hpp"

namespace test_registries {

using namespace systolic;

namespace {

// .cpp files in `folder` (relative to the source tree): one implementation each.
size_t implementation_files(const std::string& folder) {
  size_t n = 0;
  for (const auto& f : std::filesystem::directory_iterator(std::string(SYSTOLIC_SOURCE_DIR) + "/" + folder))
    n += f.path().extension() == ".cpp";
  return n;
}

template <class Interface>
void check_registry(const std::string& folder, const std::string& misspelt, const std::string& meant) {
  const auto& registry = Registry<Interface>::instance();
  INFO(folder << ": " << registry.choices());
  CHECK(registry.entries().size() == implementation_files(folder));
  for (const auto& e : registry.entries()) {
    CHECK(registry.find(e.name) == &e);
    CHECK(&registry.get(e.name, "x") == e.impl.get());
    CHECK_FALSE(e.description.empty());
  }
  CHECK_THROWS_WITH(registry.get(misspelt, "key 'k'"),
                    "key 'k' '" + misspelt + "': expected one of " + registry.choices() + " (did you mean '" + meant +
                        "'?)");
}

}  // namespace

TEST_CASE("Every implementation file registers itself once", "[registry]") {
  check_registry<packing::BinPacker>("sim/packing/packers", "best_fitt", "best-fit");
  check_registry<compile_detail::CollectiveAlgorithm>("sim/compile/collectives", "tors", "torus");
  check_registry<DramStandard>("models/hbm/standards", "hbm3", "hbm2");
  check_registry<WorkloadReader>("sim/workload/readers", "scalesin", "scalesim");
  check_registry<Dataflow>("models/mxu/dataflow", "wss", "ws");
  check_registry<serving::Scheduler>("sim/serving/schedulers", "continous", "continuous");
  check_registry<serving::Router>("sim/serving/routers", "round-robbin", "round-robin");
}

TEST_CASE("Registries list their implementations in rank order", "[registry]") {
  CHECK(dataflow_choices() == "ws, os, is");
  CHECK(serving::schedulers().choices() == "static, continuous, chunked, disaggregated, dynamic");
  CHECK(serving::routers().choices() == "round-robin, least-loaded");
}

TEST_CASE("A registry lists by rank, then name, and refuses a name twice", "[registry]") {
  struct Thing {
    int id = 0;
  };
  Registry<Thing> r;
  r.add({"b", 2, "second", std::make_shared<Thing>(Thing{2})});
  r.add({"a", 2, "second too, sorted by name", std::make_shared<Thing>(Thing{3})});
  r.add({"z", 1, "first", std::make_shared<Thing>(Thing{1}), {"zed"}});
  CHECK(r.choices() == "z, a, b");
  CHECK(r.get("zed", "k").id == 1);
  CHECK(r.described() == "z (first), a (second too, sorted by name), b (second)");
  CHECK_THROWS_AS(r.add({"zed", 3, "clash", std::make_shared<Thing>()}), std::logic_error);
  CHECK_THROWS_WITH(r.get("purple", "flag --x"), "flag --x 'purple': expected one of z, a, b");
}

TEST_CASE("A name table parses exactly, lists in enum order and suggests", "[names]") {
  enum class Colour { red, green, blue };
  constexpr auto names = name_table<Colour>({{Colour::red, "red"}, {Colour::green, "green"}, {Colour::blue, "blue"}});
  static_assert(names.dense());
  CHECK_THROWS_AS(name_table<Colour>({{Colour::green, "green"}, {Colour::red, "red"}}), std::logic_error);  // at run time; a compile error for a constexpr table
  CHECK(names.name(Colour::blue) == "blue");
  CHECK(names.parse("green") == Colour::green);
  CHECK_FALSE(names.parse("Green"));
  CHECK(names.choices() == "red, green, blue");
  CHECK(names.choices(" | ") == "red | green | blue");
  CHECK(names.suggest("gren") == " (did you mean 'green'?)");
  CHECK(names.suggest("purple").empty());
}

}  // namespace test_registries
