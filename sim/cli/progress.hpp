#pragma once
// A progress line on stderr for a long single run (`run --progress`, or by itself when stderr
// is a terminal): after 2 s of simulating, the share of the program's instructions finished,
// the time so far and the time left at that pace (docs/getting-started.md, "Progress"). Never in
// the report or on stdout.
#include <chrono>
#include <functional>

namespace systolic::cli {

class ProgressLine {
 public:
  // `forced`: --progress (a line per update, also when stderr is not a terminal).
  explicit ProgressLine(bool forced);
  ~ProgressLine();  // ends the line if one was drawn
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // The callback for RunOptions::progress; empty when no line is to be drawn.
  std::function<void(double)> callback();

 private:
  void update(double fraction);
  bool tty_, forced_, drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace systolic::cli
