// SCALE-Sim v2 topology CSVs (docs/workloads.md). The form is detected from the header:
//   convolution: Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels,
//                Num Filter, Strides,            (or "Stride Height, Stride Width" for two strides)
//   GEMM:        Layer, M, N, K,
// Both may end with SCALE-Sim's optional "Sparsity" column (only dense "1:1" is accepted).
// Parsing follows scalesim/topology_utils.py (load_arrays_conv / load_arrays_gemm), with three
// tolerances SCALE-Sim lacks: the trailing comma is optional, blank lines may appear anywhere,
// and '#' starts a comment to the end of the line (SCALE-Sim's own MobileNet files end
// depthwise rows with ",#dw", which it drops as the last field).
#include "sim/workload/scalesim.hpp"

#include "sim/common/csv_fields.hpp"

#include <cctype>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "sim/workload/detail.hpp"

namespace systolic {

std::optional<Im2col> scalesim_im2col(const ConvLayer& l) {
  using workload_detail::checked_mul;
  // ceil((H - F + S) / S) == (H - F) / S rounded up, + 1; H >= F >= 1 so nothing overflows.
  const auto out = [](int64_t in, int64_t filter, int64_t stride) {
    const int64_t span = in - filter;
    return span / stride + (span % stride != 0 ? 1 : 0) + 1;
  };
  Im2col r;
  r.ofmap_h = out(l.ifmap_h, l.filter_h, l.stride_h);
  r.ofmap_w = out(l.ifmap_w, l.filter_w, l.stride_w);
  const auto m = checked_mul(r.ofmap_h, r.ofmap_w);
  const auto fhw = checked_mul(l.filter_h, l.filter_w);
  const auto k = fhw ? checked_mul(*fhw, l.channels) : std::nullopt;
  if (!m || !k) return std::nullopt;
  const auto mk = checked_mul(*m, *k);
  if (!mk || !checked_mul(*mk, l.num_filters)) return std::nullopt;
  r.m = *m;
  r.k = *k;
  r.n = l.num_filters;
  return r;
}

namespace workload_detail {
namespace {

// SCALE-Sim splits a layer whose name contains "DP" into one single-channel layer per channel;
// more than this many channels is surely a mistake, not a network.
constexpr int64_t kMaxDepthwiseChannels = 65536;

enum class Form { conv, gemm };

struct Header {
  Form form = Form::conv;
  std::vector<std::string> labels;  // canonical column names, for messages; no Sparsity
  bool two_strides = false;
  bool sparsity = false;  // optional last column
};

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Fields of one line: comment removed, fields trimmed, one trailing empty field (the trailing
// comma) dropped. A blank line gives no fields.
// The fields of a line (libcsv: quoted fields may hold commas), without a '#' comment and
// without the empty field after SCALE-Sim's trailing comma.
std::vector<std::string> split_fields(std::string line) {
  if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
  if (trim(line).empty()) return {};
  std::vector<std::string> fields = csv_fields(line);
  if (fields.size() > 1 && fields.back().empty()) fields.pop_back();
  return fields;
}

// Lower case, '_' as space, runs of spaces collapsed: "IFMAP  Height" == "ifmap_height".
std::string normalize(const std::string& s) {
  std::string out;
  for (char c : s) {
    const char x = c == '_' ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (x == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += x;
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::optional<Header> match_header(const std::vector<std::string>& fields) {
  std::vector<std::string> f;
  f.reserve(fields.size());
  for (const auto& x : fields) f.push_back(normalize(x));
  if (f.empty() || (f[0] != "layer" && f[0] != "layer name")) return std::nullopt;
  Header h;
  if (f.size() >= 2 && f.back() == "sparsity") {
    h.sparsity = true;
    f.pop_back();
  }
  const auto equals = [&](const std::vector<std::string>& want) {
    if (f.size() != want.size() + 1) return false;
    for (size_t i = 0; i < want.size(); ++i)
      if (f[i + 1] != want[i]) return false;
    return true;
  };
  if (equals({"m", "n", "k"})) {
    h.form = Form::gemm;
    h.labels = {"Layer", "M", "N", "K"};
    return h;
  }
  const std::vector<std::string> conv{"ifmap height", "ifmap width", "filter height",
                                      "filter width", "channels",    "num filter"};
  auto with = [&](std::vector<std::string> tail) {
    auto v = conv;
    v.insert(v.end(), tail.begin(), tail.end());
    return v;
  };
  h.form = Form::conv;
  h.labels = {"Layer name",   "IFMAP Height", "IFMAP Width", "Filter Height",
              "Filter Width", "Channels",     "Num Filter"};
  if (equals(with({"strides"})) || equals(with({"stride"}))) {
    h.labels.emplace_back("Strides");
    return h;
  }
  if (equals(with({"stride height", "stride width"}))) {
    h.two_strides = true;
    h.labels.emplace_back("Stride Height");
    h.labels.emplace_back("Stride Width");
    return h;
  }
  return std::nullopt;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

class CsvReader {
 public:
  explicit CsvReader(std::string path) : path_(std::move(path)) {}

  Workload read() {
    std::ifstream in(path_);
    if (!in) fail(path_, 0, "cannot open workload file");
    Workload w;
    w.path = path_;
    w.name = file_stem(path_);
    std::string text;
    int64_t line_no = 0;
    std::optional<Header> header;
    while (std::getline(in, text)) {
      ++line_no;
      if (!text.empty() && text.back() == '\r') text.pop_back();
      if (line_no == 1 && text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);  // UTF-8 BOM
      std::vector<std::string> fields;
      try {
        fields = split_fields(text);
      } catch (const std::invalid_argument& e) {
        fail(path_, line_no, e.what());
      }
      if (fields.empty()) continue;
      if (!header) {
        header = match_header(fields);
        if (!header) bad_header(line_no, fields);
        continue;
      }
      read_row(*header, fields, line_no, w);
    }
    if (!header)
      fail(path_, 0,
           "empty file; expected a SCALE-Sim topology header line (see docs/workloads.md)");
    if (w.gemms.empty()) fail(path_, 0, "no layers after the header line");
    return w;
  }

 private:
  [[noreturn]] void bad_header(int64_t line, const std::vector<std::string>& fields) {
    const std::string forms =
        "expected the SCALE-Sim convolution form 'Layer name, IFMAP Height, IFMAP Width, "
        "Filter Height, Filter Width, Channels, Num Filter, Strides,' or the GEMM form "
        "'Layer, M, N, K,'";
    if (fields.size() > 1 && parse_int64(fields[1]))
      fail(path_, line, "the first line must be the header; " + forms);
    fail(path_, line, fmt::format("unrecognized header '{}'; {}", join(fields), forms));
  }

  int64_t positive(const std::string& text, int64_t line, const std::string& layer,
                   const std::string& column) {
    const auto v = parse_int64(text);
    if (!v || *v <= 0)
      fail(path_, line,
           fmt::format("layer '{}': column '{}': expected a positive integer, got '{}'", layer,
                       column, text));
    return *v;
  }

  void read_row(const Header& h, const std::vector<std::string>& f, int64_t line, Workload& w) {
    const size_t want = h.labels.size();
    if (f.size() != want && !(h.sparsity && f.size() == want + 1))
      fail(path_, line,
           fmt::format("expected {} columns ({}{}), got {}", want, join(h.labels),
                       h.sparsity ? ", and optionally Sparsity" : "", f.size()));
    const std::string& name = f[0];
    if (name.empty()) fail(path_, line, "empty layer name in the first column");
    if (f.size() == want + 1 && !f.back().empty() && f.back() != "1:1")
      fail(path_, line,
           fmt::format("layer '{}': column 'Sparsity': '{}' is not supported (only dense '1:1')",
                       name, f.back()));
    std::vector<int64_t> v;
    for (size_t i = 1; i < want; ++i) v.push_back(positive(f[i], line, name, h.labels[i]));
    if (h.form == Form::gemm) read_gemm(name, v, line, w);
    else read_conv(h, name, v, line, w);
  }

  // SCALE-Sim (load_arrays_gemm) turns "Layer, M, N, K" into a convolution with an M x K
  // ifmap, a 1 x K filter, 1 channel, N filters, stride 1: T = M, Sr = K, Sc = N.
  void read_gemm(const std::string& name, const std::vector<int64_t>& v, int64_t line, Workload& w) {
    Gemm g;
    g.name = name;
    g.m = v[0];
    g.n = v[1];
    g.k = v[2];
    g.source = source_of(path_, line);
    const auto mk = checked_mul(g.m, g.k);
    if (!mk || !checked_mul(*mk, g.n))
      fail(path_, line,
           fmt::format("layer '{}': M*K*N = {}*{}*{} overflows int64", name, g.m, g.k, g.n));
    w.gemms.push_back(std::move(g));
  }

  // A convolution layer as its im2col GEMM (one per channel when depthwise).
  void read_conv(const Header& h, const std::string& name, const std::vector<int64_t>& v, int64_t line,
                 Workload& w) {
    ConvLayer c;
    c.name = name;
    c.ifmap_h = v[0];
    c.ifmap_w = v[1];
    c.filter_h = v[2];
    c.filter_w = v[3];
    c.channels = v[4];
    c.num_filters = v[5];
    c.stride_h = v[6];
    c.stride_w = h.two_strides ? v[7] : v[6];
    if (c.filter_h > c.ifmap_h || c.filter_w > c.ifmap_w)
      fail(path_, line,
           fmt::format("layer '{}': filter {}x{} is larger than the ifmap {}x{} (SCALE-Sim "
                       "convolutions are unpadded: give the padded input size)",
                       name, c.filter_h, c.filter_w, c.ifmap_h, c.ifmap_w));
    // Depthwise, as scalesim/topology_utils.py load_arrays_conv: a name containing "DP" becomes
    // one layer per channel, "<name>Channel_<i>", each with Channels = 1 and the same filters.
    const bool depthwise = name.find("DP") != std::string::npos;
    if (depthwise) {
      if (c.channels > kMaxDepthwiseChannels)
        fail(path_, line,
             fmt::format("layer '{}': depthwise ('DP' in the name) with {} channels would become "
                         "{} layers; at most {} are supported",
                         name, c.channels, c.channels, kMaxDepthwiseChannels));
    }
    const int64_t copies = depthwise ? c.channels : 1;
    if (depthwise) c.channels = 1;
    const auto g = scalesim_im2col(c);
    if (!g)
      fail(path_, line,
           fmt::format("layer '{}': the im2col GEMM (M = ofmap pixels, K = Fh*Fw*C, N = filters) "
                       "overflows int64",
                       name));
    for (int64_t i = 0; i < copies; ++i) {
      Gemm out;
      out.name = depthwise ? fmt::format("{}Channel_{}", name, i) : name;
      out.m = g->m;
      out.k = g->k;
      out.n = g->n;
      out.source = source_of(path_, line);
      w.gemms.push_back(std::move(out));
    }
  }

  std::string path_;
};

}  // namespace

Workload load_scalesim_csv(const std::string& path) { return CsvReader(path).read(); }

}  // namespace workload_detail
}  // namespace systolic
