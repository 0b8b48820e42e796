#pragma once
// Request logs: one row per inference request — when it arrived, how long its prompt is and
// how many tokens it generates. Two CSV forms are read (docs/packing.md, "Request logs"):
//
//   Azure LLM inference trace, read as published:
//     TIMESTAMP,ContextTokens,GeneratedTokens
//     2023-11-16 18:17:03.9799600,4808,10
//   TIMESTAMP is "YYYY-MM-DD HH:MM:SS[.fraction]" (a 'T' may replace the space, a trailing 'Z'
//   is allowed, the fraction may have any number of digits); arrival_s is the time since the
//   earliest request of the file.
//
//   Plain seconds:
//     arrival_s,prompt_tokens,output_tokens
//     0.0,3000,12
//   arrival_s is used as written (finite, >= 0).
//
// Header names are matched case-insensitively; blank lines and lines whose first non-blank
// character is '#' are ignored; CRLF line ends and a UTF-8 BOM are accepted. Token counts
// are integers in [1, kMaxTokens]. Every problem is an InputError "path:line: ..." naming what
// was expected, unless skip_bad_lines is set: then bad data rows are counted, listed and left
// out (a bad header, or a file without a single good row, is still an error).
// Rows out of arrival order are sorted (stably) and a warning is recorded.
#include "models/common/names.hpp"
#include <cstdint>
#include <string>
#include <vector>

namespace systolic::packing {

// Largest prompt or output length accepted (2^24 tokens, beyond any model context): keeps
// every token and attention-cell count of a replay far inside int64.
constexpr int64_t kMaxTokens = int64_t{1} << 24;

struct Request {
  int64_t id = 0;            // index in RequestLog::requests (arrival order, ties in file order)
  double arrival_s = 0.0;    // seconds (Azure form: since the earliest request of the file)
  int64_t prompt_tokens = 0;  // prefill length (ContextTokens)
  int64_t output_tokens = 0;  // tokens generated, one decode step each (GeneratedTokens)
  int line = 0;               // 1-based line in the file, for messages
};

enum class LogFormat { azure, seconds };
inline constexpr auto kLogFormatNames =
    name_table<LogFormat>({{LogFormat::azure, "azure"}, {LogFormat::seconds, "seconds"}});

struct RequestLog {
  std::string path;
  LogFormat format = LogFormat::azure;
  std::string origin;  // Azure form: the earliest TIMESTAMP as written (arrival_s = 0); else ""
  std::vector<Request> requests;       // sorted by arrival_s; requests[i].id == i
  int64_t skipped_lines = 0;           // bad data rows left out (skip_bad_lines only)
  std::vector<std::string> skipped;    // "path:line: reason", one per skipped row
  std::vector<std::string> warnings;   // e.g. rows out of order were sorted
};

RequestLog load_request_log(const std::string& path, bool skip_bad_lines = false);

// The same, from text already in memory; `path` only names it in messages.
RequestLog parse_request_log(const std::string& text, const std::string& path,
                             bool skip_bad_lines = false);


}  // namespace systolic::packing
