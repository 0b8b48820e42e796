#pragma once
// Workloads: what to run, before it is lowered to per-engine instruction streams.
// File formats (docs/workloads.md), each a reader registered in sim/workload/readers/:
//  * GEMM list, YAML:  `gemms: [{name, m, k, n, dtype?, a_dtype?, b_dtype?, repeat?}, ...]`
//  * SCALE-Sim topology CSV, convolution form (`Layer name, IFMAP Height, IFMAP Width,
//    Filter Height, Filter Width, Channels, Num Filter, Strides,`) or GEMM form
//    (`Layer, M, N, K,`), detected from the header; convolutions map by im2col.
//  * Transformer model, YAML with a top-level `d_model`: lowered for --bucket and --phase.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/common/dtype.hpp"
#include "models/common/names.hpp"
#include "models/isa/program.hpp"
#include "models/vpu/vpu_core.hpp"

namespace systolic {

struct Gemm {
  std::string name;
  int64_t m = 0;  // rows of activations streamed through the array (im2col: output pixels)
  int64_t k = 0;  // reduction dimension (im2col: Fh * Fw * C), mapped onto array rows
  int64_t n = 0;  // output features (filters), mapped onto array columns
  std::optional<DType> dtype;  // both operands; unset: the chip's mxu.dtype
  int64_t repeat = 1;          // identical back-to-back instances
  std::string source;          // "file:line" for error messages
  LayerKind kind = LayerKind::matmul;  // matmul, or attention (activation x activation / KV)
  // B is the previous entry's B, still on chip (MLA decode: the context reads the latent cache
  // the scores just read): a fused attention chain does not load it again.
  bool b_from_previous = false;
  // Rows of real work over all instances; the rest of m x repeat pads the static shape (MoE
  // experts padded to the busiest one). -1: every row. Useful MACs count only these.
  int64_t useful_rows = -1;
  // Consecutive instances that read the same B (GQA: the query heads of one KV head): held
  // once in HBM.
  int64_t b_group = 1;
  // Mixed precision (docs/precision.md): A (activations, also the output's type) and B
  // (weights or KV cache) when they differ from `dtype`; models/mxu/operands.hpp says which
  // pairs exist and what the MXU computes them in.
  std::optional<DType> a_dtype{};
  std::optional<DType> b_dtype{};
  double fp8_scale = 1.0;      // static scale of every fp8 operand: a compile-time constant

  DType a_type(DType chip) const { return a_dtype.value_or(dtype.value_or(chip)); }
  DType b_type(DType chip) const { return b_dtype.value_or(dtype.value_or(chip)); }
  bool operator==(const Gemm& o) const;  // every field (workload.cpp)
};

// Vector-unit work (norms, activations, softmax, residual adds) between GEMMs.
struct VectorWork {
  std::string name;
  VpuOp op;
  int64_t repeat = 1;
  size_t after_gemms = 0;  // runs after this many entries of `gemms` (its input's producer)
  std::string source;
  bool operator==(const VectorWork& o) const;
};

enum class CollectiveKind { all_gather, reduce_scatter, all_reduce, all_to_all };
inline constexpr auto kCollectiveKindNames = name_table<CollectiveKind>(
    {{CollectiveKind::all_gather, "all_gather"}, {CollectiveKind::reduce_scatter, "reduce_scatter"},
     {CollectiveKind::all_reduce, "all_reduce"}, {CollectiveKind::all_to_all, "all_to_all"}});

// Communication between the chips of a system (docs/interconnect.md), lowered by the compiler
// to ICI messages (and VPU additions for the reductions) with the algorithm `ici.algorithm`
// names. `bytes` is per chip: all_reduce and reduce_scatter, the input every chip holds (a
// reduce_scatter leaves each chip 1/n of it); all_gather, the result every chip ends with
// (each contributes 1/n); all_to_all, the buffer each chip sends, 1/n to each member
// (itself included), unless `send_bytes` gives the bytes for each member in turn.
struct CollectiveWork {
  std::string name;
  CollectiveKind kind = CollectiveKind::all_reduce;
  uint64_t bytes = 0;
  DType dtype = DType::bf16;          // element type of the reduction's additions
  std::vector<uint64_t> send_bytes;   // all_to_all: bytes to member i (empty: bytes / n each)
  int64_t repeat = 1;                 // instances, one after another (e.g. one per layer)
  size_t after_gemms = 0;             // runs after this many entries of `gemms`
  size_t after_vectors = 0;           // ... and after this many entries of `vectors`
  // The GEMM that first reads its result: the entries before it do not wait for it and run
  // while it communicates. Unset: the next entry.
  std::optional<size_t> joined_by_gemm;
  std::string source;
  bool operator==(const CollectiveWork& o) const;
};

struct Workload {
  std::string name;  // file stem
  std::string path;
  std::vector<Gemm> gemms;
  std::vector<VectorWork> vectors;  // in order of after_gemms
  std::vector<CollectiveWork> collectives;  // in order of (after_gemms, after_vectors)
  // Transformer models: the tensor-parallel degree (--tp) this chip's share was cut with; 0
  // where --tp does not apply (GEMM lists and CSVs; pack's shapes, replayed on one chip).
  int64_t tp = 0;
  // Every field: chips with equal workloads compile once where the program cannot depend on
  // the chip (compile_system).
  bool operator==(const Workload& o) const;
};

// How to instantiate a transformer model file (traces/models/*.yaml) at a static shape.
struct WorkloadOptions {
  std::string bucket;               // "BxS" (prefill) or "BxL" (decode); required for models
  std::string phase = "prefill";    // prefill | decode
  // Multi-chip systems (docs/interconnect.md, "Sharding"): tensor- and expert-parallel
  // degrees and the MoE token routing.
  int64_t tp = 1;
  int64_t ep = 1;
  std::string routing = "uniform";  // uniform | skewed (Zipf)
  double skew = 1.0;
  uint64_t routing_seed = 1;
  // Overrides of the model file's weight_dtype, activation_dtype and kv_dtype (--weight-dtype
  // etc., docs/precision.md); "" keeps the file's. Checked like the file's keys.
  std::string weight_dtype{}, activation_dtype{}, kv_dtype{};
};

// Reads a GEMM list, a SCALE-Sim CSV or a transformer model (a YAML file with `d_model`),
// the latter lowered at options.bucket and options.phase (docs/transformers.md). Throws
// InputError naming the file and line on any problem.
Workload load_workload(const std::string& path, const WorkloadOptions& options = {});

// One workload per chip of a `chips`-chip system: a transformer model sharded with
// options.tp / options.ep (each chip its share and the collectives between them), any other
// workload as it is on every chip. Throws InputError as load_workload does.
std::vector<Workload> load_system_workloads(const std::string& path, const WorkloadOptions& options, int chips);

}  // namespace systolic
