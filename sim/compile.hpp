#pragma once
// The compiler: lowers a workload to a program for one chip configuration.
// Today: each GEMM instance becomes one matmul per MXU, the MXUs splitting its column folds,
// and a layer starts when the previous one has finished on every MXU (a layer's input is
// the previous layer's output).
#include "sim/config.hpp"
#include "sim/program.hpp"
#include "sim/workload.hpp"

namespace systolic {

// Throws InputError naming the workload entry when a layer cannot run on this chip
// (e.g. its cycle count overflows 64 bits).
Program compile(const ChipConfig& config, const Workload& workload);

}  // namespace systolic
