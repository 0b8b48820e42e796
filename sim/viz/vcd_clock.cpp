#include "sim/viz/vcd_clock.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "models/common/clock.hpp"
#include "models/common/error.hpp"

namespace systolic {
namespace {

constexpr const char* kClockId = "!";  // SystemC's identifiers are lowercase letters only

// Clock edges in order: edge 2c is cycle c's rising edge, 2c + 1 its falling one.
class ClockEdges {
 public:
  explicit ClockEdges(double period_ps) : period_ps_(period_ps) {}
  uint64_t time(uint64_t edge) const { return static_cast<uint64_t>(std::llround(edge * period_ps_ / 2)); }
  uint64_t next = 1;  // the rising edge at 0 is among the initial values

 private:
  double period_ps_;
};

// Writes the clock edges before `until` (ps), each at its own time stamp.
void edges_before(std::ofstream& out, ClockEdges& clock, uint64_t until) {
  for (; clock.time(clock.next) < until; ++clock.next)
    out << '#' << clock.time(clock.next) << '\n' << (clock.next % 2 ? '0' : '1') << kClockId << '\n';
}

}  // namespace

uint64_t retime_vcd(const std::string& from, const std::string& to, double clock_mhz) {
  std::ifstream in(from);
  std::ofstream out(to, std::ios::trunc);
  if (!in || !out) throw InputError(fmt::format("{}: cannot write file", to));
  const double period_ps = 1e6 / clock_mhz;
  ClockEdges clock(period_ps);
  std::string line;
  bool in_timescale = false, scoped = false;
  uint64_t last = 0;
  while (std::getline(in, line)) {
    if (in_timescale) {  // the unit line(s): one kernel tick is 1 ps
      if (line.find("$end") != std::string::npos) out << "     1 ps\n$end\n";
      in_timescale = line.find("$end") == std::string::npos;
      continue;
    }
    if (line.rfind("$timescale", 0) == 0) {
      out << "$timescale\n";
      in_timescale = true;
      continue;
    }
    if (!line.empty() && line[0] == '#') {
      const uint64_t ticks = std::stoull(line.substr(1));
      last = static_cast<uint64_t>(std::llround(static_cast<double>(ticks) / kTicksPerCycle * period_ps));
      edges_before(out, clock, last);
      out << '#' << last << '\n';
      for (; clock.time(clock.next) == last; ++clock.next) out << (clock.next % 2 ? '0' : '1') << kClockId << '\n';
      continue;
    }
    out << line << '\n';
    if (!scoped && line.rfind("$scope module SystemC", 0) == 0) {
      out << "$var wire    1  " << kClockId << "  clk       $end\n";
      scoped = true;
    }
    if (line == "$dumpvars") out << '1' << kClockId << '\n';
  }
  // The clock runs to the end of the cycle the last values belong to.
  const uint64_t end = clock.time(2 * (static_cast<uint64_t>(static_cast<double>(last) / period_ps) + 1));
  edges_before(out, clock, end + 1);
  if (!out.flush()) throw InputError(fmt::format("{}: write failed", to));
  return end;
}

std::string gtkw_save_file(const std::string& vcd, const std::vector<GtkwGroup>& groups, uint64_t end_ps) {
  std::string text = fmt::format(
      "[*] GTKWave save file written by systolic run --vcd (docs/watch-it-compute.md)\n"
      "[dumpfile] \"{}\"\n[timestart] 0\n[size] 1400 900\n[pos] -1 -1\n[treeopen] SystemC.\n"
      "[sst_width] 240\n[signals_width] 300\n[*] the run ends at {} ps\n",
      std::filesystem::path(vcd).filename().string(), end_ps);
  for (const GtkwGroup& g : groups) {
    text += fmt::format("@800200\n-{}\n", g.label);  // a group, opened
    for (const auto& [name, width] : g.signals)
      text += fmt::format("{}\n{}\n", width == 1 ? "@28" : width == 0 ? "@20" : "@424", name);
    text += fmt::format("@1000200\n-{}\n", g.label);
  }
  return text;
}

}  // namespace systolic
