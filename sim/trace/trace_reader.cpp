#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "sim/capacity.hpp"
#include "models/mxu/operands.hpp"
#include "sim/error.hpp"
#include "sim/suggest.hpp"
#include "sim/trace/trace.hpp"
#include "sim/trace/trace_fields.hpp"
#include "sim/trace/trace_header.hpp"
#include "sim/trace/trace_tokens.hpp"

namespace systolic {
namespace {

using trace_detail::Token;

// Reads one line's key=value pairs; every key must be consumed exactly once.
// Decimal or 0x-hex, all of the text; throws std::invalid_argument otherwise.
uint64_t parse_unsigned(const std::string& v, const char* key = nullptr, const std::string& whole = "") {
  size_t used = 0;
  uint64_t x = 0;
  try {
    x = std::stoull(v, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || v.empty()) {
    if (key) throw std::invalid_argument(fmt::format("key '{}': expected AxBxC, got '{}'", key, whole));
    throw std::invalid_argument(fmt::format("expected an integer, got '{}'", v));
  }
  return x;
}

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
  int64_t integer(const char* key, int64_t min) {
    const std::string v = text(key);
    const uint64_t x = parse_unsigned(v);
    if (v.empty() || v[0] == '-' || x > static_cast<uint64_t>(INT64_MAX) || static_cast<int64_t>(x) < min)
      throw std::invalid_argument(fmt::format("key '{}': expected an integer >= {}, got '{}'", key, min, v));
    return static_cast<int64_t>(x);
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
      for (size_t i = 0; i < std::size(trace_detail::kSpaces); ++i)
        if (space == trace_detail::kSpaces[i]) e.space = static_cast<int>(i);
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
  void integer(const char* key, T& v, int64_t min) { keys.push_back(key), v = static_cast<T>(f.integer(key, min)); }
  void optional_integer(const char* key, int64_t& v) {
    keys.push_back(key);
    v = f.has(key) ? f.integer(key, 0) : 0;
  }
  void dtype(const char* key, DType& t) { keys.push_back(key), t = f.dtype(key); }
  void optional_dtype(const char* key, std::optional<DType>& t) {
    keys.push_back(key);
    if (f.has(key)) t = f.dtype(key);
  }
  void scale(const char* key, double& v, bool) {
    keys.push_back(key);
    if (f.has(key)) v = f.scale(key);
  }
  void vector_kind(const char* key, VectorKind& k) {
    keys.push_back(key);
    const std::string v = f.text(key);
    const auto parsed = kVectorKindNames.parse(v);
    if (!parsed) throw std::invalid_argument(fmt::format("key '{}': unknown vector op '{}'", key, v));
    k = *parsed;
  }
  void endpoint(const char* key, DmaEndpoint& e) {
    keys.push_back(key);
    const auto stride = e.stride;  // read separately (src_stride / dst_stride)
    e = f.endpoint(key);
    e.stride = stride;
  }
  void triple(const char* key, std::array<uint64_t, 3>& v) { keys.push_back(key), v = f.triple(key); }
  void messages(const char* key, std::vector<IciCopy>& copies) {
    keys.push_back(key);
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
      try {
        size_t used = 0;
        c.to = std::stoi(parts[0], &used);
        if (used != parts[0].size() || c.to < 0) throw bad();
        c.bytes = std::stoull(parts[1], &used);
        if (used != parts[1].size() || c.bytes == 0) throw bad();
        c.recv_sem = parts[2];
        c.tie = parts[3] == "-" ? -1 : +1;
        if (parts.size() == 6) {
          c.via_hbm = true;
          c.src_addr = std::stoull(parts[4], &used, 0);
          if (used != parts[4].size()) throw bad();
          c.dst_addr = std::stoull(parts[5], &used, 0);
          if (used != parts[5].size()) throw bad();
        }
      } catch (const std::logic_error&) {
        throw bad();
      }
      copies.push_back(std::move(c));
    }
    if (copies.empty()) throw std::invalid_argument(fmt::format("expected at least one '{}=...'", key));
  }
};

class Parser {
 public:
  Parser(std::string name, const ChipConfig& config) : name_(std::move(name)), config_(config) {}

  Trace parse(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      ++line_;
      try {
        const auto tokens = trace_detail::tokenize(line);
        if (!tokens.empty()) statement(tokens);
      } catch (const std::invalid_argument& e) {
        fail(e.what());
      }
    }
    if (!seen_header_) fail(fmt::format("empty trace: expected the header 'systolic-trace {}'", kTraceFormatVersion));
    if (!seen_chip_) fail("expected the 'chip rows=... cols=... mxus=...' line after the header");
    check_semaphores();
    return {std::move(header_), std::move(program_)};
  }

 private:
  [[noreturn]] void fail(const std::string& msg, int line = 0) const {
    throw InputError(fmt::format("{}:{}: {}", name_, line ? line : line_, msg));
  }

  void statement(const std::vector<Token>& t) {
    const std::string& word = t[0].value;
    if (!t[0].key.empty()) fail(fmt::format("expected a statement, got '{}={}'", t[0].key, word));
    if (!seen_header_) return header(t);
    if (compiled_for(t)) return;
    if (word == "chip") return chip(t);
    if (word == "layer") return layer(t);
    if (word == "sem") return semaphore(t);
    if (word == "buffer") return buffer(t);
    if (word == "stream") return stream(t);
    instruction(t);
  }

  void header(const std::vector<Token>& t) {
    if (t.size() != 2 || t[0].value != "systolic-trace")
      fail("expected the header 'systolic-trace <version>' on the first line");
    if (t[1].value != std::to_string(kTraceFormatVersion))
      fail(fmt::format("trace format version {} is not supported (this build reads version {}): recompile the "
                       "trace with `systolic compile`",
                       t[1].value, kTraceFormatVersion));
    seen_header_ = true;
  }

  // The header lines between 'systolic-trace' and 'chip', what the program was compiled for:
  // each once (a 'config' line once per key). False for a word that is not one of them.
  bool compiled_for(const std::vector<Token>& t) {
    using HeaderLines = trace_detail::HeaderLines;
    struct Kind {
      const char* word;
      int HeaderLines::*at;
      void (Parser::*read)(const std::vector<Token>&);
    };
    static const Kind kinds[] = {{"dataflow", &HeaderLines::dataflow, &Parser::dataflow_line},
                                 {"memory", &HeaderLines::memory, &Parser::memory_line},
                                 {"dtypes", &HeaderLines::dtypes, &Parser::dtypes_line},
                                 {"system", &HeaderLines::system, &Parser::system_line},
                                 {"config_hash", &HeaderLines::hash, &Parser::hash_line},
                                 {"config", nullptr, &Parser::config_line}};
    for (const Kind& k : kinds) {
      if (t[0].value != k.word) continue;
      if (seen_chip_) fail(fmt::format("'{}' belongs to the header, before the 'chip' line", k.word));
      if (k.at) {
        if (at_.*k.at) fail(fmt::format("'{}' given twice (first on line {})", k.word, at_.*k.at));
        at_.*k.at = line_;
      }
      (this->*k.read)(t);
      return true;
    }
    return false;
  }

  // The value of a '<word> <value>' line.
  const std::string& single_value(const std::vector<Token>& t) {
    if (t.size() != 2 || !t[1].key.empty()) fail(fmt::format("expected '{} <value>'", t[0].value));
    return t[1].value;
  }

  void dataflow_line(const std::vector<Token>& t) {
    const std::string& name = single_value(t);
    const auto d = kDataflowNames.parse(name);
    if (!d) fail(fmt::format("unknown dataflow '{}': expected one of {}", name, kDataflowNames.choices()));
    header_.dataflow = *d;
  }

  void hash_line(const std::vector<Token>& t) { header_.config_hash = parse_unsigned(single_value(t)); }

  void memory_line(const std::vector<Token>& t) {
    Fields f(t, 1);
    const std::string ideal = f.text("ideal");
    f.expect_consumed({"ideal"});
    if (ideal != "true" && ideal != "false") fail(fmt::format("key 'ideal': expected true or false, got '{}'", ideal));
    header_.memory_ideal = ideal == "true";
  }

  void system_line(const std::vector<Token>& t) {
    Fields f(t, 1);
    header_.chips = f.integer("chips", 1);
    header_.chip = f.integer("chip", 0);
    f.expect_consumed({"chips", "chip"});
  }

  // dtypes <config key>=<dtype>...
  void dtypes_line(const std::vector<Token>& t) {
    Fields f(t, 1);  // rejects a bare word and a key given twice
    for (size_t i = 1; i < t.size(); ++i)
      header_.dtypes.push_back({t[i].key, std::string(kDTypeNames.name(f.dtype(t[i].key.c_str())))});
  }

  // config <key> <value>: one key the program or its timing depends on.
  void config_line(const std::vector<Token>& t) {
    if (t.size() != 3 || !t[1].key.empty() || !t[2].key.empty()) fail("expected 'config <key> <value>'");
    const auto [it, added] = at_.config.emplace(t[1].value, line_);
    if (!added) fail(fmt::format("config key '{}' given twice (first on line {})", t[1].value, it->second));
    header_.config.push_back({t[1].value, t[2].value});
  }

  // At the 'chip' line the header is complete: check it against the config.
  void finish_header() {
    const std::pair<const char*, int> needed[] = {{"dataflow", at_.dataflow}, {"memory", at_.memory},
                                                  {"dtypes", at_.dtypes},     {"system", at_.system},
                                                  {"config_hash", at_.hash}};
    for (const auto& [word, at] : needed)
      if (!at)
        fail(fmt::format("expected a '{}' line before 'chip' (the header `systolic compile` writes, "
                         "docs/trace-format.md)",
                         word));
    std::sort(header_.config.begin(), header_.config.end(),
              [](const ConfigLine& a, const ConfigLine& b) { return a.key < b.key; });
    trace_detail::check_header(header_, at_, config_, name_);
  }

  void chip(const std::vector<Token>& t) {
    if (seen_chip_) fail("'chip' given twice");
    finish_header();
    Fields f(t, 1);
    const int64_t rows = f.integer("rows", 1), cols = f.integer("cols", 1), mxus = f.integer("mxus", 1);
    f.expect_consumed({"rows", "cols", "mxus"});
    if (rows != config_.mxu.rows || cols != config_.mxu.cols)
      fail(fmt::format("trace compiled for a {}x{} array, but the config has mxu.rows={} mxu.cols={}",
                       rows, cols, config_.mxu.rows, config_.mxu.cols));
    if (mxus > config_.mxu.count)
      fail(fmt::format("trace compiled for {} MXUs, but the config has mxu.count={}", mxus,
                       config_.mxu.count));
    seen_chip_ = true;
  }

  void layer(const std::vector<Token>& t) {
    if (t.size() < 2 || !t[1].key.empty()) fail("expected 'layer <index> name=... m=... k=... n=...'");
    if (t[1].value != std::to_string(program_.layers.size()))
      fail(fmt::format("expected layer index {}, got '{}'", program_.layers.size(), t[1].value));
    Fields f(t, 2);
    LayerInfo l;
    l.name = f.text("name");
    l.kind = f.text("kind");
    if (l.kind != "matmul" && l.kind != "attention" && l.kind != "vector" && l.kind != "collective")
      fail(fmt::format("key 'kind': expected matmul, attention, vector or collective, got '{}'", l.kind));
    l.m = f.integer("m", 1);
    l.k = f.integer("k", 1);
    l.n = f.integer("n", 1);
    l.dtype = f.dtype("dtype");
    l.repeat = f.integer("repeat", 1);
    l.useful_macs = static_cast<uint64_t>(f.integer("macs", 0));
    l.source = f.text("source");
    f.expect_consumed({"name", "kind", "m", "k", "n", "dtype", "repeat", "macs", "source"});
    program_.layers.push_back(l);
  }

  // buffer <name> space=<scratchpad> offset=<bytes> bytes=<bytes>: inside its scratchpad and
  // overlapping no other buffer (every buffer is live for the whole program).
  void buffer(const std::vector<Token>& t) {
    if (t.size() < 2 || !t[1].key.empty()) fail("expected 'buffer <name> space=... offset=... bytes=...'");
    Fields f(t, 2);
    Buffer b;
    b.name = t[1].value;
    const std::string space = f.text("space");
    b.space = -1;
    for (size_t i = 0; i < std::size(trace_detail::kSpaces); ++i)
      if (space == trace_detail::kSpaces[i]) b.space = static_cast<int>(i);
    if (b.space < 0)
      fail(fmt::format("buffer '{}': expected space vmem, weights or accumulators, got '{}'", b.name, space));
    b.offset = static_cast<uint64_t>(f.integer("offset", 0));
    b.bytes = static_cast<uint64_t>(f.integer("bytes", 1));
    f.expect_consumed({"space", "offset", "bytes"});
    const ScratchpadConfig pad = config_.sram.all()[static_cast<size_t>(b.space)];  // a copy: all() returns a temporary
    if (b.offset > pad.capacity_bytes || b.bytes > pad.capacity_bytes - b.offset)
      fail(fmt::format("buffer '{}' [{:#x}, {:#x}) is out of bounds: {} holds {} ({})", b.name, b.offset,
                       b.offset + b.bytes, space, format_bytes(pad.capacity_bytes), pad.key("bytes")));
    for (const Buffer& o : program_.buffers) {
      if (o.name == b.name) fail(fmt::format("buffer '{}' declared twice", b.name));
      if (o.space == b.space && b.offset < o.offset + o.bytes && o.offset < b.offset + b.bytes)
        fail(fmt::format("buffer '{}' [{:#x}, {:#x}) overlaps live buffer '{}' [{:#x}, {:#x}) in {}", b.name,
                         b.offset, b.offset + b.bytes, o.name, o.offset, o.offset + o.bytes, space));
    }
    program_.buffers.push_back(b);
  }

  void semaphore(const std::vector<Token>& t) {
    if (t.size() != 2 || !t[1].key.empty()) fail("expected 'sem <name>'");
    if (!sems_.emplace(t[1].value, static_cast<int>(program_.semaphores.size())).second)
      fail(fmt::format("semaphore '{}' declared twice", t[1].value));
    program_.semaphores.push_back(t[1].value);
  }

  void stream(const std::vector<Token>& t) {
    if (!seen_chip_) fail("expected the 'chip rows=... cols=... mxus=...' line before any stream");
    if (t.size() != 2 || !t[1].key.empty()) fail("expected 'stream <engine>', e.g. 'stream mxu0'");
    const std::string& e = t[1].value;
    const int mxus = static_cast<int>(config_.mxu.count), dmas = static_cast<int>(config_.dma.engine.engines);
    EngineId id{EngineKind::mxu, -1};
    const int icis = config_.ici.topology == IciTopologyKind::none ? 0 : 1;
    for (EngineKind kind : {EngineKind::mxu, EngineKind::dma, EngineKind::vpu, EngineKind::ici}) {
      const std::string prefix = engine_name(kind, 0).substr(0, 3);
      const int count = kind == EngineKind::mxu ? mxus : kind == EngineKind::dma ? dmas : kind == EngineKind::vpu ? 1 : icis;
      if (e.rfind(prefix, 0) == 0 && e.size() > prefix.size() && e.size() < prefix.size() + 6 &&
          e.find_first_not_of("0123456789", prefix.size()) == std::string::npos &&
          std::stoi(e.substr(prefix.size())) < count)
        id = {kind, std::stoi(e.substr(prefix.size()))};
    }
    if (id.index < 0)
      fail(fmt::format("unknown engine '{}': this chip has mxu0..mxu{}, dma0..dma{}, vpu0{}", e, mxus - 1, dmas - 1,
                       icis ? " and ici0" : " (ici0 only on multi-chip configs, ici.topology)"));
    for (const auto& s : program_.streams)
      if (s.engine == id) fail(fmt::format("stream '{}' given twice", e));
    program_.streams.push_back({id, {}});
  }

  void instruction(const std::vector<Token>& t) {
    if (program_.streams.empty()) fail(fmt::format("instruction '{}' outside any stream", t[0].value));
    Stream& s = program_.streams.back();
    std::vector<std::string> names;
    int op_index = -1;
    for (size_t i = 0; i < std::size(trace_detail::kOps); ++i) {
      names.push_back(trace_detail::kOps[i].name);
      if (t[0].value == trace_detail::kOps[i].name) op_index = static_cast<int>(i);
    }
    if (op_index < 0)
      fail(fmt::format("unknown opcode '{}'{}", t[0].value, did_you_mean(t[0].value, names)));
    if (trace_detail::kOps[op_index].engine != s.engine.kind)
      fail(fmt::format("opcode '{}' cannot run on {}", t[0].value, engine_name(s.engine.kind, s.engine.index)));

    Fields f(t, 1);
    Instruction instr;
    instr.layer = static_cast<int>(f.integer("layer", 0));
    if (instr.layer >= static_cast<int>(program_.layers.size()))
      fail(fmt::format("layer {} is not declared (declare it with a 'layer' line first)", instr.layer));
    FieldReader reader{f, {"layer", "wait", "signal", "frees"}};
    instr.op = trace_detail::make_op(static_cast<size_t>(op_index));
    std::visit([&](auto& op) { trace_detail::fields(op, reader); }, instr.op);
    if (const auto* mm = std::get_if<MatmulOp>(&instr.op)) check_operands(*mm);
    if (f.has("frees")) {
      program_.regions.push_back(region(f.text("frees")));
      instr.frees = static_cast<int>(program_.regions.size()) - 1;
    }
    f.expect_consumed(reader.keys);
    for (const auto& w : f.all("wait")) {
      const auto ge = w.rfind(">=");
      if (ge == std::string::npos) fail(fmt::format("wait '{}': expected <semaphore>>=<count>", w));
      const std::string count = w.substr(ge + 2);
      if (count.empty() || count.find_first_not_of("0123456789") != std::string::npos)
        fail(fmt::format("wait '{}': expected a count after '>='", w));
      instr.waits.push_back({semaphore_id(w.substr(0, ge)), std::stoull(count)});
      wait_lines_.push_back({line_, instr.waits.back()});
    }
    for (const auto& sig : f.all("signal")) instr.signals.push_back(semaphore_id(sig));
    s.instructions.push_back(std::move(instr));
  }

  // A matmul's types must be a pair the MXU multiplies as given (B already dequantised).
  void check_operands(const MatmulOp& op) const {
    const auto ops = mxu_operands(op.a(), op.b());
    const auto* why = std::get_if<std::string>(&ops);
    if (!why && (std::get<MxuOperands>(ops).compute != op.dtype || std::get<MxuOperands>(ops).dequantize_b))
      fail(fmt::format("matmul dtype={} a={} b={}: the MXU multiplies these in {}{}; expected dtype={} with "
                       "a and b the stored types (integer weights dequantised first: b=dtype)",
                       kDTypeNames.name(op.dtype), kDTypeNames.name(op.a()), kDTypeNames.name(op.b()),
                       kDTypeNames.name(std::get<MxuOperands>(ops).compute),
                       std::get<MxuOperands>(ops).dequantize_b ? " after a dequantize op" : "",
                       kDTypeNames.name(std::get<MxuOperands>(ops).compute)));
    if (why) fail(fmt::format("matmul dtype={} a={} b={}: {}", kDTypeNames.name(op.dtype), kDTypeNames.name(op.a()),
                              kDTypeNames.name(op.b()), *why));
  }

  // frees=<scratchpad>:<offset>+<bytes>@<semaphore>: an on-chip intermediate this instruction
  // reads last (program.hpp, SramRegion), inside its scratchpad.
  SramRegion region(const std::string& v) {
    const size_t colon = v.find(':'), plus = v.find('+', colon), at = v.find('@', plus);
    const auto bad = [&]() {
      fail(fmt::format("frees '{}': expected <scratchpad>:<offset>+<bytes>@<semaphore>, scratchpad vmem, "
                       "weights or accumulators",
                       v));
    };
    if (colon == std::string::npos || plus == std::string::npos || at == std::string::npos) bad();
    SramRegion r;
    r.space = -1;
    for (size_t i = 0; i < std::size(trace_detail::kSpaces); ++i)
      if (v.substr(0, colon) == trace_detail::kSpaces[i]) r.space = static_cast<int>(i);
    const std::string offset = v.substr(colon + 1, plus - colon - 1), bytes = v.substr(plus + 1, at - plus - 1);
    if (r.space < 0 || offset.empty() || bytes.empty() || offset[0] == '-' || bytes[0] == '-') bad();
    r.offset = parse_unsigned(offset);
    r.bytes = parse_unsigned(bytes);
    const ScratchpadConfig pad = config_.sram.all()[static_cast<size_t>(r.space)];
    if (r.offset > pad.capacity_bytes || r.bytes > pad.capacity_bytes - r.offset)
      fail(fmt::format("frees '{}': [{:#x}, {:#x}) is past {} ({} B)", v, r.offset, r.offset + r.bytes,
                       v.substr(0, colon), pad.capacity_bytes));
    r.full_sem = semaphore_id(v.substr(at + 1));
    return r;
  }

  int semaphore_id(const std::string& name) {
    auto it = sems_.find(name);
    if (it == sems_.end()) {
      std::vector<std::string> known(program_.semaphores.begin(), program_.semaphores.end());
      fail(fmt::format("semaphore '{}' is not declared{}", name, did_you_mean(name, known)));
    }
    return it->second;
  }

  // A wait beyond the number of signals its semaphore will ever get can never be satisfied.
  void check_semaphores() const {
    std::vector<uint64_t> signals(program_.semaphores.size(), 0);
    for (const auto& s : program_.streams)
      for (const auto& i : s.instructions)
        for (int sig : i.signals) ++signals[static_cast<size_t>(sig)];
    // On a multi-chip config, other chips' messages signal this chip's receive semaphores: a
    // semaphore this program never signals may be one of those, which one file cannot check.
    const bool remote = config_.ici.topology != IciTopologyKind::none;
    for (const auto& [line, w] : wait_lines_)
      if (w.at_least > signals[static_cast<size_t>(w.sem)] && !(remote && signals[static_cast<size_t>(w.sem)] == 0))
        fail(fmt::format("semaphore '{}' is waited for until >= {} but only ever signalled {} time(s)",
                         program_.semaphores[static_cast<size_t>(w.sem)], w.at_least,
                         signals[static_cast<size_t>(w.sem)]),
             line);
  }

  std::string name_;
  const ChipConfig& config_;
  Program program_;
  TraceHeader header_;
  trace_detail::HeaderLines at_;
  int line_ = 0;
  bool seen_header_ = false, seen_chip_ = false;
  std::map<std::string, int> sems_;
  std::vector<std::pair<int, SemWait>> wait_lines_;
};

}  // namespace

Trace parse_trace(const std::string& text, const std::string& name, const ChipConfig& config) {
  Trace trace = Parser(name, config).parse(text);
  require_program_fits(config, trace.program, name);
  return trace;
}

Trace read_trace(const std::string& path, const ChipConfig& config) {
  std::ifstream f(path);
  if (!f) throw InputError(fmt::format("{}: cannot open trace file", path));
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_trace(ss.str(), path, config);
}

}  // namespace systolic
