// Model files (docs/transformers.md, "Model files"). Syntax and ranges are checked while
// reading; the relations between keys (kv_heads divides heads, heads x head_dim = d_model,
// ...) by check_relations (model_checks.cpp), shared with validate_model for specs built in code.
#include "sim/workload/transformer/model.hpp"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "models/common/error.hpp"
#include "models/mxu/operands.hpp"
#include "sim/common/input_text.hpp"
#include "sim/common/yaml_reader.hpp"
#include "sim/workload/transformer/model_checks.hpp"

namespace systolic::transformer {
namespace {

using namespace model_detail;

const std::vector<std::string> kTopKeys{
    "name",  "kind",  "layers", "d_model",    "heads",      "kv_heads",   "head_dim",
    "attention_dim", "d_ff", "vocab", "max_seq", "dtype", "weight_dtype", "activation_dtype", "kv_dtype",
    "fp8_scale", "norm", "activation", "gated_ffn", "positional", "tied_embeddings", "moe", "mla"};
const std::vector<std::string> kMoeKeys{"experts", "top_k", "expert_ff", "shared_experts",
                                        "dense_layers"};
const std::vector<std::string> kMlaKeys{"q_lora_rank", "kv_lora_rank", "rope_head_dim",
                                        "v_head_dim"};

class Reader : public YamlReader {
 public:
  using YamlReader::YamlReader;

  void read(const YAML::Node& root, ModelSpec& m) {
    lines_[""] = yaml_line(root, 1);
    const auto seen =
        read_map(root, 1, kTopKeys, "", [&](const std::string& key, const YAML::Node& v, int64_t line) {
          lines_[key] = line;
          read_key(m, key, v, line);
        });
    for (const char* required : {"layers", "d_model", "heads", "vocab", "norm", "activation",
                                 "gated_ffn", "positional"})
      if (!seen.count(required))
        fail_line(lines_[""], fmt::format("missing key '{}' (required: layers, d_model, heads, "
                                          "vocab, norm, activation, gated_ffn, positional; and "
                                          "d_ff unless every layer is MoE)",
                                          required));
    if (!seen.count("attention_dim")) m.attention_dim = m.d_model;
    if (!seen.count("kv_heads")) m.kv_heads = m.heads;
    if (!seen.count("head_dim")) m.head_dim = m.attention_dim / m.heads;  // checked below
    if (m.mla && !mla_v_given_) m.mla->v_head_dim = m.head_dim;
    m.precision = precision(m.precision.fp8_scale);
    check_relations(m, seen_all(seen), [this](const std::string& key) {
      return fmt::format("{}:{}: ", path_, lines_.count(key) ? lines_[key] : lines_[""]);
    });
  }

 private:
  // One top-level key of the model file (checked and its line recorded by the caller), one a
  // line, as a table.
  void read_key(ModelSpec& m, const std::string& key, const YAML::Node& v, int64_t line) {
    // clang-format off
    if (key == "name") m.name = string_value(v, line, key);
    else if (key == "kind") m.kind = name_value(v, line, key, kModelKindNames);
    else if (key == "layers") m.layers = int_value(v, line, key, 1, kMaxLayers, "number of layers");
    else if (key == "d_model") m.d_model = int_value(v, line, key, 1, kMaxDim, "model width");
    else if (key == "heads") m.heads = int_value(v, line, key, 1, kMaxDim, "query heads");
    else if (key == "kv_heads") m.kv_heads = int_value(v, line, key, 1, kMaxDim, "key/value heads");
    else if (key == "head_dim") m.head_dim = int_value(v, line, key, 1, kMaxDim, "width of one head");
    else if (key == "attention_dim") m.attention_dim = int_value(v, line, key, 1, kMaxDim, "heads x head_dim");
    else if (key == "d_ff") m.d_ff = int_value(v, line, key, 1, kMaxDim, "FFN width");
    else if (key == "vocab") m.vocab = int_value(v, line, key, 1, kMaxDim, "vocabulary size");
    else if (key == "max_seq") {
      m.max_seq = int_value(v, line, key, 1, kMaxDim, "longest sequence");
      m.max_seq_source = fmt::format("{}:{}", path_, line);
    } else if (key == "dtype" || key == "weight_dtype" || key == "activation_dtype" || key == "kv_dtype")
      types_[key] = dtype_value(v, line, key);
    else if (key == "fp8_scale") m.precision.fp8_scale = scale_value(v, line, key);
    else if (key == "norm") m.norm = name_value(v, line, key, kNormKindNames);
    else if (key == "activation") m.activation = name_value(v, line, key, kActivationNames);
    else if (key == "gated_ffn") m.gated_ffn = bool_value(v, line, key);
    else if (key == "positional") m.positional = name_value(v, line, key, kPositionalNames);
    else if (key == "tied_embeddings") m.tied_embeddings = bool_value(v, line, key);
    else if (key == "moe") m.moe = read_moe(v, line);
    else m.mla = read_mla(v, line);  // mla
    // clang-format on
  }

  [[noreturn]] void fail_line(int64_t line, const std::string& message) const { systolic::fail(path_, line, message); }

  // Keys given, with nested ones as "moe.top_k".
  std::set<std::string> seen_all(std::set<std::string> top) const {
    for (const auto& [key, line] : lines_)
      if (!key.empty()) top.insert(key);
    return top;
  }

  int64_t int_value(const YAML::Node& v, int64_t line, const std::string& key, int64_t lo, int64_t hi,
                    const std::string& what) {
    return integer_value(
        v, line, fmt::format("key '{}': expected an integer in [{}, {}] ({})", key, lo, hi, what), lo, hi);
  }

  bool bool_value(const YAML::Node& v, int64_t line, const std::string& key) {
    if (v.IsScalar() && v.Tag() != "!" && (v.Scalar() == "true" || v.Scalar() == "false"))
      return v.Scalar() == "true";
    fail_line(yaml_line(v, line),
              fmt::format("key '{}': expected true or false, got {}", key, describe_yaml(v)));
  }

  DType dtype_value(const YAML::Node& v, int64_t line, const std::string& key) {
    return name_value(v, line, key, kDTypeNames);
  }


  double scale_value(const YAML::Node& v, int64_t line, const std::string& key) {
    const std::string text = v.IsScalar() && v.Tag() != "!" ? v.Scalar() : "";
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !(value > 0) ||
        value > 1e30)
      fail_line(yaml_line(v, line), fmt::format("key '{}': expected a positive number (the static "
                                              "scale of fp8 tensors, e.g. 1.0), got {}",
                                              key, describe_yaml(v)));
    return value;
  }

  // `dtype` sets all three; weight_dtype, activation_dtype and kv_dtype override it.
  Precision precision(double fp8_scale) {
    const auto type = [&](const char* key) {
      if (types_.count(key)) return types_.at(key);
      return types_.count("dtype") ? types_.at("dtype") : DType::bf16;
    };
    const Precision p{type("weight_dtype"), type("activation_dtype"), type("kv_dtype"), fp8_scale};
    if (const auto issue = check_precision(p)) {
      // Reported at the key the file gave (a type it inherited from dtype: at dtype).
      const std::string at = lines_.count(issue->key) ? issue->key : "dtype";
      fail_line(lines_.count(at) ? lines_[at] : lines_[""], issue->message);
    }
    return p;
  }

  // A nested map: checks keys and records "parent.key" lines.
  template <class F>
  void read_nested(const YAML::Node& v, int64_t line, const std::string& parent,
                   const std::vector<std::string>& keys, const std::vector<std::string>& required,
                   F&& on_key) {
    if (!v.IsMap())
      fail_line(yaml_line(v, line), fmt::format("key '{}': expected a map with keys {}, got {}", parent,
                                                join(keys), describe_yaml(v)));
    const auto seen = read_map(v, line, keys, fmt::format(" in '{}'", parent),
                               [&](const std::string& key, const YAML::Node& value, int64_t kline) {
                                 lines_[fmt::format("{}.{}", parent, key)] = kline;
                                 on_key(key, value, kline);
                               });
    require_keys(seen, required, line, fmt::format("key '{}'", parent));
  }

  // The nested keys one a line, as a table.
  // clang-format off
  MoeSpec read_moe(const YAML::Node& v, int64_t line) {
    MoeSpec moe;
    read_nested(v, line, "moe", kMoeKeys, {"experts", "top_k", "expert_ff"},
                [&](const std::string& key, const YAML::Node& value, int64_t kline) {
      const std::string full = "moe." + key;
      if (key == "experts") moe.experts = int_value(value, kline, full, 1, kMaxExperts, "routed experts");
      else if (key == "top_k") moe.top_k = int_value(value, kline, full, 1, kMaxExperts, "experts per token");
      else if (key == "expert_ff") moe.expert_ff = int_value(value, kline, full, 1, kMaxDim, "FFN width of one expert");
      else if (key == "shared_experts") moe.shared_experts = int_value(value, kline, full, 0, kMaxExperts, "experts every token uses");
      else moe.dense_layers = int_value(value, kline, full, 0, kMaxLayers, "leading layers with a dense FFN");
    });
    return moe;
  }

  MlaSpec read_mla(const YAML::Node& v, int64_t line) {
    MlaSpec mla;
    read_nested(v, line, "mla", kMlaKeys, {"kv_lora_rank"},
                [&](const std::string& key, const YAML::Node& value, int64_t kline) {
      const std::string full = "mla." + key;
      if (key == "q_lora_rank") mla.q_lora_rank = int_value(value, kline, full, 0, kMaxDim, "query latent width; 0: none");
      else if (key == "kv_lora_rank") mla.kv_lora_rank = int_value(value, kline, full, 1, kMaxDim, "KV latent width");
      else if (key == "rope_head_dim") mla.rope_head_dim = int_value(value, kline, full, 0, kMaxDim, "decoupled rotary key width");
      else {
        mla.v_head_dim = int_value(value, kline, full, 1, kMaxDim, "value width of one head");
        mla_v_given_ = true;
      }
    });
    return mla;
  }
  // clang-format on

  std::map<std::string, int64_t> lines_;  // key ("moe.top_k") -> line; "" -> the root map
  std::map<std::string, DType> types_;    // dtype, weight_dtype, activation_dtype, kv_dtype given
  bool mla_v_given_ = false;
};

ModelSpec parse_root(const std::string& path, const std::function<YAML::Node()>& load) {
  const YamlDocument document{"cannot open model file", "malformed model file",
                              "empty file; expected a model description (see docs/transformers.md)",
                              "expected a map of model dimensions (layers, d_model, heads, ...)"};
  return read_yaml_document<ModelSpec, Reader>(path, document, load);
}

}  // namespace

ModelSpec load_model(const std::string& path) {
  if (std::filesystem::is_directory(path))
    throw InputError(path + ": is a directory, expected a model file");
  if (!std::ifstream(path)) throw InputError(path + ": cannot open model file");
  return parse_root(path, [&] { return load_yaml_file(path); });
}

ModelSpec parse_model(const std::string& yaml, const std::string& path) {
  return parse_root(path, [&] { return load_yaml_text(yaml, path); });
}

}  // namespace systolic::transformer
