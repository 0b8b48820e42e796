#pragma once
// A value a block's config cannot take, as its validate() reports it: the field (the config
// key, or its suffix within the block's section), what was expected, what was given. The
// config loader turns it into "key '<field>': expected <expected>, got <got>".
#include <stdexcept>
#include <string>

namespace systolic {

struct ConfigIssue {
  std::string field;     // "chunk_bytes", "dma.max_outstanding"
  std::string expected;  // "a multiple of the burst size (32 B)"
  std::string got;       // "48"
  std::string message() const { return field + ": expected " + expected + ", got " + got; }
};

// `config` as given, for a block's constructor to build from, or std::invalid_argument with the
// first issue its validate() finds (prefix + message). The config loader runs the same
// validate() first and refuses with the key, so only a caller that skips the loader meets this.
template <class Config>
const Config& validated(const Config& config, const std::string& prefix = "") {
  if (auto bad = config.validate()) throw std::invalid_argument(prefix + bad->message());
  return config;
}

}  // namespace systolic
