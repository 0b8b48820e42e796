// The DMA request loop alone (DmaCore and HbmCore, no SystemC kernel): two engines stream a
// reader's and a writer's descriptors through one HBM as DmaEngine would, a quantum at a time.
// It prints, per case, the requests booked, the time per request and a hash of every
// descriptor's completion time: an A/B of two builds is the same hash and a shorter time, and
// under valgrind --tool=callgrind a count of instructions that the machine's load does not move
// (docs/performance.md, "Real memory against ideal memory"). Build: cmake --build build
// --target dma_loop_bench; run: build/tests/dma_loop_bench [MiB per case, default 1024].
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "models/dma/dma_core.hpp"
#include "models/hbm/hbm_config.hpp"
#include "models/sram/scratchpad.hpp"

namespace {

using namespace systolic;

struct Case {
  const char* name;
  HbmConfig hbm;
  double mhz;
  bool strided;  // the writer's runs: 1 KiB rows 22,016 B apart, else one dense run
};

// HBM -> the weight buffer, 4 MiB at a time.
DmaDescriptor weight_read(uint64_t at, uint64_t bytes) {
  return DmaDescriptor::linear(DmaEndpoint::hbm(at), DmaEndpoint::sram(1, 0), bytes);
}

// VMEM -> HBM: dense, or as Llama-2-7B prefill writes an activation's column block (a 1 KiB
// run per row of an 11,008-wide bf16 matrix; every other run straddles an interleave block).
DmaDescriptor activation_write(uint64_t at, uint64_t bytes, bool strided) {
  if (!strided) return DmaDescriptor::linear(DmaEndpoint::sram(0, 0), DmaEndpoint::hbm(at), bytes);
  DmaDescriptor d;
  d.src = DmaEndpoint::sram(0, 0, {1, 1024, 0});
  d.dst = DmaEndpoint::hbm(at, {1, 22016, 0});
  d.shape = {1024, bytes / 1024, 1};
  return d;
}

void run(const Case& c, uint64_t mib) {
  HbmConfig config = c.hbm;
  config.capacity_bytes = 64ull << 30;  // room for both streams whatever the preset
  HbmCore hbm(config, c.mhz);
  Scratchpad vmem({"vmem", 16ull << 20, 32, 1024, 2});
  Scratchpad weights({"weights", 128ull << 20, 64, 1024, 2});
  DmaCore reader(hbm, {&vmem, &weights}, DmaConfig{});
  DmaCore writer(hbm, {&vmem, &weights}, DmaConfig{});
  const uint64_t step = 4ull << 20, quantum_ps = 1000000;
  uint64_t now = 0, horizon = 0, hash = 14695981039346656037ull;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t read = 0; read < (mib << 20); read += step) {
    reader.start(weight_read(read, step), now);
    writer.start(activation_write((32ull << 30) + read / 4, step / 8, c.strided), now);
    while (!reader.issued_all() || !writer.issued_all()) {
      horizon += quantum_ps;
      reader.issue_until(horizon);
      writer.issue_until(horizon);
    }
    for (uint64_t done : {reader.completion_ps(), writer.completion_ps()})
      hash = (hash ^ done) * 1099511628211ull;
    now = std::max(reader.completion_ps(), writer.completion_ps());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const uint64_t requests = hbm.stats().requests;
  fmt::print("{:<34} {:>10} requests {:>7.2f} ns each  completions {:016x}\n", c.name, requests,
             seconds * 1e9 / static_cast<double>(requests), hash);
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
  if (mib == 0) {
    fmt::print(stderr, "dma_loop_bench: expected MiB per case, a positive integer, got '{}'\n", argv[1]);
    return 2;
  }
  const std::vector<Case> cases = {
      {"hbm2 (tpu-v4i), dense writes", hbm2_tpu_v4i(), 1050.0, false},
      {"hbm2 (tpu-v4i), strided writes", hbm2_tpu_v4i(), 1050.0, true},
      {"hbm2e (tpu-v5p, 96 pseudo-channels)", hbm2e_tpu_v5p(), 1750.0, true},
  };
  for (const Case& c : cases) run(c, mib);
}
