#include "sim/packing/request_log.hpp"

#include "sim/common/csv_fields.hpp"

#include <date/date.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "models/common/error.hpp"
#include "sim/packing/detail.hpp"

namespace systolic::packing {
namespace {

using detail::fail;

// A point in time as whole seconds since 1970-01-01 plus a fraction in [0, 1), so that a
// 7-digit fraction survives on a 1.7e9-second epoch (a single double would round it).
struct Instant {
  int64_t seconds = 0;
  double fraction = 0.0;
  bool operator<(const Instant& o) const {
    return seconds != o.seconds ? seconds < o.seconds : fraction < o.fraction;
  }
};

// The calendar: Howard Hinnant's date library (Debian libhowardhinnant-date-dev, header-only).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  const date::year_month_day ymd{date::year{static_cast<int>(y)}, date::month{static_cast<unsigned>(m)},
                                 date::day{static_cast<unsigned>(d)}};
  return date::sys_days(ymd).time_since_epoch().count();
}

int days_in_month(int64_t y, int64_t m) {
  const date::year_month_day_last last{date::year{static_cast<int>(y)},
                                       date::month_day_last{date::month{static_cast<unsigned>(m)}}};
  return static_cast<int>(static_cast<unsigned>(last.day()));
}

// Reads 1..max_digits decimal digits at text[pos]; nullopt when there is none.
std::optional<int64_t> read_digits(std::string_view text, size_t& pos, size_t min_digits,
                                   size_t max_digits) {
  size_t n = 0;
  int64_t value = 0;
  while (pos + n < text.size() && n < max_digits && text[pos + n] >= '0' && text[pos + n] <= '9') {
    value = value * 10 + (text[pos + n] - '0');
    ++n;
  }
  if (n < min_digits) return std::nullopt;
  pos += n;
  return value;
}

bool expect_char(std::string_view text, size_t& pos, std::string_view allowed) {
  if (pos >= text.size() || allowed.find(text[pos]) == std::string_view::npos) return false;
  ++pos;
  return true;
}

// "YYYY-MM-DD HH:MM:SS[.fraction][Z]"; a 'T' may separate date and time; month, day, hour,
// minute and second may have one or two digits. Returns an error message on failure.
std::optional<Instant> parse_timestamp(std::string_view text, std::string& error) {
  size_t pos = 0;
  const auto year = read_digits(text, pos, 4, 4);
  std::optional<int64_t> month, day, hour, minute, second;
  bool ok = year && expect_char(text, pos, "-") && (month = read_digits(text, pos, 1, 2)) &&
            expect_char(text, pos, "-") && (day = read_digits(text, pos, 1, 2)) &&
            expect_char(text, pos, " T") && (hour = read_digits(text, pos, 1, 2)) &&
            expect_char(text, pos, ":") && (minute = read_digits(text, pos, 1, 2)) &&
            expect_char(text, pos, ":") && (second = read_digits(text, pos, 1, 2));
  double fraction = 0.0;
  if (ok && pos < text.size() && text[pos] == '.') {
    const size_t start = ++pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    if (pos == start) {
      ok = false;
    } else {
      // "0.<digits>" parses exactly as far as a double can hold it, whatever the length.
      fraction = *parse_double("0." + std::string(text.substr(start, pos - start)));
      if (fraction >= 1.0) fraction = std::nextafter(1.0, 0.0);
    }
  }
  if (ok && pos < text.size() && text[pos] == 'Z') ++pos;
  if (!ok || pos != text.size()) {
    error = fmt::format(
        "TIMESTAMP: expected 'YYYY-MM-DD HH:MM:SS[.fraction]' (e.g. 2023-11-16 18:17:03.9799600), "
        "got '{}'",
        text);
    return std::nullopt;
  }
  std::string range;
  if (*month < 1 || *month > 12)
    range = fmt::format("month {} is not in 1..12", *month);
  else if (*day < 1 || *day > days_in_month(*year, *month))
    range = fmt::format("day {} is not in 1..{}", *day, days_in_month(*year, *month));
  else if (*hour > 23)
    range = fmt::format("hour {} is not in 0..23", *hour);
  else if (*minute > 59)
    range = fmt::format("minute {} is not in 0..59", *minute);
  else if (*second > 59)
    range = fmt::format("second {} is not in 0..59", *second);
  if (!range.empty()) {
    error = fmt::format("TIMESTAMP '{}': {}", text, range);
    return std::nullopt;
  }
  Instant t;
  t.seconds = days_from_civil(*year, *month, *day) * 86400 + *hour * 3600 + *minute * 60 + *second;
  t.fraction = fraction;
  return t;
}

struct Columns {
  LogFormat format;
  const char* names[3];
};
const Columns kAzure{LogFormat::azure, {"TIMESTAMP", "ContextTokens", "GeneratedTokens"}};
const Columns kSeconds{LogFormat::seconds, {"arrival_s", "prompt_tokens", "output_tokens"}};

bool matches(const std::vector<std::string_view>& fields, const Columns& c) {
  return fields.size() == 3 && detail::iequals(fields[0], c.names[0]) &&
         detail::iequals(fields[1], c.names[1]) && detail::iequals(fields[2], c.names[2]);
}

std::string header_text(const Columns& c) {
  return fmt::format("{},{},{}", c.names[0], c.names[1], c.names[2]);
}

// A token count: an integer in [1, kMaxTokens]; returns an error message on failure.
std::optional<int64_t> parse_tokens(std::string_view field, const char* column, std::string& error) {
  const auto value = parse_int64(field);
  if (!value) {
    error = fmt::format("{}: expected a positive integer token count, got '{}'", column, field);
  } else if (*value <= 0) {
    error = fmt::format("{}: expected a positive token count, got {}{}", column, *value,
                        *value == 0 ? " (a request has at least one token)" : "");
  } else if (*value > kMaxTokens) {
    error = fmt::format("{}: {} tokens is more than the {} this reader accepts", column, *value,
                        kMaxTokens);
  } else {
    return value;
  }
  return std::nullopt;
}

struct Row {
  Instant at;
  int64_t prompt = 0;
  int64_t output = 0;
  int line = 0;
  std::string timestamp;  // Azure form, as written
};

// The first meaningful line: which of the two forms the file is.
const Columns& header_columns(const std::vector<std::string_view>& fields, std::string_view body,
                              const std::string& path, int line_no) {
  if (matches(fields, kAzure)) return kAzure;
  if (matches(fields, kSeconds)) return kSeconds;
  fail(path, line_no,
       fmt::format("expected a header '{}' (Azure LLM inference trace) or '{}', got '{}'",
                   header_text(kAzure), header_text(kSeconds), body));
}

// One data row; on failure `error` says what was expected and the row is not usable.
Row parse_row(const std::vector<std::string_view>& fields, const Columns& columns, int line_no,
              std::string& error) {
  Row row;
  row.line = line_no;
  if (fields.size() != 3) {
    error = fmt::format("expected 3 comma-separated fields ({}), got {}", header_text(columns),
                        fields.size());
    return row;
  }
  if (columns.format == LogFormat::azure) {
    if (const auto t = parse_timestamp(fields[0], error)) {
      row.at = *t;
      row.timestamp = std::string(fields[0]);
    }
  } else {
    const auto s = parse_double(fields[0]);
    if (!s || *s < 0)
      error = fmt::format("arrival_s: expected a time in seconds (a finite number >= 0), got '{}'",
                          fields[0]);
    else
      row.at = Instant{0, *s};  // plain seconds: kept as written in `fraction`
  }
  if (error.empty()) {
    if (const auto p = parse_tokens(fields[1], columns.names[1], error)) row.prompt = *p;
  }
  if (error.empty()) {
    if (const auto o = parse_tokens(fields[2], columns.names[2], error)) row.output = *o;
  }
  return row;
}

// A file with no header or no usable row is an error, whatever skip_bad_lines says.
void require_rows(const Columns* columns, const std::vector<Row>& rows, const RequestLog& log,
                  const std::string& path) {
  if (!columns)
    fail(path, 0,
         fmt::format("empty request log; expected a header '{}' or '{}' and one row per request",
                     header_text(kAzure), header_text(kSeconds)));
  if (!rows.empty()) return;
  if (log.skipped_lines > 0)
    fail(path, 0,
         fmt::format("no valid request rows: all {} data rows are bad; the first: {}",
                     log.skipped_lines, log.skipped.front()));
  fail(path, 0, "no request rows after the header");
}

// Out-of-order rows: count them, name the first in a warning, then sort stably (ties keep
// file order).
void sort_by_arrival(std::vector<Row>& rows, const Columns& columns, RequestLog& log) {
  int64_t out_of_order = 0;
  const Row* first_late = nullptr;  // the first row earlier than a row above it ...
  const Row* before = nullptr;      // ... and the latest row above it
  const Row* latest = &rows.front();
  for (const Row& r : rows) {
    if (r.at < latest->at) {
      if (!first_late) {
        first_late = &r;
        before = latest;
      }
      ++out_of_order;
    } else {
      latest = &r;
    }
  }
  if (out_of_order == 0) return;
  const auto stamp = [&](const Row& r) {
    return columns.format == LogFormat::azure ? r.timestamp : fmt::format("{} s", r.at.fraction);
  };
  log.warnings.push_back(fmt::format(
      "{}: {} request{} out of arrival order (first at line {}: {} is earlier than {} at line "
      "{}); sorted by arrival time",
      log.path, out_of_order, out_of_order == 1 ? " is" : "s are", first_late->line,
      stamp(*first_late), stamp(*before), before->line));
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.at < b.at; });
}

// Rows (sorted) -> requests, arrival times relative to the first (Azure) or as written.
void add_requests(const std::vector<Row>& rows, const Columns& columns, RequestLog& log) {
  const Instant origin = columns.format == LogFormat::azure ? rows.front().at : Instant{};
  if (columns.format == LogFormat::azure) log.origin = rows.front().timestamp;
  log.requests.reserve(rows.size());
  for (const Row& r : rows) {
    Request q;
    q.id = static_cast<int64_t>(log.requests.size());
    q.arrival_s = static_cast<double>(r.at.seconds - origin.seconds) + (r.at.fraction - origin.fraction);
    q.prompt_tokens = r.prompt;
    q.output_tokens = r.output;
    q.line = r.line;
    log.requests.push_back(q);
  }
}

}  // namespace

RequestLog parse_request_log(const std::string& text, const std::string& path,
                             bool skip_bad_lines) {
  RequestLog log;
  log.path = path;
  const Columns* columns = nullptr;
  std::vector<Row> rows;

  std::string_view rest(text);
  if (rest.substr(0, 3) == "\xEF\xBB\xBF") rest.remove_prefix(3);  // UTF-8 BOM
  int line_no = 0;
  while (!rest.empty()) {
    ++line_no;
    const size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string_view body = detail::trim(line);
    if (body.empty() || body.front() == '#') continue;
    std::vector<std::string> owned;
    try {
      owned = csv_fields(body);
    } catch (const std::invalid_argument& e) {
      fail(path, line_no, e.what());
    }
    const std::vector<std::string_view> fields(owned.begin(), owned.end());
    if (!columns) {
      columns = &header_columns(fields, body, path, line_no);
      log.format = columns->format;
      continue;
    }
    std::string error;
    Row row = parse_row(fields, *columns, line_no, error);
    if (error.empty()) {
      rows.push_back(std::move(row));
      continue;
    }
    if (!skip_bad_lines) fail(path, line_no, error + " (skip_bad_lines would skip such rows)");
    ++log.skipped_lines;
    log.skipped.push_back(fmt::format("{}:{}: {}", path, line_no, error));
  }
  require_rows(columns, rows, log, path);
  sort_by_arrival(rows, *columns, log);
  add_requests(rows, *columns, log);
  return log;
}

RequestLog load_request_log(const std::string& path, bool skip_bad_lines) {
  if (std::filesystem::is_directory(path)) fail(path, 0, "is a directory, expected a request log (CSV)");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, 0, "cannot open request log");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_request_log(text.str(), path, skip_bad_lines);
}

}  // namespace systolic::packing
