// Transformer model files as workloads: lowered at a bucket shape and phase
// (sim/workload/transformer/lower.hpp) into GEMMs and vector-unit work, every layer included.
#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include "models/common/suggest.hpp"
#include "sim/workload/detail.hpp"
#include "sim/workload/transformer/lower.hpp"
#include "sim/workload/transformer/shard.hpp"
#include "sim/workload/transformer/shard_mesh.hpp"

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
// occurrences of an op by name (sim/report/report.cpp). A pipeline stage runs its layers once
// per micro-batch, receiving each micro-batch from the stage before and sending it on.
class WorkloadBuilder {
 public:
  WorkloadBuilder(const transformer::Lowered& lowered,
                  const std::vector<transformer::PlacedCollective>& placed, Workload& w)
      : l_(lowered), placed_(placed), w_(w) {}

  // Occurrences [from, to) of the group whose ops are [first, end).
  void occurrences(size_t first, size_t end, int64_t from, int64_t to) {
    const transformer::LayerGroup& group = l_.groups[static_cast<size_t>(l_.ops[first].group)];
    for (int64_t occurrence = from; occurrence < to; ++occurrence) {
      for (size_t i = first; i < end; ++i) {
        collectives_before(l_.ops[i].group, i);
        op(i, group.name + "." + l_.ops[i].name);
      }
      collectives_before(l_.ops[first].group, end);
    }
  }

  // Ends a pass over the layers (a micro-batch): the next one's matmuls share its weights.
  void end_pass() { gemms_per_pass_ = w_.gemms.size() / ++passes_; }

  void collective(CollectiveWork c) {
    c.after_gemms = w_.gemms.size();
    c.after_vectors = w_.vectors.size();
    w_.collectives.push_back(std::move(c));
  }

 private:
  void collectives_before(int group, size_t op) {
    for (const transformer::PlacedCollective& p : placed_) {
      if (p.group != group || p.before_op != op) continue;
      if (p.joined_by_op) joins_.emplace_back(w_.collectives.size(), *p.joined_by_op);
      collective(p.work);
    }
  }

  void op(size_t i, const std::string& op_name) {
    using namespace transformer;
    const TfOp& op = l_.ops[i];
    for (auto j = joins_.begin(); j != joins_.end();) {
      if (j->second != i) {
        ++j;
        continue;
      }
      if (!op.gemm()) throw std::logic_error("a collective is joined by '" + op_name + "', not a matmul");
      w_.collectives[j->first].joined_by_gemm = w_.gemms.size();
      j = joins_.erase(j);
    }
    if (const GemmShape* g = op.gemm()) {
      w_.gemms.push_back(gemm_of(l_, op, *g, op_name));
      // A later micro-batch's matmul reads the first one's weights (its attention, its own
      // sequences' keys and values).
      if (gemms_per_pass_ > 0 && g->b == Operand::weights)
        w_.gemms.back().weights_of = w_.gemms.size() - 1 - gemms_per_pass_;
      return;
    }
    VectorWork v;
    v.name = op_name;
    v.op = op.vpu_op(l_.precision.activations);
    v.repeat = op.repeat;
    v.after_gemms = w_.gemms.size();
    v.source = w_.path;
    w_.vectors.push_back(std::move(v));
  }

  const transformer::Lowered& l_;
  const std::vector<transformer::PlacedCollective>& placed_;
  Workload& w_;
  std::vector<std::pair<size_t, size_t>> joins_;  // (collective, op that joins it) in this occurrence
  size_t gemms_per_pass_ = 0, passes_ = 0;
};

// A pipeline stage's boundary with the stage before (`in`) or after: a permute along the
// stages, received on (and sent to) the channel "pipeline" whatever the stages' layer tables.
CollectiveWork stage_boundary(const transformer::PipelineStage& st, bool in, const std::string& source) {
  CollectiveWork c;
  c.name = in ? "pipeline.recv" : "pipeline.send";
  c.kind = CollectiveKind::permute;
  c.bytes = st.bytes;
  c.dtype = st.dtype;
  c.group = st.group;
  c.line = true;
  c.sends = !in;
  c.receives = in;
  c.channel = "pipeline";
  c.source = source;
  return c;
}

// The occurrences of a group a stage runs: the embedding on the first stage, the head on the
// last, the layer groups' occurrences among its layers.
std::pair<int64_t, int64_t> stage_occurrences(const transformer::Lowered& l, size_t group,
                                              const std::optional<transformer::PipelineStage>& st) {
  const transformer::LayerGroup& g = l.groups[group];
  if (!st) return {0, g.count};
  if (g.first_layer < 0) {
    bool after_layers = false;
    for (size_t j = 0; j < group; ++j) after_layers |= l.groups[j].first_layer >= 0;
    const bool here = after_layers ? st->stage + 1 == st->stages : st->stage == 0;
    return {0, here ? g.count : 0};
  }
  return {std::clamp<int64_t>(st->first_layer - g.first_layer, 0, g.count),
          std::clamp<int64_t>(st->end_layer - g.first_layer, 0, g.count)};
}

Workload to_workload(const transformer::Lowered& lowered,
                     const std::vector<transformer::PlacedCollective>& placed, const std::string& path,
                     std::string name,
                     const std::optional<transformer::PipelineStage>& stage = std::nullopt) {
  Workload w;
  w.name = std::move(name);
  w.path = path;
  WorkloadBuilder build(lowered, placed, w);
  for (int64_t mb = 0; mb < (stage ? stage->micro_batches : 1); ++mb) {
    if (stage && stage->stage > 0) build.collective(stage_boundary(*stage, true, path));
    for (size_t first = 0; first < lowered.ops.size();) {
      size_t end = first;
      while (end < lowered.ops.size() && lowered.ops[end].group == lowered.ops[first].group) ++end;
      const auto [from, to] =
          stage_occurrences(lowered, static_cast<size_t>(lowered.ops[first].group), stage);
      build.occurrences(first, end, from, to);
      first = end;
    }
    if (stage && stage->stage + 1 < stage->stages) build.collective(stage_boundary(*stage, false, path));
    build.end_pass();
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

// What its tensor- and pipeline-parallel degrees must divide, for the capacity check's hint.
void limit_splits(Workload& w, const transformer::ModelSpec& model, bool expert_parallel) {
  w.tp_divides = transformer::tp_divides(model, expert_parallel);
  w.pp_divides = model.layers;
}

}  // namespace

Workload load_model_workload(const std::string& path, const WorkloadOptions& options) {
  transformer::ModelSpec model;
  const transformer::Lowered lowered = lower_model(path, options, model);
  if (!options.mesh.empty())
    fail(path, 0,
         fmt::format("--mesh '{}': a parallelism mesh needs a multi-chip system (ici.topology)",
                     options.mesh));
  if (options.tp != 1 || options.ep != 1)
    fail(path, 0, fmt::format("--tp {} --ep {}: sharding needs a multi-chip system (ici.topology)", options.tp, options.ep));
  if (options.micro_batches != 1)
    fail(path, 0,
         fmt::format("--micro-batches {}: expected 1 without a pipeline (--mesh pp=P with P > 1)",
                     options.micro_batches));
  Workload w = to_workload(lowered, {}, path, workload_name(path, options));
  w.tp = 1;
  limit_splits(w, model, false);
  return w;
}

namespace {

// --routing, --skew, --routing-seed and --overlap as the sharder takes them.
transformer::ShardOptions shard_options_of(const std::string& path, const WorkloadOptions& options) {
  using namespace transformer;
  ShardOptions o;
  o.tp = options.tp;
  o.ep = options.ep;
  o.overlap = options.overlap;
  const auto routing = kRoutingNames.parse(options.routing);
  if (!routing)
    fail(path, 0, fmt::format("--routing '{}': expected {}{}", options.routing, kRoutingNames.choices(" or "),
                              kRoutingNames.suggest(options.routing)));
  o.routing = *routing;
  // The CLI's --skew range, checked here too for the Python module's skew=.
  if (!(options.skew >= 0 && options.skew <= 10))
    fail(path, 0, fmt::format("--skew {}: expected a Zipf exponent in [0, 10]", options.skew));
  o.skew = options.skew;
  o.seed = options.routing_seed;
  return o;
}

// The shape one micro-batch of one data-parallel replica runs: B / (dp x micro-batches).
WorkloadOptions replica_shape(const std::string& path, const WorkloadOptions& options,
                              const transformer::MeshSpec& mesh) {
  const int64_t dp = mesh.of(transformer::MeshAxis::dp), mb = options.micro_batches;
  if (mb < 1 || mb > 65536)
    fail(path, 0, fmt::format("--micro-batches {}: expected an integer in [1, 65536]", mb));
  if (mb > 1 && mesh.of(transformer::MeshAxis::pp) == 1)
    fail(path, 0,
         fmt::format("--micro-batches {}: expected 1 without a pipeline (--mesh pp=P with P > 1)", mb));
  if (options.bucket.empty()) return options;  // lower_model names the missing --bucket
  const packing::Shape b = transformer::parse_bucket(options.bucket, "--bucket");
  if (b.batch % (dp * mb) != 0)
    fail(path, 0,
         fmt::format(
             "--mesh dp={} with --micro-batches {}: the batch B = {} of --bucket {} is not a multiple "
             "of dp x micro-batches = {} (each data-parallel replica runs B / dp {}, in micro-batches)",
             dp, mb, b.batch, options.bucket, dp * mb, options.phase == "decode" ? "slots" : "sequences"));
  WorkloadOptions o = options;
  o.bucket = fmt::format("{}x{}", b.batch / (dp * mb), b.length);
  return o;
}

// --mesh: each chip its share of one replica's micro-batch, the collectives over its groups.
std::vector<Workload> load_mesh_workloads(const std::string& path, const WorkloadOptions& options,
                                          const Topology& system) {
  using namespace transformer;
  if (options.tp != 1 || options.ep != 1)
    fail(path, 0,
         fmt::format("--mesh '{}' with --tp {} --ep {}: expected one or the other (the mesh's tp= and ep= "
                     "replace them)",
                     options.mesh, options.tp, options.ep));
  const MeshLayout layout(parse_mesh(options.mesh), system);
  ModelSpec model;
  const Lowered lowered = lower_model(path, replica_shape(path, options, layout.spec()), model);
  ShardOptions shard_options = shard_options_of(path, options);
  shard_options.mesh = &layout;
  shard_options.micro_batches = options.micro_batches;
  std::vector<Workload> out;
  for (int chip = 0; chip < system.chips(); ++chip) {
    const ShardedLayers s = shard(lowered, model, shard_options, chip, system.chips());
    out.push_back(to_workload(s.lowered, s.collectives, path, workload_name(path, options), s.stage));
    out.back().tp = layout.spec().of(MeshAxis::tp);
    out.back().mesh = layout.place(chip, options.micro_batches);
    limit_splits(out.back(), model, layout.spec().ep > 1);
  }
  return out;
}

}  // namespace

std::vector<Workload> load_model_workloads(const std::string& path, const WorkloadOptions& options,
                                           const Topology& system) {
  using namespace transformer;
  if (!options.mesh.empty()) return load_mesh_workloads(path, options, system);
  if (options.micro_batches != 1)
    fail(path, 0,
         fmt::format("--micro-batches {}: expected 1 without a pipeline (--mesh pp=P with P > 1)",
                     options.micro_batches));
  ModelSpec model;
  const Lowered lowered = lower_model(path, options, model);
  const ShardOptions shard_options = shard_options_of(path, options);
  std::vector<Workload> out;
  for (int chip = 0; chip < system.chips(); ++chip) {
    const ShardedLayers s = shard(lowered, model, shard_options, chip, system.chips());
    out.push_back(to_workload(s.lowered, s.collectives, path, workload_name(path, options)));
    out.back().tp = options.tp;
    limit_splits(out.back(), model, options.ep > 1);
  }
  return out;
}

}  // namespace systolic::workload_detail
