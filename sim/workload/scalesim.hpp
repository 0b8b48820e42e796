#pragma once
// SCALE-Sim v2 convolution layer -> GEMM mapping (im2col), exactly as SCALE-Sim computes it
// (scalesim/topology_utils.py: topo_calc_hyperparams; scalesim/compute/operand_matrix.py).
// See docs/workloads.md.
#include <cstdint>
#include <optional>
#include <string>

namespace systolic {

struct ConvLayer {
  std::string name;
  int64_t ifmap_h = 1, ifmap_w = 1;    // input as given: SCALE-Sim pads nothing (valid conv)
  int64_t filter_h = 1, filter_w = 1;  // must not exceed the ifmap
  int64_t channels = 1;
  int64_t num_filters = 1;
  int64_t stride_h = 1, stride_w = 1;
};

struct Im2col {
  int64_t ofmap_h = 0, ofmap_w = 0;
  int64_t m = 0;  // ofmap_h * ofmap_w   (SCALE-Sim WS: T,  rows of the ifmap operand matrix)
  int64_t k = 0;  // filter_h * filter_w * channels   (Sr, the conv window)
  int64_t n = 0;  // num_filters                      (Sc)
};

// ofmap = ceil((ifmap - filter + stride) / stride) per dimension: a partial window at the far
// edge still produces an output (SCALE-Sim marks its missing inputs as padding). Requires
// positive fields and filter <= ifmap; nullopt if M, K, N or M*K*N overflows int64.
std::optional<Im2col> scalesim_im2col(const ConvLayer& layer);

}  // namespace systolic
