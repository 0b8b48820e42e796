#pragma once
// One description of each operation's fields, walked by both the writer and the reader, so
// the two cannot drift apart. Adding an operation = a `fields` overload + a name in kOps.
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <variant>

#include "models/common/dtype.hpp"
#include "models/isa/program.hpp"

namespace systolic::trace_detail {

// Scratchpad names in traces, indexed by ScratchpadId; HBM is "hbm".
inline constexpr const char* kSpaces[] = {"vmem", "weights", "accumulators"};

template <class Visitor>
void fields(DmaOp& op, Visitor& v) {
  v.endpoint("src", op.descriptor.src);
  v.endpoint("dst", op.descriptor.dst);
  v.integer("elem", op.descriptor.element_bytes, 1);
  v.triple("shape", op.descriptor.shape);
  v.triple("src_stride", op.descriptor.src.stride);
  v.triple("dst_stride", op.descriptor.dst.stride);
}

template <class Visitor>
void fields(VpuOp& op, Visitor& v) {
  v.vector_kind("kind", op.kind);
  v.integer("rows", op.rows, 1);
  v.integer("cols", op.cols, 1);
  v.dtype("dtype", op.dtype);
  v.optional_dtype("to", op.to_dtype);  // dequantize: the type it writes
}

template <class Visitor>
void fields(MatmulOp& op, Visitor& v) {
  v.integer("m", op.m, 1);
  v.integer("k", op.k, 1);
  v.integer("n", op.n, 1);
  v.integer("n0", op.n_offset, 0);
  v.optional_integer("m0", op.m_offset);  // written when not 0
  v.optional_integer("inst", op.instance);
  v.dtype("dtype", op.dtype);
  // Mixed precision: the operands' stored types when they differ, an fp8 operand's scale.
  v.optional_dtype("a", op.a_dtype);
  v.optional_dtype("b", op.b_dtype);
  v.scale("a_scale", op.a_scale, dtype_is_fp8(op.a()));
  v.scale("b_scale", op.b_scale, dtype_is_fp8(op.b()));
}

// Each message as msg=<to chip>,<bytes>,<recv semaphore>,<tie +|->[,<src hbm addr>,<dst hbm addr>].
template <class Visitor>
void fields(IciOp& op, Visitor& v) {
  v.messages("msg", op.copies);
}

struct OpName {
  const char* name;
  EngineKind engine;  // the only engine kind that may execute it
};
// Indexed like the Operation variant.
inline constexpr OpName kOps[] = {{"matmul", EngineKind::mxu}, {"dma", EngineKind::dma}, {"vector", EngineKind::vpu},
                                  {"send", EngineKind::ici}};
static_assert(std::size(kOps) == std::variant_size_v<Operation>);

// A default-constructed operation of variant alternative `index`.
template <size_t... I>
Operation make_op(size_t index, std::index_sequence<I...>) {
  Operation op;
  ((index == I ? (op = std::variant_alternative_t<I, Operation>{}, 0) : 0), ...);
  return op;
}
inline Operation make_op(size_t index) {
  return make_op(index, std::make_index_sequence<std::variant_size_v<Operation>>{});
}

}  // namespace systolic::trace_detail
