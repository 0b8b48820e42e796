#include "sim/report/timeline_file.hpp"
#include "sim/common/json_optional.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <cstdio>
#include <map>

#include "models/common/error.hpp"
#include "sim/common/output_files.hpp"
#include "sim/report/report.hpp"
#include "sim/report/timeline.hpp"

namespace systolic {
namespace {

using json = nlohmann::ordered_json;

// JSON text per executed instruction, measured on the shipped examples (docs/timelines.md,
// "Large runs": 940 to 1,390 bytes, with its stall, arrow and counter points).
constexpr uint64_t kBytesPerInstruction = 1100;
constexpr uint64_t kNoteBytes = 64ULL << 20;  // above this, say on stderr how big it will be

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Writes the file as the text comes: plain, or a gzip stream (zlib's deflate with a gzip header
// and no time stamp, so the same timeline compresses to the same bytes). Only a megabyte of
// text is held at a time, so a timeline never sits whole in memory.
class Output {
 public:
  Output(const std::string& temp, const std::string& target, bool gzip)
      : target_(target), file_(std::fopen(temp.c_str(), "wb")), gzip_(gzip) {
    if (!file_) throw InputError(fmt::format("{}: cannot write", target_));
    if (gzip_ && deflateInit2(&z_, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      throw std::runtime_error("zlib: deflateInit2 failed");
  }
  ~Output() {
    if (gzip_) deflateEnd(&z_);
    if (file_) std::fclose(file_);
  }
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  void write(const std::string& text) {
    written_ += text.size();
    pending_ += text;
    if (pending_.size() >= (1U << 20)) flush(Z_NO_FLUSH);
  }
  void finish() {
    flush(Z_FINISH);
    const bool failed = std::ferror(file_) != 0;
    if (std::fclose(file_) != 0 || failed) {
      file_ = nullptr;
      throw InputError(fmt::format("{}: cannot write (disk full?)", target_));
    }
    file_ = nullptr;
  }
  uint64_t written() const { return written_; }  // text bytes, before compression

 private:
  void flush(int mode) {
    if (!gzip_) {
      put(pending_.data(), pending_.size());
    } else {
      z_.next_in = reinterpret_cast<Bytef*>(pending_.data());
      z_.avail_in = static_cast<uInt>(pending_.size());
      char chunk[1 << 16];
      int rc = Z_OK;
      do {
        z_.next_out = reinterpret_cast<Bytef*>(chunk);
        z_.avail_out = sizeof chunk;
        rc = deflate(&z_, mode);
        put(chunk, sizeof chunk - z_.avail_out);
      } while (z_.avail_out == 0 || (mode == Z_FINISH && rc != Z_STREAM_END));
    }
    pending_.clear();
  }
  void put(const char* data, size_t n) {
    if (n && std::fwrite(data, 1, n, file_) != n) throw InputError(fmt::format("{}: cannot write", target_));
  }

  std::string target_;
  std::FILE* file_;
  bool gzip_;
  z_stream z_{};
  std::string pending_;
  uint64_t written_ = 0;
};

// Serialises each event as it comes, with the separators of json::dump().
class TextSink final : public TimelineSink {
 public:
  explicit TextSink(Output& out) : out_(out) { out_.write("{\"traceEvents\":["); }
  void event(json e) override {
    out_.write(first_ ? e.dump() : "," + e.dump());
    first_ = false;
  }
  void close(const json& other) { out_.write("],\"otherData\":" + other.dump() + "}\n"); }

 private:
  Output& out_;
  bool first_ = true;
};

// Keeps what overlaps the window: slices that touch it, instants inside it, and each counter's
// value at the window's start (the last point before it, moved to the start).
class WindowSink final : public TimelineSink {
 public:
  WindowSink(TimelineSink& out, const CycleRange& window) : out_(out), window_(window) {}
  void event(json e) override {
    if (!e.contains("ts")) return out_.event(std::move(e));  // metadata: names, sort order
    const auto ts = e["ts"].get<uint64_t>();
    const uint64_t end = ts + (e.contains("dur") ? e["dur"].get<uint64_t>() : 0);
    const std::string key = e["ph"] == "C" ? fmt::format("{}/{}", e["pid"].dump(), e["name"].dump()) : "";
    if (!key.empty() && window_.first && ts < *window_.first) {
      e["ts"] = *window_.first;
      before_[key] = std::move(e);
      return;
    }
    if (!window_.overlaps(ts, end)) return;
    if (!key.empty()) flush(key, ts == window_.first);  // a point at the start itself replaces it
    out_.event(std::move(e));
  }
  void close() {
    while (!before_.empty()) flush(before_.begin()->first, false);
  }

 private:
  void flush(const std::string& key, bool superseded) {
    auto it = before_.find(key);
    if (it == before_.end()) return;
    if (!superseded) out_.event(std::move(it->second));
    before_.erase(it);
  }
  TimelineSink& out_;
  CycleRange window_;
  std::map<std::string, json> before_;  // each counter's last point before the window
};


// Keeps one instruction slice in `every` on each track (the 1st, the (every+1)-th, ...), with
// the stall in front of a kept slice and that stall's arrow. The events of a track come in its
// instructions' order and a stall (with its arrow) is made just before its instruction's slice,
// so it takes the decision of the next slice on its track. Each counter's points are merged
// `every` at a time into one point holding their time-weighted mean, so what a counter
// integrates (bytes moved, engine-cycles busy) is kept exactly; its last point is kept as it is.
class SampleSink final : public TimelineSink {
 public:
  SampleSink(TimelineSink& out, uint64_t every) : out_(out), every_(every) {}
  void event(json e) override {
    const std::string ph = e.value("ph", "");
    if (ph == "X") return slice(std::move(e));
    if (ph == "C") return point(std::move(e));
    if (ph == "s" || ph == "f") {  // the arrow of the stall just made
      if (keep_arrow_) out_.event(std::move(e));
      return;
    }
    out_.event(std::move(e));  // metadata
  }
  void close() {
    for (auto& [key, run] : runs_) {
      if (run.count > 1) emit_mean(run, run.last_ts);
      out_.event(std::move(run.last));
    }
    runs_.clear();
  }
  uint64_t dropped() const { return dropped_; }

 private:
  // The points of one counter being merged: the first's event, the area under the ones so far.
  struct Run {
    json first, last;
    uint64_t first_ts = 0, last_ts = 0, count = 0;
    double area = 0;  // value x cycles, from first_ts to last_ts
  };

  void slice(json e) {
    uint64_t& seen = seen_[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}];
    const bool keep = seen % every_ == 0;
    if (e["cat"] == "stall") {
      keep_arrow_ = keep;
    } else {
      ++seen;
      keep_arrow_ = false;
    }
    if (keep) return out_.event(std::move(e));
    dropped_ += e["cat"] == "stall" ? 0 : 1;
  }
  void point(json e) {
    const uint64_t ts = e["ts"].get<uint64_t>();
    Run& run = runs_[fmt::format("{}/{}", e["pid"].dump(), e["name"].dump())];
    if (run.count == 0) return start(run, std::move(e), ts);
    run.area += static_cast<double>(ts - run.last_ts) * run.last["args"]["value"].get<double>();
    if (run.count == every_) {  // this point starts the next run
      emit_mean(run, ts);
      return start(run, std::move(e), ts);
    }
    run.last = std::move(e);
    run.last_ts = ts;
    ++run.count;
  }
  static void start(Run& run, json e, uint64_t ts) {
    run = Run{e, std::move(e), ts, ts, 1, 0.0};
  }
  // The run's first point, holding the mean over [first, end) (its own value if that is empty).
  void emit_mean(Run& run, uint64_t end) {
    if (end > run.first_ts) run.first["args"]["value"] = run.area / static_cast<double>(end - run.first_ts);
    out_.event(std::move(run.first));
  }

  TimelineSink& out_;
  uint64_t every_;
  std::map<std::pair<int64_t, int64_t>, uint64_t> seen_;  // instruction slices per (pid, tid)
  std::map<std::string, Run> runs_;                        // per counter: pid/name
  bool keep_arrow_ = false;
  uint64_t dropped_ = 0;
};

}  // namespace

uint64_t estimate_timeline_bytes(const std::vector<const Program*>& programs) {
  uint64_t instructions = 0;
  for (const Program* p : programs)
    for (const Stream& s : p->streams) instructions += s.instructions.size();
  return instructions * kBytesPerInstruction;
}

void check_timeline_size(const std::vector<const Program*>& programs, const TimelineOptions& options,
                         const std::string& path) {
  if (options.window) return;  // the window bounds it
  const uint64_t bytes = estimate_timeline_bytes(programs) / options.sample_every;
  const double mib = static_cast<double>(bytes) / (1 << 20);
  if (bytes > options.limit_bytes)
    throw InputError(fmt::format(
        "--timeline {}: this run's timeline would be about {:.1f} MiB of JSON (more than --timeline-limit, "
        "{:.1f} MiB): give a window of cycles (--timeline-window A:B) or sample the slices (--timeline-sample N), "
        "or raise --timeline-limit if a viewer can load it",
        path, mib, static_cast<double>(options.limit_bytes) / (1 << 20)));
  if (bytes > kNoteBytes)
    fmt::print(stderr, "note: --timeline {}: the timeline will be about {:.0f} MiB of JSON{}\n", path, mib,
               ends_with(path, ".gz") ? " before compression" : " (a .json.gz path is 10 to 20 times smaller)");
}

namespace {

// The backstop behind the estimate (a window has no limit: it bounds the text itself).
void check_written(uint64_t bytes, const TimelineOptions& options, const std::string& path) {
  if (options.window || bytes <= options.limit_bytes) return;
  throw InputError(fmt::format(
      "--timeline {}: this run's timeline came to {:.1f} MiB of JSON (more than --timeline-limit, {:.1f} MiB; "
      "nothing written): give a window of cycles (--timeline-window A:B), a coarser --timeline-sample, or raise "
      "--timeline-limit",
      path, static_cast<double>(bytes) / (1 << 20), static_cast<double>(options.limit_bytes) / (1 << 20)));
}

}  // namespace

std::string write_timeline_temporary(const std::string& path, const ChipConfig& config,
                                     const std::vector<SharedProgram>& programs, const SystemResult& result,
                                     const TimelineOptions& options) {
  const std::string temp = create_exclusive_temp(path);
  try {
    Output out(temp, path, ends_with(path, ".gz"));
    TextSink text(out);
    SampleSink sample(text, options.sample_every);
    TimelineSink& sink = options.sample_every > 1 ? static_cast<TimelineSink&>(sample) : text;
    json other;
    if (options.window) {
      WindowSink window(sink, *options.window);
      other = stream_system_timeline(config, programs, result, window);
      window.close();
      other["window_cycles"] = {options.window->first.value_or(0), options.window->last};
    } else {
      other = stream_system_timeline(config, programs, result, sink);
    }
    sample.close();
    if (options.sample_every > 1) {
      other["sample_every"] = options.sample_every;
      other["slices_dropped"] = sample.dropped();
    }
    text.close(other);
    check_written(out.written(), options, path);
    out.finish();
  } catch (...) {
    std::remove(temp.c_str());
    throw;
  }
  return temp;
}

void write_timeline(const std::string& path, const ChipConfig& config,
                    const std::vector<SharedProgram>& programs, const SystemResult& result,
                    const TimelineOptions& options) {
  OutputSet file;
  file.adopt(path, write_timeline_temporary(path, config, programs, result, options));
  file.commit();
}

}  // namespace systolic
