#pragma once
// Workloads: what to run, before it is lowered to per-engine instruction streams.
// Two file formats today (docs/workloads.md):
//  * GEMM list, YAML:  `gemms: [{name, m, k, n, dtype?, repeat?}, ...]`
//  * SCALE-Sim topology CSV, convolution form (`Layer name, IFMAP Height, IFMAP Width,
//    Filter Height, Filter Width, Channels, Num Filter, Strides,`) or GEMM form
//    (`Layer, M, N, K,`), detected from the header; convolutions map by im2col.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/common/dtype.hpp"

namespace systolic {

struct Gemm {
  std::string name;
  int64_t m = 0;  // rows of activations streamed through the array (im2col: output pixels)
  int64_t k = 0;  // reduction dimension (im2col: Fh * Fw * C), mapped onto array rows
  int64_t n = 0;  // output features (filters), mapped onto array columns
  std::optional<DType> dtype;  // unset: the chip's mxu.dtype
  int64_t repeat = 1;          // identical back-to-back instances
  std::string source;          // "file:line" for error messages
};

struct Workload {
  std::string name;  // file stem
  std::string path;
  std::vector<Gemm> gemms;
};

// Reads either format; throws InputError naming the file and line on any problem.
Workload load_workload(const std::string& path);

}  // namespace systolic
