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
// "nothing", "an empty list", "a list", "a map" or the quoted scalar: what was found instead.
std::string describe_yaml(const YAML::Node& node);

// Throws InputError "path:line: message" (line is 1-based; line <= 0 prints "path: message"):
// how every reader of a user's file reports a problem.
[[noreturn]] void fail(const std::string& path, int64_t line, const std::string& message);

// Every reader of a user's YAML loads it through these two: a path that is a directory is an
// error, and so is a map that gives a key twice (yaml-cpp keeps both pairs: a lookup sees the
// first, a loop over the map the last, so either way one value is silently dropped).
// yaml-cpp's own exceptions (BadFile, ParserException) reach the caller, which words them.
// A text past max_yaml_bytes() is refused before it is parsed (check_yaml_size).
YAML::Node load_yaml_file(const std::string& path);
YAML::Node load_yaml_text(const std::string& text, const std::string& path);

// yaml-cpp keeps a node tree of ~115 bytes per byte of a GEMM list and up to ~230 per byte of a
// dense flow list ("[1,1,1,...]"), and parses ~1 MB a second (docs/reliability.md, "Limits"): a
// 38 MB GEMM list of 1,000,000 entries took 4.2 GB. The default, 4 MiB, keeps a parse under
// ~1 GB and ~5 s; the largest shipped YAML file is under 100 KB. --max-yaml-bytes raises it
// (the CLI sets it once, before any reader runs; the Python module keeps the default).
constexpr uint64_t kDefaultMaxYamlBytes = uint64_t{4} << 20;
uint64_t max_yaml_bytes();
void set_max_yaml_bytes(uint64_t bytes);
// Throws InputError "path: N bytes of YAML (about M MB once parsed), more than --max-yaml-bytes L ...".
void check_yaml_size(uint64_t bytes, const std::string& path);

// Whether the first document of the YAML file at `path` is a map with the top-level `key`,
// decided from the parser's event stream: no node tree is built (a GEMM list is parsed into a
// tree once, by its reader) and the scan stops at the key. The size limit applies; yaml-cpp's
// syntax errors reach the caller.
bool yaml_root_has_key(const std::string& path, const std::string& key);
// Throws InputError "path:line: duplicate key 'k' (first on line n)".
void reject_duplicate_keys(const YAML::Node& root, const std::string& path);

// A YAML document's root must be a map: fails with "path: <empty>" for an empty document and
// "path:line: <expected>, got <what it is>" for anything else.
void require_yaml_map(const YAML::Node& root, const std::string& path, const std::string& empty,
                      const std::string& expected);

}  // namespace systolic
