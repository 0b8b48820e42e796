#include "models/hbm/hbm_config.hpp"

#include "models/hbm/dram_standard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace systolic {
namespace {

std::optional<ConfigIssue> issue(std::string field, std::string expected, std::string got) {
  return ConfigIssue{std::move(field), std::move(expected), std::move(got)};
}

std::string num(double v) { return fmt::format("{}", v); }

}  // namespace

std::optional<ConfigIssue> HbmConfig::validate() const {
  if (channels < 1) return issue("channels", "an integer >= 1", num(channels));
  if (pseudo_channels < 1) return issue("pseudo_channels", "an integer >= 1", num(pseudo_channels));
  if (banks < 1) return issue("banks", "an integer >= 1", num(banks));
  if (bus_bits < 8 || bus_bits % 8 != 0)
    return issue("bus_bits", "a whole number of bytes (a multiple of 8, >= 8)", num(bus_bits));
  if (!(data_rate_gbps > 0) || !std::isfinite(data_rate_gbps))
    return issue("data_rate_gbps", "a number > 0", num(data_rate_gbps));
  if (burst_length < 1) return issue("burst_length", "an integer >= 1", num(burst_length));
  const uint64_t burst = burst_bytes();
  const std::string whole_bursts = fmt::format("a positive multiple of the burst size ({} B = {} "
                                               "bit / 8 x burst length {})",
                                               burst, bus_bits, burst_length);
  if (page_bytes == 0 || page_bytes % burst != 0) return issue("page_bytes", whole_bursts, num(page_bytes));
  if (interleave_bytes == 0 || interleave_bytes % burst != 0)
    return issue("interleave_bytes", whole_bursts, num(interleave_bytes));
  const uint64_t big = std::max(page_bytes, interleave_bytes);
  const uint64_t small = std::min(page_bytes, interleave_bytes);
  if (big % small != 0)
    return issue("interleave_bytes",
                 fmt::format("a divisor or a multiple of page_bytes ({} B)", page_bytes),
                 num(interleave_bytes));
  if (chunk_bytes == 0 || chunk_bytes % burst != 0) return issue("chunk_bytes", whole_bursts, num(chunk_bytes));
  if (capacity_bytes == 0) return issue("capacity_bytes", "an integer >= 1", num(capacity_bytes));
  const std::pair<const char*, double> timings[] = {
      {"t_rcd_ns", t_rcd_ns}, {"t_rp_ns", t_rp_ns},   {"t_cl_ns", t_cl_ns},
      {"t_ras_ns", t_ras_ns}, {"t_rrd_ns", t_rrd_ns}, {"t_faw_ns", t_faw_ns},
      {"t_refi_ns", t_refi_ns}, {"t_rfc_ns", t_rfc_ns}};
  for (const auto& [field, v] : timings)
    if (!(v >= 0) || !std::isfinite(v) || v > 1e9) return issue(field, "a number of ns in [0, 1e9]", num(v));
  if (t_rfc_ns > 0 && !(t_refi_ns > t_rfc_ns))
    return issue("t_refi_ns",
                 fmt::format("more than t_rfc_ns ({} ns), or t_rfc_ns = 0 to disable refresh", t_rfc_ns),
                 num(t_refi_ns));
  return std::nullopt;
}

std::optional<HbmConfig> hbm_preset(const std::string& name) {
  if (const auto* standard = DramRegistry::instance().find(name)) return standard->impl->config;
  return std::nullopt;
}

}  // namespace systolic
