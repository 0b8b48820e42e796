#include "sim/cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace systolic::cli {
namespace {

constexpr double kQuietSeconds = 2.0;    // short runs draw nothing
constexpr double kEverySeconds = 0.5;    // at most two updates a second

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

ProgressLine::ProgressLine(bool forced)
    : tty_(isatty(fileno(stderr)) != 0), forced_(forced), start_(std::chrono::steady_clock::now()), last_(start_) {}

ProgressLine::~ProgressLine() {
  if (drawn_ && tty_) fmt::print(stderr, "\r\033[K");  // the summary follows on a clean line
}

std::function<void(double)> ProgressLine::callback() {
  if (!tty_ && !forced_) return {};
  return [this](double fraction) { update(fraction); };
}

void ProgressLine::update(double fraction) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = seconds(now - start_);
  if (elapsed < kQuietSeconds || seconds(now - last_) < kEverySeconds) return;
  last_ = now;
  const std::string left =
      fraction > 0 ? fmt::format("about {:.0f} s left", elapsed * (1 - fraction) / fraction) : "time left unknown";
  const std::string text = fmt::format("simulating: {:.1f}% of instructions done, {:.0f} s, {}", 100 * fraction,
                                       elapsed, left);
  if (tty_) fmt::print(stderr, "\r\033[K{}", text);
  else fmt::print(stderr, "{}\n", text);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace systolic::cli
