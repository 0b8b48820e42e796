#pragma once
// Strict readers for the text users write (CSV fields, YAML scalars) and for describing YAML
// nodes in error messages, shared by every input format.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace systolic {

// Optional '+', decimal digits without a leading zero ("010" is octal 8 to YAML 1.1, so it is
// refused rather than read as either), nothing else; nullopt when not a number or out of range.
std::optional<int64_t> parse_int64(std::string_view text);
// A finite decimal number, all of the text; nullopt otherwise.
std::optional<double> parse_double(std::string_view text);

// 1-based line of a node, or `fallback` when yaml-cpp has no position for it.
int64_t yaml_line(const YAML::Node& node, int64_t fallback);
// "nothing", "a list", "a map" or the quoted scalar: what was found instead.
std::string describe_yaml(const YAML::Node& node);

// Throws InputError "path:line: message" (line is 1-based; line <= 0 prints "path: message"):
// how every reader of a user's file reports a problem.
[[noreturn]] void fail(const std::string& path, int64_t line, const std::string& message);

// Every reader of a user's YAML loads it through these two: a path that is a directory is an
// error, and so is a map that gives a key twice (yaml-cpp keeps both pairs: a lookup sees the
// first, a loop over the map the last, so either way one value is silently dropped).
// yaml-cpp's own exceptions (BadFile, ParserException) reach the caller, which words them.
YAML::Node load_yaml_file(const std::string& path);
YAML::Node load_yaml_text(const std::string& text, const std::string& path);
// Throws InputError "path:line: duplicate key 'k' (first on line n)".
void reject_duplicate_keys(const YAML::Node& root, const std::string& path);

// A YAML document's root must be a map: fails with "path: <empty>" for an empty document and
// "path:line: <expected>, got <what it is>" for anything else.
void require_yaml_map(const YAML::Node& root, const std::string& path, const std::string& empty,
                      const std::string& expected);

}  // namespace systolic
