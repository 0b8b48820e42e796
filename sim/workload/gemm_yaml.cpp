// GEMM list workloads (docs/workloads.md):
//   name: my_model            # optional label (Workload::name is the file stem)
//   gemms:
//     - {name: qkv, m: 1024, k: 768, n: 2304, dtype: bf16, repeat: 1}
//     - {name: act, vector: relu, rows: 1024, cols: 2304}   # VPU work on the result above
//     - {name: w8a16, m: 8, k: 4096, n: 4096, a_dtype: bf16, b_dtype: int8}   # mixed precision
// Every problem is an InputError "path:line: ..." naming the key and what was expected.
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "models/common/dtype.hpp"
#include "models/mxu/operands.hpp"
#include "sim/common/scalars.hpp"
#include "sim/common/yaml_reader.hpp"
#include "sim/workload/detail.hpp"

namespace systolic::workload_detail {
namespace {

const std::vector<std::string> kTopKeys{"name", "gemms"};
const std::vector<std::string> kGemmKeys{"name", "m", "k", "n", "dtype", "a_dtype", "b_dtype", "repeat"};
const std::vector<std::string> kCollectiveKeys{"name", "collective", "bytes", "dtype", "decompose"};
const std::vector<std::string> kVectorKeys{"name", "vector", "rows", "cols", "dtype", "repeat"};

class Reader : public YamlReader {
 public:
  using YamlReader::YamlReader;

  void read(const YAML::Node& root, Workload& w) {
    YAML::Node gemms;
    const auto top_key = [&](const std::string& key, const YAML::Node& v, int64_t line) {
      if (key == "name") {
        // A label for readers of the file; Workload::name stays the file stem (report.json).
        string_value(v, line, "name");
      } else {
        gemms = v;
        gemms_line_ = line;
      }
    };
    if (!read_map(root, 1, kTopKeys, "", top_key).count("gemms"))
      fail(path_, yaml_line(root, 1), "missing key 'gemms' (a list of {name, m, k, n})");
    if (!gemms.IsSequence() || gemms.size() == 0)
      fail(path_, yaml_line(gemms, gemms_line_),
           fmt::format("key 'gemms': expected a non-empty list of GEMMs, got {}", describe_yaml(gemms)));
    for (const auto& g : gemms) {
      if (g.IsMap() && g["collective"]) {
        CollectiveWork c = read_collective(g);
        c.after_gemms = w.gemms.size();
        c.after_vectors = w.vectors.size();
        w.collectives.push_back(std::move(c));
      } else if (g.IsMap() && g["vector"]) {
        VectorWork v = read_vector(g);
        v.after_gemms = w.gemms.size();
        w.vectors.push_back(std::move(v));
      } else {
        w.gemms.push_back(read_gemm(g));
      }
    }
    if (w.gemms.empty() && w.collectives.empty() && w.vectors.empty())
      fail(path_, gemms_line_, "key 'gemms': expected at least one GEMM, vector op or collective");
  }

 private:
  // Calls read(key, line, value) for every key of the list entry `g` (at `line`), after
  // rejecting unknown keys; then fails on the first of `required` it lacks.
  // `what` names the entry in messages ("GEMM", "vector", "collective").
  template <typename Read>
  void read_entry(const YAML::Node& g, int64_t line, const char* what, const std::vector<std::string>& allowed,
                  const std::vector<std::string>& required, const std::string& name, Read&& read) {
    const auto seen =
        read_map(g, line, allowed, fmt::format(" in a {} entry", what),
                 [&](const std::string& key, const YAML::Node& v, int64_t at) { read(key, at, v); });
    require_keys(seen, required, line,
                 fmt::format("{} entry{}", what, name.empty() ? "" : " '" + name + "'"));
  }

  int64_t positive_value(const YAML::Node& v, int64_t line, const std::string& key, const std::string& what) {
    return integer_value(v, line, fmt::format("key '{}': expected {}", key, what), 1,
                         std::numeric_limits<int64_t>::max());
  }

  DType dtype_value(const YAML::Node& v, int64_t kline, const std::string& key = "dtype") {
    return name_value(v, kline, key, kDTypeNames);
  }

  // The operand types an entry gives must be a pair the MXU multiplies; a type left to the
  // chip's mxu.dtype is checked when the workload is compiled.
  void check_operands(const Gemm& g, const std::map<std::string, int64_t>& lines) {
    if (!(g.a_dtype || g.dtype) || !(g.b_dtype || g.dtype)) return;
    const DType a = g.a_type(DType::bf16), b = g.b_type(DType::bf16);
    const auto ops = mxu_operands(a, b);
    if (const auto* why = std::get_if<std::string>(&ops)) {
      const char* key = !dtype_on_mxu(a) ? (g.a_dtype ? "a_dtype" : "dtype") : (g.b_dtype ? "b_dtype" : "dtype");
      fail(path_, lines.at(key),
           fmt::format("GEMM '{}': key '{}': {}; {}", g.name, key, *why,
                       dtype_on_mxu(a) ? fmt::format("with a_dtype {} expected b_dtype one of {}", kDTypeNames.name(a),
                                                     fmt::join(b_types_for(a), ", "))
                                       : fmt::format("expected a_dtype one of {}", fmt::join(activation_types(), ", "))));
    }
  }

  // {name, collective: all_reduce, bytes: 64 MiB, dtype?, decompose?}: communication between
  // the chips; decompose: overlap it with the GEMM next to it (sim/compile/overlap.hpp).
  CollectiveWork read_collective(const YAML::Node& g) {
    const int64_t line = yaml_line(g, gemms_line_);
    CollectiveWork out;
    out.source = source_of(path_, line);
    read_entry(g, line, "collective", kCollectiveKeys, {"name", "collective", "bytes"}, out.name,
               [&](const std::string& key, int64_t kline, const YAML::Node& v) {
      if (key == "name") {
        out.name = string_value(v, kline, "name");
      } else if (key == "collective") {
        out.kind = name_value(v, kline, "collective", kCollectiveKindNames);
      } else if (key == "bytes") {
        out.bytes = bytes_value(v, kline);
      } else if (key == "decompose") {
        out.decompose = name_value(v, kline, "decompose", kDecomposeNames);
      } else {  // dtype
        out.dtype = dtype_value(v, kline);
        if (!dtype_on_mxu(out.dtype))
          fail(path_, yaml_line(v, kline),
               fmt::format("key 'dtype': {} is a weight storage type; a collective's elements are one of {}",
                           kDTypeNames.name(out.dtype), fmt::join(activation_types(), ", ")));
      }
    });
    return out;
  }


  uint64_t bytes_value(const YAML::Node& v, int64_t kline) {
    const int64_t at = yaml_line(v, kline);
    const std::string what = "a size in bytes > 0, e.g. 67108864 or 64 MiB";
    if (!v.IsScalar()) fail(path_, at, fmt::format("key 'bytes': expected {}, got {}", what, describe_yaml(v)));
    uint64_t bytes = 0;
    try {
      bytes = scalars::parse_bytes(v.Scalar(), what);
    } catch (const std::invalid_argument& e) {
      fail(path_, at, fmt::format("key 'bytes': {}", e.what()));
    }
    if (bytes == 0) fail(path_, at, fmt::format("key 'bytes': expected {}, got '{}'", what, v.Scalar()));
    return bytes;
  }

  // {name, vector: relu, rows, cols, dtype?, repeat?}: one VPU instruction over a [rows, cols]
  // tensor (the kinds and their costs: models/vpu/vpu_core.hpp), run after the entries above.
  VectorWork read_vector(const YAML::Node& g) {
    const int64_t line = yaml_line(g, gemms_line_);
    VectorWork out;
    out.source = source_of(path_, line);
    read_entry(g, line, "vector", kVectorKeys, {"name", "vector", "rows", "cols"}, out.name,
               [&](const std::string& key, int64_t kline, const YAML::Node& v) {
      if (key == "name") {
        out.name = string_value(v, kline, "name");
      } else if (key == "vector") {
        out.op.kind = name_value(v, kline, "vector", kVectorKindNames);
      } else if (key == "rows") {
        out.op.rows = positive_value(v, kline, "rows", "a positive integer (rows of the tensor)");
      } else if (key == "cols") {
        out.op.cols = positive_value(v, kline, "cols", "a positive integer (columns; row-wise kinds reduce along them)");
      } else if (key == "repeat") {
        out.repeat = positive_value(v, kline, "repeat", "a positive integer (default 1)");
      } else {  // dtype
        out.op.dtype = dtype_value(v, kline);
      }
    });
    return out;
  }


  Gemm read_gemm(const YAML::Node& g) {
    const int64_t line = yaml_line(g, gemms_line_);
    if (!g.IsMap())
      fail(path_, line,
           fmt::format("key 'gemms': each entry must be a map with keys name, m, k, n, got {}",
                       describe_yaml(g)));
    Gemm out;
    out.source = source_of(path_, line);
    std::map<std::string, int64_t> lines;  // key -> its line, for the operand check
    read_entry(g, line, "GEMM", kGemmKeys, {"name", "m", "k", "n"}, out.name,
               [&](const std::string& key, int64_t kline, const YAML::Node& v) {
      lines[key] = kline;
      if (key == "name") {
        out.name = string_value(v, kline, "name");
      } else if (key == "m") {
        out.m = positive_value(v, kline, "m", "a positive integer (rows streamed, M)");
      } else if (key == "k") {
        out.k = positive_value(v, kline, "k", "a positive integer (reduction dimension, K)");
      } else if (key == "n") {
        out.n = positive_value(v, kline, "n", "a positive integer (output features, N)");
      } else if (key == "repeat") {
        out.repeat = positive_value(v, kline, "repeat", "a positive integer (default 1)");
      } else if (key == "dtype") {
        out.dtype = dtype_value(v, kline);
      } else {  // a_dtype, b_dtype
        (key == "a_dtype" ? out.a_dtype : out.b_dtype) = dtype_value(v, kline, key);
      }
    });
    check_operands(out, lines);
    const auto mk = checked_mul(out.m, out.k);
    const auto mkn = mk ? checked_mul(*mk, out.n) : std::nullopt;
    if (!mkn)
      fail(path_, line,
           fmt::format("GEMM '{}': m*k*n = {}*{}*{} overflows int64", out.name, out.m, out.k,
                       out.n));
    if (!checked_mul(*mkn, out.repeat))
      fail(path_, line,
           fmt::format("GEMM '{}': m*k*n*repeat = {}*{} overflows int64", out.name, *mkn,
                       out.repeat));
    return out;
  }

  int64_t gemms_line_ = 1;
};

}  // namespace

Workload load_gemm_yaml(const std::string& path) {
  const YamlDocument document{"cannot open workload file", "malformed GEMM list",
                              "empty file; expected a map with key 'gemms' (see docs/workloads.md)",
                              "expected a map with key 'gemms' (a list of GEMMs)"};
  return read_yaml_document<Workload, Reader>(path, document, [&] { return load_yaml_file(path); });
}

}  // namespace systolic::workload_detail
