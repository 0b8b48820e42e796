#pragma once
// A value a block's config cannot take, as its validate() reports it: the field (the config
// key, or its suffix within the block's section), what was expected, what was given. The
// config loader turns it into "key '<field>': expected <expected>, got <got>".
#include <string>

namespace systolic {

struct ConfigIssue {
  std::string field;     // "chunk_bytes", "dma.max_outstanding"
  std::string expected;  // "a multiple of the burst size (32 B)"
  std::string got;       // "48"
  std::string message() const { return field + ": expected " + expected + ", got " + got; }
};

}  // namespace systolic
