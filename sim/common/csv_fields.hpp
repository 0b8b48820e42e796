#pragma once
// One line of a CSV file split into its fields by libcsv (Debian's libcsv-dev, RFC 4180): a
// field in double quotes may hold commas and doubled quotes (""), and the spaces around a field
// are trimmed. The readers go line by line, so their messages keep the file's line numbers (a
// quoted field cannot span lines).
#include <string>
#include <string_view>
#include <vector>

namespace systolic {

// Throws std::invalid_argument("...") for a malformed line (a quote left open, text after a
// closing quote); the caller adds the file and line.
std::vector<std::string> csv_fields(std::string_view line);

}  // namespace systolic
