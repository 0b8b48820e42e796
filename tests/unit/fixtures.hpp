#pragma once
// Small chips and workloads the C++ tests build by hand.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "models/mxu/pe_grid.hpp"
#include "sim/compile/compile.hpp"
#include "sim/config/config.hpp"
#include "sim/simulate/simulate.hpp"
#include "sim/workload/workload.hpp"

namespace systolic::testing {

inline const std::string kRepo = SYSTOLIC_SOURCE_DIR;
inline const std::string kGemms = kRepo + "/traces/gemms";

// A shipped chip config, configs/NAME.yaml, with --set style overrides.
inline ChipConfig config_preset(const std::string& name, const std::vector<std::string>& overrides = {}) {
  return load_config(kRepo + "/configs/" + name + ".yaml", overrides);
}

// Writes `content` to NAME in a per-process temp directory and returns its path.
inline std::string temp_file(const std::string& name, const std::string& content) {
  const auto dir = std::filesystem::temp_directory_path() / ("systolic_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// Every chip of C's system runs W: compiled for all of them, simulated together.
inline SystemResult run_on_every_chip(const ChipConfig& c, const Workload& w) {
  return simulate_system(c, compile_system(c, std::vector<Workload>(static_cast<size_t>(c.ici.chips()), w)));
}

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

// A tiny part whose latencies are easy to work by hand: one pseudo-channel, 2 banks, 256 B
// rows, an 8 B bus at 1 Gb/s per pin (8 B/ns), 32 B bursts of 4 ns, no refresh.
inline HbmConfig tiny_hbm() {
  HbmConfig c;
  c.name = "tiny";
  c.channels = c.pseudo_channels = 1, c.banks = 2, c.page_bytes = 256, c.capacity_bytes = 1 << 20;
  c.bus_bits = 64, c.data_rate_gbps = 1.0, c.burst_length = 4;
  c.t_rcd_ns = 10, c.t_rp_ns = 12, c.t_cl_ns = 7, c.t_ras_ns = 20;
  c.t_rrd_ns = c.t_faw_ns = c.t_refi_ns = c.t_rfc_ns = 0;  // no activate limits, no refresh
  c.interleave_bytes = c.chunk_bytes = 256;
  return c;
}

// Naive int64 GEMM: reduced modulo 2^32 it is what int32 two's-complement accumulation gives.
template <class In>
Matrix<int64_t> reference_gemm(const Matrix<In>& a, const Matrix<In>& b) {
  Matrix<int64_t> c(a.rows, b.cols);
  for (int64_t m = 0; m < a.rows; ++m)
    for (int64_t n = 0; n < b.cols; ++n)
      for (int64_t k = 0; k < a.cols; ++k) c(m, n) += static_cast<int64_t>(a(m, k)) * static_cast<int64_t>(b(k, n));
  return c;
}

// Small integers as floats: every partial sum is exact in fp32, whatever the summation order.
inline Matrix<float> random_small_float(int64_t r, int64_t c, std::mt19937_64& rng) {
  Matrix<float> x(r, c);
  for (auto& v : x.data) v = static_cast<float>(static_cast<int>(rng() % 17) - 8);
  return x;
}

inline Workload gemm_workload(std::vector<Gemm> list) {
  Workload w;
  w.name = "test";
  w.gemms = std::move(list);
  return w;
}

}  // namespace systolic::testing
