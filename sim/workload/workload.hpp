#pragma once
// Workloads: what to run, before it is lowered to per-engine instruction streams.
// File formats (docs/workloads.md), each a reader registered in sim/workload/readers/:
//  * GEMM list, YAML:  `gemms: [{name, m, k, n, dtype?, a_dtype?, b_dtype?, repeat?}, ...]`
//  * SCALE-Sim topology CSV, convolution form (`Layer name, IFMAP Height, IFMAP Width,
//    Filter Height, Filter Width, Channels, Num Filter, Strides,`) or GEMM form
//    (`Layer, M, N, K,`), detected from the header; convolutions map by im2col.
//  * Transformer model, YAML with a top-level `d_model`: lowered for --bucket and --phase.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/common/dtype.hpp"
#include "models/common/names.hpp"
#include "models/ici/topology.hpp"
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
  // B is the weights of this earlier entry (a pipeline stage's later micro-batches run the same
  // layers): held once in HBM, at that entry's address.
  std::optional<size_t> weights_of{};
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

enum class CollectiveKind { all_gather, reduce_scatter, all_reduce, all_to_all, permute };
inline constexpr auto kCollectiveKindNames =
    name_table<CollectiveKind>({{CollectiveKind::all_gather, "all_gather"},
                                {CollectiveKind::reduce_scatter, "reduce_scatter"},
                                {CollectiveKind::all_reduce, "all_reduce"},
                                {CollectiveKind::all_to_all, "all_to_all"},
                                {CollectiveKind::permute, "permute"}});

// The chips a collective runs over: one group of a parallelism mesh (docs/interconnect.md,
// "Parallelism meshes"), laid out as a grid of its own. Empty: every chip of the system, on
// the system's own topology.
struct ChipGroup {
  std::vector<int> members;   // chip ids in the group's order, dimension 0 of `dims` fastest
  std::vector<int64_t> dims;  // the group as a grid (the product: members.size())
  bool wraps = false;         // its dimensions close over wraparound links (rings as on a torus)
  bool empty() const { return members.empty(); }
  bool operator==(const ChipGroup& o) const { return members == o.members && dims == o.dims && wraps == o.wraps; }
};

// Whether the compiler may decompose a collective and overlap it with the matmul beside it
// (Wang et al., ASPLOS 2023; docs/interconnect.md, "Overlap"): the sharder knows which tensor a
// collective moves, so it says which matmul reads or writes it; the compiler decides whether
// the hardware allows it (sim/compile/overlap.hpp).
enum class Decompose {
  none,
  next_gemm,      // an all-gather of the rows the next GEMM reads as A: N - 1 permute steps, the
                  // GEMM a row block at a time on the blocks already in
  previous_gemm,  // a reduce-scatter of the rows the GEMM before it writes: its row blocks in
                  // the order the ring adds them
};
inline constexpr auto kDecomposeNames = name_table<Decompose>({{Decompose::none, "none"},
                                                               {Decompose::next_gemm, "next_gemm"},
                                                               {Decompose::previous_gemm, "previous_gemm"}});

// Communication between the chips of a system (docs/interconnect.md), lowered by the compiler
// to ICI messages (and VPU additions for the reductions) with the algorithm `ici.algorithm`
// names. `bytes` is per chip: all_reduce and reduce_scatter, the input every chip holds (a
// reduce_scatter leaves each chip 1/n of it); all_gather, the result every chip ends with
// (each contributes 1/n); all_to_all, the buffer each chip sends, 1/n to each member
// (itself included), unless `send_bytes` gives the bytes for each member in turn; permute,
// what each member sends to the next one of its group's ring (a collective-permute: the
// pipeline's stage boundaries, over the stages in order with `sends` / `receives` at the ends).
struct CollectiveWork {
  std::string name;
  CollectiveKind kind = CollectiveKind::all_reduce;
  uint64_t bytes = 0;
  DType dtype = DType::bf16;          // element type of the reduction's additions
  std::vector<uint64_t> send_bytes;   // all_to_all: bytes to member i (empty: bytes / n each)
  ChipGroup group;                    // empty: every chip
  // permute over `group` in member order (not a ring): this chip sends to the next member,
  // receives from the one before. Both: a ring shift over the group's ring order (GEMM lists).
  bool sends = true, receives = true;
  bool line = false;  // true: members in order, the last sends to nobody
  // permute between programs whose layer tables differ (pipeline stages): the receive
  // semaphore is named after this instead of the layer, the same on both ends.
  std::string channel;
  Decompose decompose = Decompose::none;
  int64_t repeat = 1;                 // instances, one after another (e.g. one per layer)
  size_t after_gemms = 0;             // runs after this many entries of `gemms`
  size_t after_vectors = 0;           // ... and after this many entries of `vectors`
  // The GEMM that first reads its result: the entries before it do not wait for it and run
  // while it communicates. Unset: the next entry.
  std::optional<size_t> joined_by_gemm;
  std::string source;
  bool operator==(const CollectiveWork& o) const;
};

// Where a chip sits in a parallelism mesh (docs/interconnect.md, "Parallelism meshes"), for
// reports: each axis with its degree, this chip's rank and group, and the axis's share of each
// torus dimension (empty for ep, which folds over dp x tp).
struct MeshAxisPlace {
  std::string name;  // tp, dp, pp, ep
  int64_t degree = 1;
  int64_t rank = 0;
  ChipGroup group;
  std::vector<int64_t> factors;
  bool operator==(const MeshAxisPlace& o) const {
    return name == o.name && degree == o.degree && rank == o.rank && group == o.group && factors == o.factors;
  }
};
struct MeshPlace {
  std::string text;  // --mesh as given
  std::vector<MeshAxisPlace> axes;
  int64_t micro_batches = 1;
  bool operator==(const MeshPlace& o) const {
    return text == o.text && axes == o.axes && micro_batches == o.micro_batches;
  }
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
  std::optional<MeshPlace> mesh;  // sharded with --mesh: this chip's place
  // Transformer models: what a tensor- and a pipeline-parallel degree must divide (the gcd of
  // the heads, KV heads and FFN widths sim/workload/transformer/shard.cpp splits; the layers),
  // for the capacity check's hint of a split that fits. 0: not a transformer model.
  int64_t tp_divides = 0, pp_divides = 0;
  // Every field: chips with equal workloads compile once where the program cannot depend on
  // the chip (compile_system).
  bool operator==(const Workload& o) const;
  // Every field but which chips: the members of the collectives' groups (their shapes count)
  // and `mesh`, this chip's place (which only reports and the capacity error's hint read). The
  // data-parallel replicas and tensor-parallel ranks of a mesh have workloads equal this way,
  // whose programs differ only in their collectives' lowering (compile_system).
  bool equal_but_chips(const Workload& o) const;
};
// One per chip of a system; chips with equal workloads share one object (compile_system).
using SharedWorkloads = std::vector<std::shared_ptr<const Workload>>;

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
  // A parallelism mesh instead of tp/ep (docs/interconnect.md, "Parallelism meshes"):
  // "dp=4,tp=8", each degree optionally "@" the torus axes its groups span ("tp=8@xy"); and
  // the micro-batches a pipeline (pp > 1) runs its batch in. "" : tp/ep as above.
  std::string mesh{};
  int64_t micro_batches = 1;
  // Collectives decomposed and overlapped with the matmul beside them where the hardware
  // allows (sim/compile/overlap.hpp); false: every collective whole (--overlap off).
  bool overlap = true;
  // Overrides of the model file's weight_dtype, activation_dtype and kv_dtype (--weight-dtype
  // etc., docs/precision.md); "" keeps the file's. Checked like the file's keys.
  std::string weight_dtype{}, activation_dtype{}, kv_dtype{};
};

// Reads a GEMM list, a SCALE-Sim CSV or a transformer model (a YAML file with `d_model`),
// the latter lowered at options.bucket and options.phase (docs/transformers.md). Throws
// InputError naming the file and line on any problem.
Workload load_workload(const std::string& path, const WorkloadOptions& options = {});

// One workload per chip of `system`: a transformer model sharded with options.tp / options.ep
// or options.mesh (each chip its share and the collectives between them), any other workload
// as it is on every chip. Throws InputError as load_workload does.
std::vector<Workload> load_system_workloads(const std::string& path, const WorkloadOptions& options,
                                            const Topology& system);
// The same on a ring of `chips` (a mesh is laid on the system's real topology: use the above).
std::vector<Workload> load_system_workloads(const std::string& path, const WorkloadOptions& options, int chips);

}  // namespace systolic
