#include "models/sram/scratchpad.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace systolic {

std::string format_bytes(uint64_t bytes) {
  static const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  std::string out = fmt::format("{} B", bytes);
  int u = -1;
  uint64_t v = bytes;
  while (v >= 1024 && v % 1024 == 0 && u < 3) {
    v /= 1024;
    ++u;
  }
  if (u >= 0) out += fmt::format(" ({} {})", v, units[u]);
  return out;
}

std::optional<ConfigIssue> ScratchpadConfig::validate() const {
  auto issue = [](std::string f, std::string e, uint64_t got) {
    return ConfigIssue{std::move(f), std::move(e), std::to_string(got)};
  };
  if (capacity_bytes == 0) return issue(key("bytes"), "an integer >= 1", capacity_bytes);
  if (banks == 0) return issue(key("banks"), "an integer >= 1", banks);
  if (capacity_bytes % banks != 0)
    return issue(key("banks"),
                 fmt::format("a divisor of {} = {}", key("bytes"), format_bytes(capacity_bytes)),
                 banks);
  if (port_bytes_per_cycle == 0) return issue(key("port_bytes"), "an integer >= 1", port_bytes_per_cycle);
  if (ports == 0) return issue(key("ports"), "an integer >= 1", ports);
  return std::nullopt;
}

Scratchpad::Scratchpad(const ScratchpadConfig& config)
    : config_(validated(config)), port_free_(config_.ports, 0) {
  const uint64_t width = config_.port_bytes_per_cycle;
  if ((width & (width - 1)) == 0) port_shift_ = __builtin_ctzll(width);
}

std::optional<std::string> Scratchpad::check_fits(uint64_t bytes, const std::string& what) const {
  if (bytes <= config_.capacity_bytes) return std::nullopt;
  return fmt::format("{} = {} is smaller than {} ({})", config_.key("bytes"),
                     format_bytes(config_.capacity_bytes), what, format_bytes(bytes));
}

// TPU v1 (Jouppi et al., ISCA 2017, Sections 2-3): 24 MiB Unified Buffer feeding the 256x256
// array one 256-byte int8 vector per cycle; 4 MiB of accumulators (4096 x 256 x 32 bit), written
// 256 x 4 B per cycle; a Weight FIFO four 64 KiB tiles deep, a tile shifted in over 256 cycles
// (256 B per cycle). Banks and port counts (one port in, one out) are assumptions.
std::vector<ScratchpadConfig> tpu_v1_scratchpads() {
  return {{"vmem", 24ull << 20, 32, 256, 2},
          {"weights", 256ull << 10, 4, 256, 2},
          {"accumulators", 4ull << 20, 16, 1024, 2}};
}

// TPU v4i (Jouppi et al., ISCA 2021, Table 1): 16 MiB VMEM and 128 MiB CMEM (used here as the
// weight buffer). Four 128x128 bf16 MXUs take 4 x 128 x 2 B = 1 KiB of activations per cycle.
// Accumulator size, banks and port widths are assumptions (4 MXUs x 128 cols x 2048 x 4 B).
std::vector<ScratchpadConfig> tpu_v4i_scratchpads() {
  return {{"vmem", 16ull << 20, 32, 1024, 2},
          {"weights", 128ull << 20, 64, 1024, 2},
          {"accumulators", 4ull << 20, 16, 2048, 2}};
}

}  // namespace systolic
