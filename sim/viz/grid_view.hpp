#pragma once
// `systolic viz`: records what one MXU's PE grid did, cycle by cycle, during a run of the
// exact model, and renders it as one self-contained HTML page (sim/viz/html_writer.hpp).
//
// capture_grid_view() first runs the program with the `fast` model (same cycle counts) to
// find the cycles to show (a layer's instructions on that MXU, and/or --cycles A:B) and to
// refuse ranges too large for a page, then runs the exact model with a recorder attached.
// Cycles are absolute run cycles, as in report.json and timelines.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/chip/chip_config.hpp"
#include "models/isa/program.hpp"
#include "models/mxu/grid_recorder.hpp"
#include "models/mxu/pe_grid.hpp"
#include "sim/simulate/simulate.hpp"
#include "sim/viz/pad_tokens.hpp"

namespace systolic {

struct VizRequest {
  std::string layer;              // only this layer's instructions ("" = all)
  std::optional<uint64_t> first;  // --cycles A:B, half-open [A, B)
  std::optional<uint64_t> last;
  int mxu = 0;                    // which MXU's grid
  // Pad tokens of the prefill bucket instance the program runs (sim/viz/pad_tokens.hpp): the
  // rows of A that are padding are flagged as they pass through the grid (each matmul says
  // which rows of which layer instance it holds: MatmulOp::m_offset, instance).
  std::optional<PadTokens> pad_tokens;
};

// Parses "A:B", "A:" or ":B" (half-open, like a Python slice). Throws InputError.
void parse_cycle_range(const std::string& text, VizRequest& request);

// One instruction of the viewed MXU that has frames in the window.
struct GridViewInstruction {
  int index = 0;  // position in the engine's stream
  int layer = -1;
  std::string layer_name;
  MatmulOp op;
  Folds folds;
  uint64_t start = 0, end = 0;  // run cycles: [start, end)
  int64_t instance = 0;         // which instance of its layer (MatmulOp::instance)
  std::vector<uint8_t> pad_rows;  // with pad tokens: per row of A, 1 for a pad token
};

struct GridView {
  std::string chip;
  std::string workload;
  std::string engine;  // "mxu0"
  ArrayShape shape{0, 0};
  Convention convention = Convention::tpu;
  DataflowKind dataflow = DataflowKind::ws;
  double clock_mhz = 0;
  int64_t mxus = 1;
  std::string selection;          // how the window was chosen, for the page's title
  uint64_t first = 0, last = 0;   // the window, run cycles [first, last)
  uint64_t total_cycles = 0;      // the whole run
  std::vector<GridViewInstruction> instructions;
  GridRecording recording;        // frames' tags index `instructions`
  std::optional<PadTokens> pad_tokens;
};

constexpr int64_t kVizMaxSide = 32;               // largest array the page shows: 32 x 32
constexpr uint64_t kVizMaxPeCycles = 1ull << 19;  // window cycles x PEs (keeps pages < ~10 MB)

// Throws InputError for arrays over kVizMaxSide, an unknown layer or MXU, an empty window or
// one over kVizMaxPeCycles (with a --cycles hint), and pad tokens for a program with no layer
// whose rows are the bucket's tokens.
GridView capture_grid_view(const ChipConfig& config, const std::string& workload_name,
                           const Program& program, const VizRequest& request);

}  // namespace systolic
