#pragma once
// Reading one trace line's key=value fields: `Fields` holds a line's pairs and hands each key
// out exactly once (so a key the line does not take is an error naming it); `FieldReader` is
// the visitor trace_fields.hpp walks over an operation's fields when a trace is read back.
// Every error is std::invalid_argument with the key and what was expected; the parser
// (trace_reader.cpp) adds the file and line.
#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "models/common/dtype.hpp"
#include "models/common/suggest.hpp"
#include "models/isa/program.hpp"
#include "sim/trace/trace_fields.hpp"
#include "sim/trace/trace_tokens.hpp"

namespace systolic::trace_detail {

// Decimal (no leading zero: "010" is not octal 8 nor decimal 10, it is refused) or 0x-hex, all of
// the text, no sign, within uint64; nullopt otherwise.
inline std::optional<uint64_t> strict_unsigned(const std::string& v) {
  const bool hex = v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
  const char* first = v.data() + (hex ? 2 : 0);
  const char* last = v.data() + v.size();
  if (first == last || (!hex && v.size() > 1 && v[0] == '0')) return std::nullopt;
  uint64_t x = 0;
  const auto [end, ec] = std::from_chars(first, last, x, hex ? 16 : 10);
  if (ec != std::errc() || end != last) return std::nullopt;
  return x;
}

// strict_unsigned, or std::invalid_argument naming `key` and the whole field.
inline uint64_t parse_unsigned(const std::string& v, const char* key = nullptr, const std::string& whole = "") {
  if (const auto x = strict_unsigned(v)) return *x;
  if (key) throw std::invalid_argument(fmt::format("key '{}': expected AxBxC, got '{}'", key, whole));
  throw std::invalid_argument(fmt::format("expected a decimal or 0x-hex integer within 64 bits, got '{}'", v));
}

// Whether the product of `factors` stays within INT64_MAX (a factor 0 makes it 0).
inline bool product_fits(const std::vector<uint64_t>& factors) {
  uint64_t p = 1;
  for (uint64_t f : factors) {
    if (f == 0) return true;
    if (__builtin_mul_overflow(p, f, &p) || p > static_cast<uint64_t>(INT64_MAX)) return false;
  }
  return true;
}

// Every count the simulator multiplies out must fit in 63 bits: a DMA of shape 2^32 x 2^32
// x 1 would wrap its byte count to 0 and pass the "outside memory" check.
inline void check_size(const Operation& op) {
  std::vector<std::pair<std::string, std::vector<uint64_t>>> products;
  if (const auto* mm = std::get_if<MatmulOp>(&op)) {
    const auto [m, k, n] = std::array{mm->m, mm->k, mm->n};
    products.push_back({fmt::format("matmul m*k*n = {}*{}*{}", m, k, n), {uint64_t(m), uint64_t(k), uint64_t(n)}});
  } else if (const auto* dma = std::get_if<DmaOp>(&op)) {
    const DmaDescriptor& d = dma->descriptor;
    products.push_back({fmt::format("dma shape {}x{}x{} * elem {}", d.shape[0], d.shape[1], d.shape[2], d.element_bytes),
                        {d.shape[0], d.shape[1], d.shape[2], d.element_bytes}});
    // x4 and x2: a side's base plus its extent (three such terms) still fits in 64 bits.
    for (const DmaEndpoint* side : {&d.src, &d.dst}) {
      products.push_back({fmt::format("dma address {:#x} * 2", side->base), {side->base, 2}});
      for (int k = 0; k < 3; ++k)
        products.push_back({fmt::format("dma (shape[{}] - 1) * stride[{}] * elem", k, k),
                            {d.shape[k] == 0 ? 0 : d.shape[k] - 1, side->stride[k], d.element_bytes, 4}});
    }
  } else if (const auto* vpu = std::get_if<VpuOp>(&op)) {  // x8: bytes of the widest element
    products.push_back({fmt::format("vector rows*cols = {}*{}", vpu->rows, vpu->cols),
                        {uint64_t(vpu->rows), uint64_t(vpu->cols), 8}});
  }
  for (const auto& [what, factors] : products)
    if (!product_fits(factors)) throw std::invalid_argument(what + " overflows 63 bits");
}

// Reads one line's key=value pairs; every key must be consumed exactly once.
class Fields {
 public:
  explicit Fields(const std::vector<Token>& tokens, size_t first) {
    for (size_t i = first; i < tokens.size(); ++i) {
      if (tokens[i].key.empty())
        throw std::invalid_argument(fmt::format("expected key=value, got '{}'", tokens[i].value));
      if (tokens[i].key == "wait" || tokens[i].key == "signal" || tokens[i].key == "msg")
        repeated_[tokens[i].key].push_back(tokens[i].value);
      else if (!values_.emplace(tokens[i].key, tokens[i].value).second)
        throw std::invalid_argument(fmt::format("key '{}' given twice", tokens[i].key));
    }
  }
  std::string text(const char* key) {
    auto it = values_.find(key);
    if (it == values_.end()) throw std::invalid_argument(fmt::format("missing key '{}'", key));
    std::string v = it->second;
    values_.erase(it);
    return v;
  }
  // An integer in [min, max]: a layer index is an int, so "layer=2147483648" is refused, not
  // cast negative.
  int64_t integer(const char* key, int64_t min, int64_t max = INT64_MAX) {
    const std::string v = text(key);
    const auto x = strict_unsigned(v);
    if (!x || *x > static_cast<uint64_t>(max) || static_cast<int64_t>(*x) < min)
      throw std::invalid_argument(max == INT64_MAX
                                      ? fmt::format("key '{}': expected an integer >= {}, got '{}'", key, min, v)
                                      : fmt::format("key '{}': expected an integer in [{}, {}], got '{}'", key, min, max, v));
    return static_cast<int64_t>(*x);
  }
  // "hbm:0x1000" or "<scratchpad>:<offset>".
  DmaEndpoint endpoint(const char* key) {
    const std::string v = text(key);
    const auto colon = v.find(':');
    const std::string space = v.substr(0, colon);
    DmaEndpoint e;
    bool ok = colon != std::string::npos;
    if (ok && space != "hbm") {
      e.space = -2;
      for (size_t i = 0; i < std::size(kSpaces); ++i)
        if (space == kSpaces[i]) e.space = static_cast<int>(i);
      ok = e.space >= 0;
    }
    if (ok) {
      const std::string addr = v.substr(colon + 1);
      e.base = parse_unsigned(addr);
      ok = !addr.empty() && addr[0] != '-';
    }
    if (!ok)
      throw std::invalid_argument(fmt::format(
          "key '{}': expected <space>:<address> with space hbm, vmem, weights or accumulators, got '{}'", key, v));
    return e;
  }
  std::array<uint64_t, 3> triple(const char* key) {
    const std::string v = text(key);
    std::array<uint64_t, 3> out{};
    size_t pos = 0;
    for (int i = 0; i < 3; ++i) {
      const size_t x = i < 2 ? v.find('x', pos) : v.size();
      const std::string part = v.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
      if (x == std::string::npos || part.empty() || part[0] == '-')
        throw std::invalid_argument(fmt::format("key '{}': expected AxBxC, got '{}'", key, v));
      out[i] = parse_unsigned(part, key, v);
      pos = x + 1;
    }
    return out;
  }
  DType dtype(const char* key) {
    const std::string v = text(key);
    if (auto t = kDTypeNames.parse(v)) return *t;
    throw std::invalid_argument(fmt::format("key '{}': expected one of {}, got '{}'", key, kDTypeNames.choices(), v));
  }
  double scale(const char* key) {
    const std::string v = text(key);
    size_t used = 0;
    double x = 0;
    try {
      x = std::stod(v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != v.size() || v.empty() || !(x > 0) || x > 1e30)
      throw std::invalid_argument(fmt::format("key '{}': expected a positive number, got '{}'", key, v));
    return x;
  }
  std::vector<std::string> all(const char* key) { return repeated_[key]; }
  bool has(const char* key) const { return values_.count(key) != 0; }
  // After a line is read: anything left is a key this line does not take.
  void expect_consumed(const std::vector<std::string>& allowed) const {
    if (!values_.empty())
      throw std::invalid_argument(fmt::format("unknown key '{}'{}", values_.begin()->first,
                                              did_you_mean(values_.begin()->first, allowed)));
  }

 private:
  std::map<std::string, std::string> values_;
  std::map<std::string, std::vector<std::string>> repeated_;
};

struct FieldReader {
  Fields& f;
  std::vector<std::string> keys;
  template <class T>
  void integer(const char* key, T& v, int64_t min) {
    keys.emplace_back(key);
    constexpr auto top = static_cast<uint64_t>(std::numeric_limits<T>::max());
    v = static_cast<T>(f.integer(key, min, top > INT64_MAX ? INT64_MAX : static_cast<int64_t>(top)));
  }
  void optional_integer(const char* key, int64_t& v) {
    keys.emplace_back(key);
    v = f.has(key) ? f.integer(key, 0) : 0;
  }
  void dtype(const char* key, DType& t) { keys.emplace_back(key), t = f.dtype(key); }
  void optional_dtype(const char* key, std::optional<DType>& t) {
    keys.emplace_back(key);
    if (f.has(key)) t = f.dtype(key);
  }
  void scale(const char* key, double& v, bool) {
    keys.emplace_back(key);
    if (f.has(key)) v = f.scale(key);
  }
  void vector_kind(const char* key, VectorKind& k) {
    keys.emplace_back(key);
    const std::string v = f.text(key);
    const auto parsed = kVectorKindNames.parse(v);
    if (!parsed) throw std::invalid_argument(fmt::format("key '{}': unknown vector op '{}'", key, v));
    k = *parsed;
  }
  void endpoint(const char* key, DmaEndpoint& e) {
    keys.emplace_back(key);
    const auto stride = e.stride;  // read separately (src_stride / dst_stride)
    e = f.endpoint(key);
    e.stride = stride;
  }
  void triple(const char* key, std::array<uint64_t, 3>& v) { keys.emplace_back(key), v = f.triple(key); }
  void messages(const char* key, std::vector<IciCopy>& copies) {
    keys.emplace_back(key);
    for (const std::string& text : f.all(key)) {
      const auto bad = [&] {
        return std::invalid_argument(fmt::format(
            "key '{}': expected <to chip>,<bytes>,<semaphore>,<+|->[,<src addr>,<dst addr>], got '{}'", key, text));
      };
      std::vector<std::string> parts;
      for (size_t at = 0;;) {
        const size_t comma = text.find(',', at);
        parts.push_back(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        if (comma == std::string::npos) break;
        at = comma + 1;
      }
      if ((parts.size() != 4 && parts.size() != 6) || parts[2].empty() || (parts[3] != "+" && parts[3] != "-")) throw bad();
      IciCopy c;
      const auto to = strict_unsigned(parts[0]), bytes = strict_unsigned(parts[1]);
      if (!to || *to > static_cast<uint64_t>(INT32_MAX) || !bytes || *bytes == 0 || *bytes > static_cast<uint64_t>(INT64_MAX))
        throw bad();
      c.to = static_cast<int>(*to);
      c.bytes = *bytes;
      c.recv_sem = parts[2];
      c.tie = parts[3] == "-" ? -1 : +1;
      if (parts.size() == 6) {
        const auto src = strict_unsigned(parts[4]), dst = strict_unsigned(parts[5]);
        if (!src || !dst) throw bad();
        c.via_hbm = true;
        c.src_addr = *src;
        c.dst_addr = *dst;
      }
      copies.push_back(std::move(c));
    }
    if (copies.empty()) throw std::invalid_argument(fmt::format("expected at least one '{}=...'", key));
  }
};

}  // namespace systolic::trace_detail
