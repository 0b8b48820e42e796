#include "sim/report/timeline_file.hpp"

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
  const uint64_t bytes = estimate_timeline_bytes(programs);
  const double mib = static_cast<double>(bytes) / (1 << 20);
  if (bytes > options.limit_bytes)
    throw InputError(fmt::format(
        "--timeline {}: this run's timeline would be about {:.1f} MiB of JSON (more than --timeline-limit, "
        "{:.1f} MiB): give a window of cycles (--timeline-window A:B), or raise --timeline-limit if a viewer can "
        "load it",
        path, mib, static_cast<double>(options.limit_bytes) / (1 << 20)));
  if (bytes > kNoteBytes)
    fmt::print(stderr, "note: --timeline {}: the timeline will be about {:.0f} MiB of JSON{}\n", path, mib,
               ends_with(path, ".gz") ? " before compression" : " (a .json.gz path is 10 to 20 times smaller)");
}

std::string write_timeline_temporary(const std::string& path, const ChipConfig& config,
                                     const std::vector<SharedProgram>& programs, const SystemResult& result,
                                     const TimelineOptions& options) {
  const std::string temp = create_exclusive_temp(path);
  try {
    Output out(temp, path, ends_with(path, ".gz"));
    TextSink text(out);
    json other;
    if (options.window) {
      WindowSink window(text, *options.window);
      other = stream_system_timeline(config, programs, result, window);
      window.close();
      other["window_cycles"] = {options.window->first.value_or(0),
                                options.window->last ? json(*options.window->last) : json(nullptr)};
    } else {
      other = stream_system_timeline(config, programs, result, text);
    }
    text.close(other);
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
