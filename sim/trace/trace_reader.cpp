// Reads a compiled trace (docs/trace-format.md) into a program, checking it as it goes.
// Why one file of about 400 lines: one parser class, whose statements each read and update the
// same state (the line, the header, the buffers, semaphores and streams declared so far).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "models/common/error.hpp"
#include "models/common/suggest.hpp"
#include "models/mxu/operands.hpp"
#include "sim/compile/capacity.hpp"
#include "sim/trace/trace.hpp"
#include "sim/trace/trace_field_reader.hpp"
#include "sim/trace/trace_fields.hpp"
#include "sim/trace/trace_header.hpp"
#include "sim/trace/trace_tokens.hpp"

namespace systolic {
namespace {

using trace_detail::FieldReader;
using trace_detail::Fields;
using trace_detail::parse_unsigned;
using trace_detail::Token;

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
    const Dataflow* d = find_dataflow(name);
    if (!d) fail(fmt::format("unknown dataflow '{}': expected one of {}", name, dataflow_choices()));
    header_.dataflow = d->kind();
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
    const std::string kind = f.text("kind");
    const auto parsed = kLayerKindNames.parse(kind);
    if (!parsed) fail(fmt::format("key 'kind': expected {}, got '{}'", layer_kind_choices(), kind));
    l.kind = *parsed;
    l.m = f.integer("m", 1);
    l.k = f.integer("k", 1);
    l.n = f.integer("n", 1);
    l.dtype = f.dtype("dtype");
    l.repeat = f.integer("repeat", 1);
    l.useful_macs = static_cast<uint64_t>(f.integer("macs", 0));
    if (!trace_detail::product_fits({uint64_t(l.m), uint64_t(l.k), uint64_t(l.n), uint64_t(l.repeat)}))
      fail(fmt::format("layer m*k*n*repeat = {}*{}*{}*{} overflows 63 bits", l.m, l.k, l.n, l.repeat));
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
      names.emplace_back(trace_detail::kOps[i].name);
      if (t[0].value == trace_detail::kOps[i].name) op_index = static_cast<int>(i);
    }
    if (op_index < 0)
      fail(fmt::format("unknown opcode '{}'{}", t[0].value, did_you_mean(t[0].value, names)));
    if (trace_detail::kOps[op_index].engine != s.engine.kind)
      fail(fmt::format("opcode '{}' cannot run on {}", t[0].value, engine_name(s.engine.kind, s.engine.index)));

    Fields f(t, 1);
    Instruction instr;
    instr.layer = static_cast<int>(f.integer("layer", 0, INT32_MAX));
    if (instr.layer >= static_cast<int>(program_.layers.size()))
      fail(fmt::format("layer {} is not declared (declare it with a 'layer' line first)", instr.layer));
    FieldReader reader{f, {"layer", "wait", "signal", "frees"}};
    instr.op = trace_detail::make_op(static_cast<size_t>(op_index));
    std::visit([&](auto& op) { trace_detail::fields(op, reader); }, instr.op);
    if (const auto* mm = std::get_if<MatmulOp>(&instr.op)) check_operands(*mm);
    trace_detail::check_size(instr.op);
    if (const auto* mm = std::get_if<MatmulOp>(&instr.op))
      check_inside_layer(*mm, program_.layers[static_cast<size_t>(instr.layer)]);
    if (f.has("frees")) {
      program_.regions.push_back(region(f.text("frees")));
      instr.frees = static_cast<int>(program_.regions.size()) - 1;
    }
    f.expect_consumed(reader.keys);
    for (const auto& w : f.all("wait")) {
      const auto ge = w.rfind(">=");
      if (ge == std::string::npos) fail(fmt::format("wait '{}': expected <semaphore>>=<count>", w));
      const auto count = trace_detail::strict_unsigned(w.substr(ge + 2));
      if (!count || w.compare(ge + 2, 2, "0x") == 0 || *count > UINT32_MAX)
        fail(fmt::format("wait '{}': expected a decimal count below 2^32 after '>='", w));
      instr.waits.push_back({semaphore_id(w.substr(0, ge)), *count});
      wait_lines_.emplace_back(line_, instr.waits.back());
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

  // A matmul computes a block of its layer: rows [m0, m0 + m), columns [n0, n0 + n), at most
  // the layer's k, of one of its `repeat` instances. What the compiler emits always is; a
  // matmul past its layer would be timed for work the layer's MACs and the report never count
  // (a trace's m = 2^28 on a 4-row layer ran 2^28 cycles for 64 MACs).
  void check_inside_layer(const MatmulOp& op, const LayerInfo& l) const {
    const auto past = [](int64_t offset, int64_t size, int64_t whole) { return offset > whole - size; };
    if (past(op.m_offset, op.m, l.m) || op.k > l.k || past(op.n_offset, op.n, l.n) || op.instance >= l.repeat)
      fail(fmt::format(
          "matmul m0={} m={} k={} n0={} n={} inst={}: outside its layer '{}' (m={} k={} n={} "
          "repeat={}); expected m0 + m <= m, k <= k, n0 + n <= n and inst < repeat",
          op.m_offset, op.m, op.k, op.n_offset, op.n, op.instance, l.name, l.m, l.k, l.n, l.repeat));
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
