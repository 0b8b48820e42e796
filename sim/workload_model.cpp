// Transformer model files as workloads: lowered at a bucket shape and phase
// (sim/transformer/lower.hpp) into GEMMs and vector-unit work, every layer included.
#include <yaml-cpp/yaml.h>

#include "sim/transformer/lower.hpp"
#include "sim/workload_detail.hpp"

namespace systolic::workload_detail {

bool is_model_file(const std::string& path) {
  try {
    const YAML::Node root = YAML::LoadFile(path);
    return root.IsMap() && root["d_model"];
  } catch (const YAML::Exception&) {
    return false;  // the GEMM-list reader reports the syntax error with its line
  }
}

Workload load_model_workload(const std::string& path, const WorkloadOptions& options) {
  using namespace transformer;
  if (options.bucket.empty())
    fail(path, 0, "a transformer model needs a static shape: give --bucket BxS (prefill) or BxL (decode)");
  const auto phase = parse_phase(options.phase);
  if (!phase) fail(path, 0, "--phase '" + options.phase + "': expected prefill or decode");
  const ModelSpec model = load_model(path);
  const Lowered lowered = lower(model, *phase, parse_bucket(options.bucket, "--bucket"));

  Workload w;
  w.name = file_stem(path) + "@" + std::string(phase_name(*phase)) + "-" + options.bucket;
  w.path = path;
  w.gemms = to_gemms(lowered);
  // to_gemms keeps the order of the matmul/attention ops; tag attention and place each
  // vector op after the GEMMs that precede it in the lowering.
  size_t gemms_before = 0;
  for (const TfOp& op : lowered.ops) {
    const LayerGroup& group = lowered.groups[static_cast<size_t>(op.group)];
    if (op.gemm()) {
      if (op.kind == OpKind::attention) w.gemms[gemms_before].kind = "attention";
      ++gemms_before;
      continue;
    }
    VectorWork v;
    v.name = group.name + "." + op.name;
    v.op = op.vpu_op(lowered.dtype);
    v.repeat = op.repeat * group.count;
    v.after_gemms = gemms_before;
    v.source = path;
    w.vectors.push_back(std::move(v));
  }
  return w;
}

}  // namespace systolic::workload_detail
