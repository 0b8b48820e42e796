#pragma once
// Chakra execution traces for ASTRA-sim (docs/workloads.md, "ASTRA-sim and Chakra execution
// traces"), in Chakra's schema (third_party/chakra/et_def.proto, compiled by Debian's protoc).
// Its own library (CMakeLists.txt: systolic_chakra), linked by the CLI but not by
// the Python module, so that one process can import both `systolic` and Chakra's et_def_pb2.
#include <string>
#include <utility>
#include <vector>

#include "sim/run/pipeline.hpp"

namespace systolic {

// ASTRA-sim's name for rank `chip`'s file: "<prefix>.<chip>.et".
std::string chakra_file_name(const std::string& prefix, int chip);

// One file per chip (name, bytes), each as Chakra's tools write one: a GlobalMetadata message,
// then one Node per layer-table entry that ran on the chip, in layer order, each preceded by its
// length as a varint. A matmul, attention or vector entry is a COMP_NODE, a collective a
// COMM_COLL_NODE (comm_type, comm_size: its bytes per chip); data_deps are the entries it waited
// for (sim/report/layer_graph.hpp). Throws InputError for a collective whose kind the run does
// not know (a compiled trace carries no collective kinds).
std::vector<std::pair<std::string, std::string>> chakra_traces(const ChipConfig& config, const RunResult& run,
                                                               const std::string& prefix);

}  // namespace systolic
