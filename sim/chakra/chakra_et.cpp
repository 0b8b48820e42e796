#include "sim/chakra/chakra_et.hpp"

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cmath>

#include "et_def.pb.h"
#include "models/common/error.hpp"
#include "sim/report/layer_graph.hpp"

namespace systolic {

namespace {

namespace pb = ChakraProtoMsg;

// Chakra's collective types for ours.
pb::CollectiveCommType comm_type(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_gather:
      return pb::ALL_GATHER;
    case CollectiveKind::reduce_scatter:
      return pb::REDUCE_SCATTER;
    case CollectiveKind::all_reduce:
      return pb::ALL_REDUCE;
    case CollectiveKind::all_to_all:
      return pb::ALL_TO_ALL;
    case CollectiveKind::permute:
      // A pipeline's stage-to-stage sends: Chakra has no collective-permute, and its send/receive
      // nodes need the peer of each message, which a layer-level node does not carry.
      throw InputError(
          "--chakra: a collective-permute (the stage boundaries of a --mesh pp pipeline) has no Chakra "
          "collective type; export a run without pipeline parallelism");
  }
  return pb::ALL_REDUCE;  // unreachable: -Werror=switch names every kind
}

// Appends `m` as Chakra's protolib encodeMessage does: its length as a varint, then the message.
void append(std::string& out, const google::protobuf::Message& m) {
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  coded.WriteVarint32(static_cast<uint32_t>(m.ByteSizeLong()));
  m.SerializeToCodedStream(&coded);
}

template <class T>
void attr(pb::Node& node, const char* name, T value) {
  pb::AttributeProto* a = node.add_attr();
  a->set_name(name);
  if constexpr (std::is_same_v<T, bool>)
    a->set_bool_val(value);
  else if constexpr (std::is_same_v<T, uint64_t>)
    a->set_uint64_val(value);
  else if constexpr (std::is_same_v<T, int64_t>)
    a->set_int64_val(value);
  else
    a->set_string_val(value);
}

// Microseconds, the schema's unit, rounded to the nearest; `cycles` keeps the exact count.
uint64_t micros(uint64_t cycles, double clock_mhz) {
  return static_cast<uint64_t>(std::llround(static_cast<double>(cycles) / clock_mhz));
}

CollectiveKind kind_of(const Workload& workload, const std::string& name) {
  for (const auto& c : workload.collectives)
    if (c.name == name) return c.kind;
  throw InputError(
      fmt::format("--chakra: the collective '{}' has no kind in this run (a compiled trace does not "
                  "record one); run the workload (-w) instead",
                  name));
}

pb::Node node_of(const ChipConfig& config, const Workload& workload, const Program& program,
                 const LayerNode& n) {
  const LayerInfo& l = program.layers[static_cast<size_t>(n.layer)];
  pb::Node node;
  node.set_id(static_cast<uint64_t>(n.layer));
  node.set_name(l.name);
  for (int p : n.parents) node.add_data_deps(static_cast<uint64_t>(p));
  node.set_start_time_micros(micros(n.start, config.clock_mhz));
  node.set_duration_micros(micros(n.end - n.start, config.clock_mhz));
  attr(node, "is_cpu_op", false);
  if (l.kind == LayerKind::collective) {
    node.set_type(pb::COMM_COLL_NODE);
    attr(node, "comm_type", static_cast<int64_t>(comm_type(kind_of(workload, l.name))));
    attr(node, "comm_size", static_cast<int64_t>(l.m));  // bytes per chip
  } else {
    node.set_type(pb::COMP_NODE);
    attr(node, "num_ops", static_cast<int64_t>(2 * l.useful_macs));  // a MAC is two operations
    attr(node, "tensor_size", n.hbm_bytes);
  }
  attr(node, "kind", std::string(kLayerKindNames.name(l.kind)));
  attr(node, "start_cycle", n.start);
  attr(node, "cycles", n.end - n.start);
  return node;
}

}  // namespace

std::string chakra_file_name(const std::string& prefix, int chip) {
  return fmt::format("{}.{}.et", prefix, chip);
}

std::vector<std::pair<std::string, std::string>> chakra_traces(const ChipConfig& config, const RunResult& run,
                                                               const std::string& prefix) {
  std::vector<std::pair<std::string, std::string>> files;
  for (size_t chip = 0; chip < run.programs.size(); ++chip) {
    std::string bytes;
    pb::GlobalMetadata meta;
    meta.set_version("1.0.0");  // as Chakra's own generator writes it
    pb::AttributeProto* generator = meta.add_attr();
    generator->set_name("generator");
    generator->set_string_val("systolic " SYSTOLIC_VERSION);
    append(bytes, meta);
    const std::vector<int> remote = remote_signallers(run.programs, chip);
    for (const LayerNode& n : layer_graph(*run.programs[chip], run.result.chip(chip), remote))
      append(bytes, node_of(config, *run.workloads[chip], *run.programs[chip], n));
    files.emplace_back(chakra_file_name(prefix, static_cast<int>(chip)), std::move(bytes));
  }
  return files;
}

}  // namespace systolic
