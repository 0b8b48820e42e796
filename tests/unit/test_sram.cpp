// SRAM scratchpads: port timing, byte counters, "does the tile fit" messages and validation.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "models/sram/scratchpad.hpp"

namespace test_sram {

using namespace systolic;

TEST_CASE("a scratchpad port moves its width per cycle", "[memory][sram]") {
  Scratchpad vmem({"vmem", 1 << 20, 8, 512, 2});
  CHECK(vmem.transfer_cycles(0) == 0);
  CHECK(vmem.transfer_cycles(1) == 1);
  CHECK(vmem.transfer_cycles(512) == 1);
  CHECK(vmem.transfer_cycles(1000) == 2);
  CHECK(vmem.transfer_cycles(1024) == 2);
}

TEST_CASE("ports are booked first come first served and bytes are counted", "[memory][sram]") {
  Scratchpad vmem({"vmem", 1 << 20, 8, 512, 2});
  // Two ports: the first two 1 KiB writes run side by side (2 cycles = 2000 ps), the third
  // waits for a port.
  CHECK(vmem.access(true, 1024, 0) == 2000);
  CHECK(vmem.access(true, 1024, 0) == 2000);
  CHECK(vmem.access(false, 1024, 0) == 4000);
  // A request that arrives later than a port frees starts when it arrives.
  CHECK(vmem.access(false, 512, 10000) == 11000);
  CHECK(vmem.bytes_written() == 2048);
  CHECK(vmem.bytes_read() == 1536);
  CHECK(vmem.port_busy_ps() == 7000);
  vmem.count_read(10);
  vmem.count_write(20);
  CHECK(vmem.bytes_read() == 1546);
  CHECK(vmem.bytes_written() == 2068);
}

TEST_CASE("a tile larger than the scratchpad is reported with the key and sizes", "[memory][sram]") {
  Scratchpad weights({"weights", 16 << 10, 4, 256, 2});
  CHECK_FALSE(weights.check_fits(16 << 10, "a tile"));
  const auto msg = weights.check_fits(32 << 10, "a 128x128 bf16 weight tile");
  REQUIRE(msg);
  CHECK(*msg ==
        "sram.weights_bytes = 16384 B (16 KiB) is smaller than a 128x128 bf16 weight tile "
        "(32768 B (32 KiB))");
  CHECK(weights.contains(0, 16 << 10));
  CHECK_FALSE(weights.contains(1, 16 << 10));
  CHECK_FALSE(weights.contains(UINT64_MAX, 2));
}

TEST_CASE("impossible scratchpad configs name their key", "[memory][sram]") {
  auto field_of = [](ScratchpadConfig c) { return c.validate() ? c.validate()->field : std::string("ok"); };
  CHECK(field_of({"vmem", 1 << 20, 8, 512, 2}) == "ok");
  CHECK(field_of({"vmem", 0, 8, 512, 2}) == "sram.vmem_bytes");
  CHECK(field_of({"vmem", 1000, 16, 512, 2}) == "sram.vmem_banks");  // 1000 B over 16 banks
  CHECK(field_of({"accumulators", 1 << 20, 0, 512, 2}) == "sram.accumulators_banks");
  CHECK(field_of({"vmem", 1 << 20, 8, 0, 2}) == "sram.vmem_port_bytes");
  CHECK(field_of({"vmem", 1 << 20, 8, 512, 0}) == "sram.vmem_ports");
  CHECK_THROWS_WITH(Scratchpad({"vmem", 0, 8, 512, 2}), Catch::Contains("sram.vmem_bytes"));
  for (const auto& c : tpu_v1_scratchpads()) CHECK(field_of(c) == "ok");
  for (const auto& c : tpu_v4i_scratchpads()) CHECK(field_of(c) == "ok");
  CHECK(format_bytes(24ull << 20) == "25165824 B (24 MiB)");
  CHECK(format_bytes(1000) == "1000 B");
}

}  // namespace test_sram
