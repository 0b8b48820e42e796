// Model files (docs/transformers.md, "Model files"). Syntax and ranges are checked while
// reading; the relations between keys (kv_heads divides heads, heads x head_dim = d_model,
// ...) by check_relations, shared with validate_model for specs built in code.
#include "sim/workload/transformer/model.hpp"

#include <algorithm>
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
#include "models/common/suggest.hpp"
#include "models/mxu/operands.hpp"
#include "sim/common/input_text.hpp"

namespace systolic::transformer {
namespace {

constexpr int64_t kMaxDim = int64_t{1} << 24;
constexpr int64_t kMaxLayers = 65536;
constexpr int64_t kMaxExperts = 65536;

const std::vector<std::string> kTopKeys{
    "name",  "kind",  "layers", "d_model",    "heads",      "kv_heads",   "head_dim",
    "attention_dim", "d_ff", "vocab", "max_seq", "dtype", "weight_dtype", "activation_dtype", "kv_dtype",
    "fp8_scale", "norm", "activation", "gated_ffn", "positional", "tied_embeddings", "moe", "mla"};
const std::vector<std::string> kMoeKeys{"experts", "top_k", "expert_ff", "shared_experts",
                                        "dense_layers"};
const std::vector<std::string> kMlaKeys{"q_lora_rank", "kv_lora_rank", "rope_head_dim",
                                        "v_head_dim"};

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : ", ") + w;
  return s;
}




// Where a key's problem is reported: "path:line: " from a file, "model 'x': " in code.
using Locate = std::function<std::string(const std::string& key)>;

[[noreturn]] void fail(const Locate& at, const std::string& key, const std::string& message) {
  throw InputError(at(key) + message);
}

// Relations between keys, once each key is individually valid. `given` says which optional
// keys the file (or the caller) set explicitly.
void check_relations(const ModelSpec& m, const std::set<std::string>& given, const Locate& at) {
  if (!given.count("head_dim") && m.heads > 0 && m.attention_dim % m.heads != 0)
    fail(at, "heads",
         fmt::format("key 'heads': {} = {} is not a multiple of heads = {}; give head_dim",
                     given.count("attention_dim") ? "attention_dim" : "d_model", m.attention_dim,
                     m.heads));
  if (m.heads * m.head_dim != m.attention_dim) {
    const bool declared = given.count("attention_dim") > 0;
    fail(at, "head_dim",
         fmt::format("key 'head_dim': heads x head_dim = {} x {} = {}, expected {} = {}{}", m.heads,
                     m.head_dim, m.heads * m.head_dim, declared ? "attention_dim" : "d_model",
                     m.attention_dim,
                     declared ? ""
                              : fmt::format(" (if the attention really is wider or narrower than "
                                            "d_model, as in DeepSeek-V3, declare "
                                            "attention_dim: {})",
                                            m.heads * m.head_dim)));
  }
  if (m.mla && given.count("kv_heads") && m.kv_heads != m.heads)
    fail(at, "kv_heads",
         fmt::format("key 'kv_heads': {} with mla: latent attention shares one compressed KV "
                     "cache among all heads; omit kv_heads or set it to heads = {}",
                     m.kv_heads, m.heads));
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
    fail(at, "kv_heads",
         fmt::format("key 'kv_heads': {} does not divide heads = {} (each KV head serves "
                     "heads / kv_heads query heads); expected a divisor of {}",
                     m.kv_heads, m.heads, m.heads));
  if (m.moe) {
    if (m.moe->top_k > m.moe->experts)
      fail(at, "moe.top_k",
           fmt::format("key 'moe.top_k': {} is more than moe.experts = {}; expected an integer "
                       "in [1, {}]",
                       m.moe->top_k, m.moe->experts, m.moe->experts));
    if (m.moe->dense_layers >= m.layers)
      fail(at, "moe.dense_layers",
           fmt::format("key 'moe.dense_layers': {} leaves no MoE layer of layers = {}; expected "
                       "an integer in [0, {}]",
                       m.moe->dense_layers, m.layers, m.layers - 1));
  }
  if (m.d_ff == 0 && m.dense_layer_count() > 0)
    fail(at, "",
         m.moe ? fmt::format("missing key 'd_ff' (the dense FFN width of the first "
                             "moe.dense_layers = {} layers)",
                             m.moe->dense_layers)
               : std::string("missing key 'd_ff' (the FFN width)"));
  if (m.mla && m.mla->rope_head_dim > 0 && m.positional != Positional::rope)
    fail(at, "mla.rope_head_dim",
         fmt::format("key 'mla.rope_head_dim': {} needs positional: rope, got positional: {}",
                     m.mla->rope_head_dim, kPositionalNames.name(m.positional)));
  if (m.positional == Positional::learned && !m.max_seq)
    fail(at, "positional",
         "key 'positional': learned positions need max_seq (the size of the position table)");
}

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  ModelSpec read(const YAML::Node& root) {
    ModelSpec m;
    m.source = path_;
    m.name = std::filesystem::path(path_).stem().string();
    require_yaml_map(root, path_, "empty file; expected a model description (see docs/transformers.md)",
                     "expected a map of model dimensions (layers, d_model, heads, ...)");
    lines_[""] = yaml_line(root, 1);
    std::set<std::string> seen;
    for (const auto& entry : root) {
      const std::string key = entry.first.as<std::string>();
      const int64_t line = yaml_line(entry.first, 1);
      check_key(key, line, kTopKeys, seen, "");
      lines_[key] = line;
      const YAML::Node& v = entry.second;
      if (key == "name") m.name = string_value(v, line, key);
      else if (key == "kind") m.kind = choice(v, line, key, kModelKindNames);
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
      else if (key == "norm") m.norm = choice(v, line, key, kNormKindNames);
      else if (key == "activation") m.activation = choice(v, line, key, kActivationNames);
      else if (key == "gated_ffn") m.gated_ffn = bool_value(v, line, key);
      else if (key == "positional") m.positional = choice(v, line, key, kPositionalNames);
      else if (key == "tied_embeddings") m.tied_embeddings = bool_value(v, line, key);
      else if (key == "moe") m.moe = read_moe(v, line);
      else m.mla = read_mla(v, line);  // mla
    }
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
    return m;
  }

 private:
  [[noreturn]] void fail_line(int64_t line, const std::string& message) const { systolic::fail(path_, line, message); }

  // Keys given, with nested ones as "moe.top_k".
  std::set<std::string> seen_all(std::set<std::string> top) const {
    for (const auto& [key, line] : lines_)
      if (!key.empty()) top.insert(key);
    return top;
  }

  void check_key(const std::string& key, int64_t line, const std::vector<std::string>& allowed,
                 std::set<std::string>& seen, const std::string& where) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      fail_line(line, fmt::format("unknown key '{}'{}{}; allowed: {}", key, where,
                                  did_you_mean(key, allowed), join(allowed)));
    if (!seen.insert(key).second) fail_line(line, fmt::format("duplicate key '{}'{}", key, where));
  }

  std::string string_value(const YAML::Node& v, int64_t line, const std::string& key) {
    if (!v.IsScalar() || v.Scalar().empty())
      fail_line(yaml_line(v, line),
                fmt::format("key '{}': expected a non-empty string, got {}", key, describe_yaml(v)));
    return v.Scalar();
  }

  int64_t int_value(const YAML::Node& v, int64_t line, const std::string& key, int64_t lo,
                    int64_t hi, const std::string& what) {
    const int64_t at = yaml_line(v, line);
    const std::string expected = fmt::format("an integer in [{}, {}] ({})", lo, hi, what);
    if (!v.IsScalar())
      fail_line(at, fmt::format("key '{}': expected {}, got {}", key, expected, describe_yaml(v)));
    if (v.Tag() == "!")
      fail_line(at, fmt::format("key '{}': expected {}, got the string '{}'", key, expected,
                                v.Scalar()));
    const auto value = parse_int64(v.Scalar());
    if (!value || *value < lo || *value > hi)
      fail_line(at, fmt::format("key '{}': expected {}, got '{}'", key, expected, v.Scalar()));
    return *value;
  }

  bool bool_value(const YAML::Node& v, int64_t line, const std::string& key) {
    if (v.IsScalar() && v.Tag() != "!" && (v.Scalar() == "true" || v.Scalar() == "false"))
      return v.Scalar() == "true";
    fail_line(yaml_line(v, line),
              fmt::format("key '{}': expected true or false, got {}", key, describe_yaml(v)));
  }

  template <class E, size_t N>
  E choice(const YAML::Node& v, int64_t line, const std::string& key, const NameTable<E, N>& names) {
    const std::string word = v.IsScalar() ? v.Scalar() : "";
    if (const auto value = names.parse(word)) return *value;
    fail_line(yaml_line(v, line), fmt::format("key '{}': expected one of {}, got {}{}", key,
                                            names.choices(), describe_yaml(v), names.suggest(word)));
  }

  DType dtype_value(const YAML::Node& v, int64_t line, const std::string& key) {
    return choice(v, line, key, kDTypeNames);
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
  void read_map(const YAML::Node& v, int64_t line, const std::string& parent,
                const std::vector<std::string>& keys, const std::vector<std::string>& required,
                F&& on_key) {
    if (!v.IsMap())
      fail_line(yaml_line(v, line), fmt::format("key '{}': expected a map with keys {}, got {}",
                                              parent, join(keys), describe_yaml(v)));
    std::set<std::string> seen;
    for (const auto& entry : v) {
      const std::string key = entry.first.as<std::string>();
      const int64_t kline = yaml_line(entry.first, line);
      check_key(key, kline, keys, seen, " in '" + parent + "'");
      lines_[parent + "." + key] = kline;
      on_key(key, entry.second, kline);
    }
    for (const auto& r : required)
      if (!seen.count(r))
        fail_line(line, fmt::format("key '{}': missing key '{}' (required: {})", parent, r,
                                    join(required)));
  }

  MoeSpec read_moe(const YAML::Node& v, int64_t line) {
    MoeSpec moe;
    read_map(v, line, "moe", kMoeKeys, {"experts", "top_k", "expert_ff"},
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
    read_map(v, line, "mla", kMlaKeys, {"kv_lora_rank"},
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

  std::string path_;
  std::map<std::string, int64_t> lines_;  // key ("moe.top_k") -> line; "" -> the root map
  std::map<std::string, DType> types_;    // dtype, weight_dtype, activation_dtype, kv_dtype given
  bool mla_v_given_ = false;
};

ModelSpec parse_root(const std::string& path, const std::function<YAML::Node()>& load) {
  YAML::Node root;
  try {
    root = load();
  } catch (const YAML::BadFile&) {
    throw InputError(path + ": cannot open model file");
  } catch (const YAML::Exception& e) {
    if (e.mark.line >= 0)
      throw InputError(fmt::format("{}:{}: malformed YAML: {}", path, e.mark.line + 1, e.msg));
    throw InputError(fmt::format("{}: malformed YAML: {}", path, e.msg));
  }
  try {
    return Reader(path).read(root);
  } catch (const YAML::Exception& e) {  // e.g. a key that is not a scalar
    if (e.mark.line >= 0)
      throw InputError(
          fmt::format("{}:{}: malformed model file: {}", path, e.mark.line + 1, e.msg));
    throw InputError(fmt::format("{}: malformed model file: {}", path, e.msg));
  }
}

}  // namespace

std::optional<PrecisionIssue> check_precision(const Precision& p) {
  const auto names = [](const std::vector<std::string>& v) { return join(v); };
  if (!dtype_on_mxu(p.activations))
    return PrecisionIssue{"activation_dtype",
                          fmt::format("key 'activation_dtype': {} is a weight storage type; expected one of {}",
                                      kDTypeNames.name(p.activations), names(activation_types()))};
  const auto weights = mxu_operands(p.activations, p.weights);
  if (const auto* why = std::get_if<std::string>(&weights))
    return PrecisionIssue{"weight_dtype",
                          fmt::format("key 'weight_dtype': {}; with activation_dtype {} expected one of {}", *why,
                                      kDTypeNames.name(p.activations), names(b_types_for(p.activations)))};
  // The fused attention reads K and V as the MXU does: a KV type that needs a dequantise op
  // (integers under float queries, int4) is not modelled.
  std::vector<std::string> kv_types;
  for (const auto& name : b_types_for(p.activations)) {
    const auto ops = mxu_operands(p.activations, *kDTypeNames.parse(name));
    if (!std::get<MxuOperands>(ops).dequantize_b) kv_types.push_back(name);
  }
  const std::string kv(kDTypeNames.name(p.kv_cache));
  if (std::find(kv_types.begin(), kv_types.end(), kv) == kv_types.end())
    return PrecisionIssue{"kv_dtype",
                          fmt::format("key 'kv_dtype': {} with activation_dtype {}; expected one of {}{}", kv,
                                      kDTypeNames.name(p.activations), names(kv_types),
                                      dtype_is_float(p.activations)
                                          ? " (an integer KV cache under float queries would need a dequantise "
                                            "step inside attention, which is not modelled)"
                                          : " (int8 queries read an int8 cache)")};
  return std::nullopt;
}

ModelSpec load_model(const std::string& path) {
  if (std::filesystem::is_directory(path))
    throw InputError(path + ": is a directory, expected a model file");
  if (!std::ifstream(path)) throw InputError(path + ": cannot open model file");
  return parse_root(path, [&] { return YAML::LoadFile(path); });
}

ModelSpec parse_model(const std::string& yaml, const std::string& path) {
  return parse_root(path, [&] { return YAML::Load(yaml); });
}

void validate_model(const ModelSpec& m) {
  const std::string who = fmt::format("model '{}': ", m.name);
  const auto bad = [&](const std::string& key, int64_t value, int64_t lo, int64_t hi) {
    if (value < lo || value > hi)
      throw InputError(fmt::format("{}key '{}': expected an integer in [{}, {}], got {}", who, key,
                                   lo, hi, value));
  };
  bad("layers", m.layers, 1, kMaxLayers);
  bad("d_model", m.d_model, 1, kMaxDim);
  bad("heads", m.heads, 1, kMaxDim);
  bad("kv_heads", m.kv_heads, 1, kMaxDim);
  bad("head_dim", m.head_dim, 1, kMaxDim);
  bad("attention_dim", m.attention_dim, 1, kMaxDim);
  bad("d_ff", m.d_ff, 0, kMaxDim);
  bad("vocab", m.vocab, 1, kMaxDim);
  if (m.max_seq) bad("max_seq", *m.max_seq, 1, kMaxDim);
  if (m.moe) {
    bad("moe.experts", m.moe->experts, 1, kMaxExperts);
    bad("moe.top_k", m.moe->top_k, 1, kMaxExperts);
    bad("moe.expert_ff", m.moe->expert_ff, 1, kMaxDim);
    bad("moe.shared_experts", m.moe->shared_experts, 0, kMaxExperts);
    bad("moe.dense_layers", m.moe->dense_layers, 0, kMaxLayers);
  }
  if (m.mla) {
    bad("mla.q_lora_rank", m.mla->q_lora_rank, 0, kMaxDim);
    bad("mla.kv_lora_rank", m.mla->kv_lora_rank, 1, kMaxDim);
    bad("mla.rope_head_dim", m.mla->rope_head_dim, 0, kMaxDim);
    bad("mla.v_head_dim", m.mla->v_head_dim, 1, kMaxDim);
  }
  if (!(m.precision.fp8_scale > 0) || m.precision.fp8_scale > 1e30)
    throw InputError(fmt::format("{}key 'fp8_scale': expected a positive number, got {}", who, m.precision.fp8_scale));
  if (const auto issue = check_precision(m.precision)) throw InputError(who + issue->message);
  // In code every field is explicit: head_dim, attention_dim and kv_heads count as given.
  check_relations(m, {"head_dim", "attention_dim", "kv_heads"},
                  [&](const std::string&) { return who; });
}

}  // namespace systolic::transformer
