#pragma once
// How a GEMM [M,K] x [K,N] is laid onto an R x C systolic array: which operand stays in the
// PEs, which dimensions map onto rows and columns, and which one streams through. One
// implementation per dataflow lives in models/mxu/dataflow/<name>.cpp: its exact grid and its
// closed form, registered with their mapping (Registration<Dataflow> of dataflow_entry(),
// models/common/registry.hpp); everything else reaches them through dataflow_of() / dataflows().
// docs/mxu.md derives each one's cycles, folds and SRAM reads.
//
//   ws  weight-stationary  rows <- K, cols <- N, M streams   (B held, A streamed)
//   os  output-stationary  rows <- M, cols <- N, K streams   (C held, A and B streamed)
//   is  input-stationary   rows <- K, cols <- M, N streams   (A held, B streamed)
// (SCALE-Sim v2's mappings: scalesim/compute/systolic_compute_{ws,os,is}.py, set_params.)
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/registry.hpp"
#include "models/mxu/mxu_timing.hpp"
#include "models/mxu/pe_grid.hpp"

namespace systolic {

enum class GemmDim { m, k, n };

// Which GEMM dimension lies along the array's rows and columns, and which one streams.
struct DataflowMapping {
  GemmDim rows;
  GemmDim cols;
  GemmDim streamed;
};

int64_t dim_of(MatmulShape s, GemmDim d);

// Elements each operand moves between the scratchpads and one MXU for one matmul: A and B
// read, partial sums read back (accumulation across row folds) and written.
struct OperandTraffic {
  uint64_t a_read = 0;
  uint64_t b_read = 0;
  uint64_t acc_read = 0;
  uint64_t acc_written = 0;
};

// What names a dataflow and how it lays a GEMM onto the array.
struct DataflowInfo {
  DataflowKind kind;
  std::string_view name;         // "ws": config value, trace header
  std::string_view description;  // "weight-stationary: ..."
  DataflowMapping mapping;
};

class Dataflow;

// The exact grid for one operand type: C (M x N) = A (M x K) * B (K x N) stepped once a cycle
// on the PE grid; returns the steps, which equal the closed form's.
template <class In, class Out>
using GridFunction = uint64_t (*)(ArrayShape, Convention, const Matrix<In>&, const Matrix<In>&, Matrix<Out>&,
                                  GridObserver*);

// The closed form of a pipeline that steps every cycle (Dataflow::cycles applies a.rate.cycles).
using StepCycles = uint64_t (*)(const Dataflow&, ArrayShape, Convention, MatmulShape);

// What a dataflow's file provides beside its mapping: its closed form and the exact grid for
// each operand type (grid::grid_functions makes both grids of one grid class).
struct DataflowFunctions {
  StepCycles step_cycles;
  GridFunction<int8_t, int32_t> grid_int8;
  GridFunction<float, float> grid_float;
};

class Dataflow {
 public:
  Dataflow(DataflowInfo info, DataflowFunctions functions) : info_(info), functions_(functions) {}
  DataflowKind kind() const { return info_.kind; }
  std::string_view name() const { return info_.name; }
  std::string_view description() const { return info_.description; }
  DataflowMapping mapping() const { return info_.mapping; }

  // How much of the rows dimension one fold covers: R, or R x a.rate.products when K lies
  // on the rows (ws, is), since each PE then packs that many products of K.
  int64_t fold_rows(ArrayShape a) const;
  // Folds: ceil(rows dimension / fold_rows) x ceil(cols dimension / C).
  Folds folds(ArrayShape a, MatmulShape s) const;
  // The `fast` model: cycles from issue until the last output has left the array, i.e. the
  // steps of the pipeline times a.rate.cycles. Throws std::overflow_error when the count does
  // not fit in 64 bits.
  uint64_t cycles(ArrayShape a, Convention c, MatmulShape s) const;
  // One rule for every dataflow: an operand (and the output) passes once per fold of the
  // mapped dimension it does not index, so the held operand is read once; the output is
  // written once per pass and read back on every pass but the first (docs/mxu.md, "Traffic").
  OperandTraffic traffic(ArrayShape a, MatmulShape s) const;

  // The `exact` model: the grid of the operand type, each step lasting a.rate.cycles; returns
  // the cycle count, which equals cycles().
  uint64_t run_grid(ArrayShape a, Convention c, const Matrix<int8_t>& A, const Matrix<int8_t>& B,
                    Matrix<int32_t>& C, GridObserver* observer) const;
  uint64_t run_grid(ArrayShape a, Convention c, const Matrix<float>& A, const Matrix<float>& B,
                    Matrix<float>& C, GridObserver* observer) const;

 private:
  DataflowInfo info_;
  DataflowFunctions functions_;
};

// The closed form of a dataflow that holds an operand (ws, is): held_operand_cycles over all
// folds, the streamed dimension flowing through each.
uint64_t held_operand_step_cycles(const Dataflow& d, ArrayShape a, Convention c, MatmulShape s);

// Every registered dataflow, in DataflowKind order (independent of static-initialiser order).
std::vector<const Dataflow*> dataflows();
const Dataflow& dataflow_of(DataflowKind kind);
const Dataflow* find_dataflow(std::string_view name);  // nullptr when unknown
std::string dataflow_choices();                         // "ws, os, is"

// The registry entry of a dataflow: its name and description, ranked by its kind.
Registry<Dataflow>::Entry dataflow_entry(DataflowInfo info, DataflowFunctions functions);

}  // namespace systolic
