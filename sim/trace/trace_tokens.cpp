#include "sim/trace/trace_tokens.hpp"

#include <cctype>
#include <stdexcept>

namespace systolic::trace_detail {
namespace {
bool plain(char c) { return std::isalnum(static_cast<unsigned char>(c)) || std::string("_.:/-+").find(c) != std::string::npos; }
}  // namespace

std::vector<Token> tokenize(const std::string& line) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < line.size()) {
    if (std::isspace(static_cast<unsigned char>(line[i]))) {
      ++i;
      continue;
    }
    if (line[i] == '#') break;
    Token t;
    std::string* part = &t.value;
    bool has_key = false;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) {
      const char c = line[i];
      if (c == '=' && !has_key) {
        has_key = true;
        t.key = t.value;
        t.value.clear();
        ++i;
      } else if (c == '"') {
        ++i;
        while (true) {
          if (i >= line.size()) throw std::invalid_argument("unterminated quoted value");
          if (line[i] == '"') break;
          if (line[i] == '\\' && i + 1 < line.size()) ++i;
          *part += line[i++];
        }
        ++i;
      } else {
        *part += c;
        ++i;
      }
    }
    if (has_key && t.key.empty()) throw std::invalid_argument("'=' without a key");
    tokens.push_back(std::move(t));
  }
  return tokens;
}

std::string quote(const std::string& text) {
  bool simple = !text.empty();
  for (char c : text) simple = simple && plain(c);
  if (simple) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace systolic::trace_detail
