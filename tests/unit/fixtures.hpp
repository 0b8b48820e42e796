#pragma once
// Small chips and workloads the C++ tests build by hand.
#include <utility>
#include <vector>

#include "sim/config/config.hpp"
#include "sim/workload/workload.hpp"

namespace systolic::testing {

// A side x side int8 array (4x4 by default): the size the hand-worked examples use.
inline ChipConfig tiny_chip(int64_t count, MxuModel model, Convention convention = Convention::tpu,
                            int64_t side = 4) {
  ChipConfig c;
  c.name = "tiny";
  c.mxu.rows = side;
  c.mxu.cols = side;
  c.mxu.count = count;
  c.mxu.model = model;
  c.mxu.convention = convention;
  c.mxu.dtype = DType::int8;
  return c;
}

inline Workload gemm_workload(std::vector<Gemm> list) {
  Workload w;
  w.name = "test";
  w.gemms = std::move(list);
  return w;
}

}  // namespace systolic::testing
