// A chip's own order: engines due at one time wake in rank order (models/engine/wake_order.hpp)
// and an ICI port writes what arrives at one time in an order fixed by the chunks
// (models/ici/ici_port.hpp), whatever order the kernel or the senders call them in. Simulating
// one chip per class is exact because of both (docs/interconnect.md, "Scale").
#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "fixtures.hpp"
#include "models/common/sim_context.hpp"
#include "models/engine/wake_order.hpp"
#include "models/hbm/hbm_core.hpp"
#include "models/ici/ici_port.hpp"

namespace test_chip_order {

using namespace systolic;

namespace {

constexpr uint64_t kNs = 1000;  // ps per ns at the default 1000 MHz core clock

// A thread that runs `body` once.
class Process : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Process);
  Process(const sc_core::sc_module_name& name, std::function<void()> body)
      : sc_module(name), body_(std::move(body)) {
    SC_THREAD(run);
  }

 private:
  void run() { body_(); }
  std::function<void()> body_;
};

struct Landed {
  std::vector<uint64_t> signalled;  // per semaphore: when it reached 1
  HbmStats hbm;
  uint64_t told = 0, landed = 0;  // when the sender heard both had landed, and when they had
};

// Two one-chunk messages, on semaphores 0 and 1, both arriving at 1000 ns: 256 B at address 0
// and at address 256 (the other bank). `b_first` announces and sends the second one first.
Landed two_arrivals(bool b_first, HbmTiming timing) {
  FreshContext context;
  HbmCore hbm(testing::tiny_hbm(), 1000.0, timing);
  SemaphoreBank semaphores(2);
  IciPort port("port", hbm, semaphores);
  Landed out;
  out.signalled.assign(2, 0);
  std::vector<std::unique_ptr<Process>> procs;
  SendReceipt receipt;
  procs.push_back(std::make_unique<Process>("sender", [&] {
    std::vector<std::pair<int, uint64_t>> messages = {{0, 0}, {1, 256}};
    if (b_first) std::swap(messages[0], messages[1]);
    for (const auto& [sem, addr] : messages)
      port.arrive(port.expect(sem, 1, true, receipt), 1000 * kNs, addr, 256);
    // The sender learns when both have landed once the last has arrived.
    while (receipt.pending > 0) sc_core::wait(receipt.done);
    out.told = sc_core::sc_time_stamp().value();
  }));
  for (int sem = 0; sem < 2; ++sem)
    procs.push_back(std::make_unique<Process>(sem == 0 ? "waits0" : "waits1", [&, sem] {
      semaphores.wait_until(sem, 1);
      out.signalled[static_cast<size_t>(sem)] = sc_core::sc_time_stamp().value();
    }));
  sc_core::sc_start();
  out.hbm = hbm.stats();
  out.landed = receipt.landed;
  return out;
}

}  // namespace

TEST_CASE("A chip's engines due at one time wake in rank order, whatever order they slept in", "[symmetry]") {
  FreshContext context;
  WakeOrder order("order");
  std::vector<std::pair<uint64_t, int>> woke;  // (ns, rank) as they run
  std::vector<sc_core::sc_event> events(3);
  std::vector<std::unique_ptr<Process>> procs;
  // Built (and so first run) as ranks 2, 0, 1; all three are due at 10 ns, rank 1 after a
  // stop at 5 ns; rank 2 is due again at 20 ns with rank 0.
  const std::vector<std::pair<int, std::vector<uint64_t>>> plan = {
      {2, {10, 20}}, {0, {10, 20}}, {1, {5, 10}}};
  for (const auto& p : plan) {
    const int rank = p.first;
    const std::vector<uint64_t> times = p.second;
    procs.push_back(std::make_unique<Process>(("r" + std::to_string(rank)).c_str(), [&, rank, times] {
      for (uint64_t t : times) {
        order.wait_until(t * kNs, rank, events[static_cast<size_t>(rank)]);
        woke.emplace_back(sc_core::sc_time_stamp().value() / kNs, rank);
      }
    }));
  }
  sc_core::sc_start();
  const std::vector<std::pair<uint64_t, int>> expected = {{5, 1},  {10, 0}, {10, 1},
                                                          {10, 2}, {20, 0}, {20, 2}};
  CHECK(woke == expected);
}

TEST_CASE("An ICI port writes chunks when they arrive, in their own order, and signals once written",
          "[symmetry][ici]") {
  const Landed a = two_arrivals(false, HbmTiming::modelled);
  const Landed b = two_arrivals(true, HbmTiming::modelled);
  // By hand: both banks closed; address 0 first (the lower address): ACT at 1000 ns, data
  // tRCD + tCL = 17 ns later for 256 B / 8 B per ns = 32 ns; address 256's data follows on the
  // bus. Each message's semaphore is signalled when its last byte is written.
  CHECK(a.signalled == std::vector<uint64_t>{(1000 + 17 + 32) * kNs, (1000 + 17 + 64) * kNs});
  CHECK(b.signalled == a.signalled);
  CHECK(a.told == 1000 * kNs);
  CHECK(a.landed == a.signalled[1]);
  CHECK(b.hbm == a.hbm);
  CHECK(a.hbm.bytes_written == 512);
  CHECK(a.hbm.row_misses == 2);
  // Untimed memory: a message lands when it arrives, its bytes still counted.
  const Landed ideal = two_arrivals(true, HbmTiming::ideal);
  CHECK(ideal.signalled == std::vector<uint64_t>{1000 * kNs, 1000 * kNs});
  CHECK(ideal.hbm.bytes_written == 512);
}

}  // namespace test_chip_order
