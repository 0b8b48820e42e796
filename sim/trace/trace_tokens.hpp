#pragma once
// Lexical layer of the trace format: words and key=value pairs separated by blanks, values
// optionally double-quoted (with \" and \\ escapes), '#' starting a comment outside quotes.
#include <string>
#include <vector>

namespace systolic::trace_detail {

struct Token {
  std::string key;    // "" for a bare word
  std::string value;  // the word itself, or the value after '='
};

// Throws std::invalid_argument("unterminated quote") and similar; the reader adds file:line.
std::vector<Token> tokenize(const std::string& line);

// `text` as a single token: unchanged when it needs no quotes.
std::string quote(const std::string& text);

}  // namespace systolic::trace_detail
