// Transformer model files as workloads: lowered at a bucket shape and phase
// (sim/workload/transformer/lower.hpp) into GEMMs and vector-unit work, every layer included.
#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include <stdexcept>
#include <utility>
#include <vector>

#include "models/common/suggest.hpp"
#include "sim/workload/detail.hpp"
#include "sim/workload/transformer/lower.hpp"
#include "sim/workload/transformer/shard.hpp"

namespace systolic::workload_detail {

bool is_model_file(const std::string& path) {
  // A scan of the parser's events, not a parse into nodes: every GEMM list is asked this first,
  // and a tree here was a second whole parse of it (1.3 s and 0.4 GB for 100,000 entries).
  try {
    return yaml_root_has_key(path, "d_model");
  } catch (const YAML::Exception&) {
    return false;  // the GEMM-list reader reports the syntax error with its line
  }
}

namespace {

// One occurrence of a matmul op of the lowering, named `name`.
Gemm gemm_of(const transformer::Lowered& lowered, const transformer::TfOp& op, const transformer::GemmShape& g,
             const std::string& name) {
  Gemm gemm;
  gemm.name = name;
  gemm.m = g.m;
  gemm.k = g.k;
  gemm.n = g.n;
  // Activations in and out; B (weights, KV cache) in its own type when that differs.
  gemm.dtype = lowered.precision.activations;
  if (g.b_type(lowered.precision) != *gemm.dtype) gemm.b_dtype = g.b_type(lowered.precision);
  gemm.fp8_scale = lowered.precision.fp8_scale;
  gemm.repeat = op.repeat;
  gemm.source = lowered.source;
  if (op.kind == transformer::OpKind::attention) gemm.kind = LayerKind::attention;
  gemm.b_from_previous = g.b_reused;
  gemm.useful_rows = g.useful_rows;
  gemm.b_group = g.b_group;
  return gemm;
}

// The workload of a lowering, layer by layer as the chip runs it: every occurrence of every
// group in order (layer l + 1 starts from layer l's output, so its ops, and its collectives,
// cannot start before layer l's), each op with its instances of one occurrence (heads, experts)
// and each placed collective before its op in every occurrence of its group. Reports merge the
// occurrences of an op by name (sim/report/report.cpp).
Workload to_workload(const transformer::Lowered& lowered, const std::vector<transformer::PlacedCollective>& placed,
                     const std::string& path, std::string name) {
  using namespace transformer;
  Workload w;
  w.name = std::move(name);
  w.path = path;
  std::vector<std::pair<size_t, size_t>> joins;  // (collective, op that joins it) in this occurrence
  const auto collectives_before = [&](int group, size_t op) {
    for (const PlacedCollective& p : placed) {
      if (p.group != group || p.before_op != op) continue;
      CollectiveWork c = p.work;
      c.after_gemms = w.gemms.size();
      c.after_vectors = w.vectors.size();
      if (p.joined_by_op) joins.emplace_back(w.collectives.size(), *p.joined_by_op);
      w.collectives.push_back(std::move(c));
    }
  };
  for (size_t first = 0; first < lowered.ops.size();) {
    const int group_index = lowered.ops[first].group;
    size_t end = first;
    while (end < lowered.ops.size() && lowered.ops[end].group == group_index) ++end;
    const LayerGroup& group = lowered.groups[static_cast<size_t>(group_index)];
    for (int64_t occurrence = 0; occurrence < group.count; ++occurrence) {
      for (size_t i = first; i < end; ++i) {
        collectives_before(group_index, i);
        const TfOp& op = lowered.ops[i];
        const std::string op_name = group.name + "." + op.name;
        for (auto j = joins.begin(); j != joins.end();) {
          if (j->second != i) {
            ++j;
            continue;
          }
          if (!op.gemm()) throw std::logic_error("a collective is joined by '" + op_name + "', not a matmul");
          w.collectives[j->first].joined_by_gemm = w.gemms.size();
          j = joins.erase(j);
        }
        if (const GemmShape* g = op.gemm()) {
          w.gemms.push_back(gemm_of(lowered, op, *g, op_name));
          continue;
        }
        VectorWork v;
        v.name = op_name;
        v.op = op.vpu_op(lowered.precision.activations);
        v.repeat = op.repeat;
        v.after_gemms = w.gemms.size();
        v.source = path;
        w.vectors.push_back(std::move(v));
      }
      collectives_before(group_index, end);
    }
    first = end;
  }
  return w;
}

// --weight-dtype, --activation-dtype, --kv-dtype over the file's types, checked as the file's are.
void override_precision(const std::string& path, const WorkloadOptions& options, transformer::Precision& p) {
  const auto set = [&](const std::string& text, const char* flag, DType& field) {
    if (text.empty()) return;
    const auto type = kDTypeNames.parse(text);
    if (!type)
      fail(path, 0, fmt::format("{} '{}': expected one of {}{}", flag, text, kDTypeNames.choices(),
                                kDTypeNames.suggest(text)));
    field = *type;
  };
  set(options.weight_dtype, "--weight-dtype", p.weights);
  set(options.activation_dtype, "--activation-dtype", p.activations);
  set(options.kv_dtype, "--kv-dtype", p.kv_cache);
  if (const auto issue = transformer::check_precision(p))
    fail(path, 0, issue->message + " (the file's types with --weight-dtype/--activation-dtype/--kv-dtype over them)");
}

transformer::Lowered lower_model(const std::string& path, const WorkloadOptions& options,
                                 transformer::ModelSpec& model) {
  using namespace transformer;
  if (options.bucket.empty())
    fail(path, 0, "a transformer model needs a static shape: give --bucket BxS (prefill) or BxL (decode)");
  const auto phase = kPhaseNames.parse(options.phase);
  if (!phase)
    fail(path, 0, fmt::format("--phase '{}': expected {}{}", options.phase, kPhaseNames.choices(" or "),
                              kPhaseNames.suggest(options.phase)));
  model = load_model(path);
  override_precision(path, options, model.precision);
  return lower(model, *phase, parse_bucket(options.bucket, "--bucket"));
}

std::string workload_name(const std::string& path, const WorkloadOptions& options) {
  return file_stem(path) + "@" + options.phase + "-" + options.bucket;
}

}  // namespace

Workload load_model_workload(const std::string& path, const WorkloadOptions& options) {
  transformer::ModelSpec model;
  const transformer::Lowered lowered = lower_model(path, options, model);
  if (options.tp != 1 || options.ep != 1)
    fail(path, 0, fmt::format("--tp {} --ep {}: sharding needs a multi-chip system (ici.topology)", options.tp, options.ep));
  Workload w = to_workload(lowered, {}, path, workload_name(path, options));
  w.tp = 1;
  return w;
}

std::vector<Workload> load_model_workloads(const std::string& path, const WorkloadOptions& options, int chips) {
  using namespace transformer;
  ModelSpec model;
  const Lowered lowered = lower_model(path, options, model);
  ShardOptions shard_options;
  shard_options.tp = options.tp;
  shard_options.ep = options.ep;
  const auto routing = kRoutingNames.parse(options.routing);
  if (!routing)
    fail(path, 0, fmt::format("--routing '{}': expected {}{}", options.routing, kRoutingNames.choices(" or "),
                              kRoutingNames.suggest(options.routing)));
  shard_options.routing = *routing;
  // The CLI's --skew range, checked here too for the Python module's skew=.
  if (!(options.skew >= 0 && options.skew <= 10))
    fail(path, 0, fmt::format("--skew {}: expected a Zipf exponent in [0, 10]", options.skew));
  shard_options.skew = options.skew;
  shard_options.seed = options.routing_seed;
  std::vector<Workload> out;
  for (int chip = 0; chip < chips; ++chip) {
    const ShardedLayers s = shard(lowered, model, shard_options, chip, chips);
    out.push_back(to_workload(s.lowered, s.collectives, path, workload_name(path, options)));
    out.back().tp = options.tp;
  }
  return out;
}

}  // namespace systolic::workload_detail
