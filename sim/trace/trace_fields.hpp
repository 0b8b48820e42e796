#pragma once
// One description of each operation's fields, walked by both the writer and the reader, so
// the two cannot drift apart. Adding an operation = a `fields` overload + a name in kOps.
#include <cstdint>
#include <string>

#include "models/common/dtype.hpp"
#include "sim/program.hpp"

namespace systolic::trace_detail {

template <class Visitor>
void fields(MatmulOp& op, Visitor& v) {
  v.integer("m", op.m, 1);
  v.integer("k", op.k, 1);
  v.integer("n", op.n, 1);
  v.integer("n0", op.n_offset, 0);
  v.dtype("dtype", op.dtype);
}

struct OpName {
  const char* name;
  EngineKind engine;  // the only engine kind that may execute it
};
// Indexed like the Operation variant.
inline constexpr OpName kOps[] = {{"matmul", EngineKind::mxu}};

}  // namespace systolic::trace_detail
