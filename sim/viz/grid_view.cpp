#include "sim/viz/grid_view.hpp"

#include "sim/common/cycle_range.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "models/common/clock.hpp"
#include "models/common/error.hpp"
#include "models/common/suggest.hpp"
#include "models/engine/engine.hpp"
#include "models/mxu/dataflow.hpp"

namespace systolic {
namespace {

// Follows one engine's grid inside a simulate() run: at each instruction's cycle 0 it asks
// SystemC which engine is calling and where the instruction started, then hands that
// engine's cycles to the recorder. This observer never waits, so each grid run is one
// uninterrupted series of calls from one engine.
class GridCapture : public GridObserver {
 public:
  // pad_rows: per instruction of the engine's stream, the pad-token rows of its A.
  GridCapture(std::string engine, ArrayShape shape, uint64_t first, uint64_t last,
              std::map<int, std::vector<uint8_t>> pad_rows)
      : engine_(std::move(engine)), recorder_(shape, first, last), pad_rows_(std::move(pad_rows)) {}

  void on_cycle(uint64_t cycle, const std::vector<PeState>& pes) override {
    if (cycle == 0) {
      const auto* e = dynamic_cast<const Engine*>(
          sc_core::sc_get_current_process_handle().get_parent_object());
      following_ = e && e->basename() == engine_;
      if (following_) {
        const int index = static_cast<int>(e->records().size());
        const auto it = pad_rows_.find(index);
        recorder_.set_origin(now_cycles(), index,
                             it == pad_rows_.end() ? std::vector<uint8_t>{} : it->second);
      }
    }
    if (following_) recorder_.on_cycle(cycle, pes);
  }

  GridRecording take() { return recorder_.take(); }

 private:
  std::string engine_;
  GridRecorder recorder_;
  std::map<int, std::vector<uint8_t>> pad_rows_;
  bool following_ = false;
};

// The view needs a small array (a page per PE) and an MXU the chip has.
void check_viz_request(const ChipConfig& config, const VizRequest& request) {
  const ArrayShape shape = config.mxu.shape();
  if (shape.rows > kVizMaxSide || shape.cols > kVizMaxSide)
    throw InputError(fmt::format(
        "viz: the PE view is for arrays up to {0}x{0}, this one is {1}x{2} (try "
        "configs/tiny-4x4.yaml, or --set mxu.rows=8 --set mxu.cols=8)",
        kVizMaxSide, shape.rows, shape.cols));
  if (request.mxu < 0 || request.mxu >= config.mxu.count)
    throw InputError(fmt::format("viz: --mxu {}: the chip has mxu.count = {} (MXUs 0..{})",
                                 request.mxu, config.mxu.count, config.mxu.count - 1));
}

const EngineResult* find_engine(const SimResult& run, const std::string& engine) {
  const EngineResult* found = nullptr;
  for (const auto& e : run.engines)
    if (e.name == engine) found = &e;
  return found;
}

// The cycles [first, last) the page shows and how they were chosen.
struct Window {
  uint64_t first = 0, last = 0;
  std::string selection = "whole run";
};

// The cycles of --layer's instructions on the MXU.
void select_layer(const Program& program, const EngineResult& mxu, const std::string& engine,
                  const VizRequest& request, Window& w) {
  std::vector<std::string> names;
  std::set<int> layers;
  for (size_t i = 0; i < program.layers.size(); ++i) {
    names.push_back(program.layers[i].name);
    if (program.layers[i].name == request.layer) layers.insert(static_cast<int>(i));
  }
  if (layers.empty())
    throw InputError(fmt::format("viz: --layer '{}': no such layer{}", request.layer,
                                 did_you_mean(request.layer, names)));
  w.first = std::numeric_limits<uint64_t>::max();
  w.last = 0;
  for (const auto& rec : mxu.records)
    if (layers.count(rec.layer)) {
      w.first = std::min(w.first, rec.start);
      w.last = std::max(w.last, rec.end);
    }
  if (w.last == 0)
    throw InputError(fmt::format("viz: layer '{}' has no instruction on {} (try another --mxu)",
                                 request.layer, engine));
  w.selection = fmt::format("layer {}", request.layer);
}

// The run, or --layer, cut to --cycles; at most kVizMaxPeCycles PE-cycles.
Window select_window(const Program& program, const EngineResult& mxu, const std::string& engine,
                     const VizRequest& request, uint64_t total_cycles, ArrayShape shape) {
  Window w;
  w.last = total_cycles;
  if (!request.layer.empty()) select_layer(program, mxu, engine, request, w);
  const uint64_t span_first = w.first, span_last = w.last;
  if (request.first) w.first = std::max(w.first, *request.first);
  if (request.last) w.last = std::min(w.last, *request.last);
  if (request.first || request.last)
    w.selection += fmt::format(", cycles {}:{}", w.first, w.last);
  if (w.last <= w.first)
    throw InputError(fmt::format("viz: --cycles selects nothing: the {} spans cycles {}:{}",
                                 request.layer.empty() ? std::string("run")
                                                       : "layer '" + request.layer + "'",
                                 span_first, span_last));
  const uint64_t pes = static_cast<uint64_t>(shape.rows * shape.cols);
  const uint64_t max_cycles = kVizMaxPeCycles / pes;
  if (w.last - w.first > max_cycles)
    throw InputError(fmt::format(
        "viz: {} cycles of a {}x{} array is too much for one page (at most {} cycles at this "
        "size); pick a range with --cycles, e.g. --cycles {}:{}",
        w.last - w.first, shape.rows, shape.cols, max_cycles, w.first, w.first + max_cycles));
  return w;
}

// With pad tokens, the pad rows of the instructions in the window: the rows of A a matmul
// holds are rows [m_offset, m_offset + m) of instance `instance` of its layer.
std::map<int, std::vector<uint8_t>> pad_rows_in(const ChipConfig& config, const Program& program,
                                                const VizRequest& request, const EngineResult& mxu,
                                                const Stream* stream, const Window& w) {
  std::map<int, std::vector<uint8_t>> pad_rows;
  // Pad tokens are rows of A; the recorder finds them by the streamed index, which is m only
  // under ws (os streams k, is streams n).
  if (request.pad_tokens && config.mxu.dataflow != DataflowKind::ws)
    throw InputError(fmt::format("viz: pad tokens are marked under mxu.dataflow ws only (got {}): drop --pad-tokens "
                                 "or --set mxu.dataflow=ws",
                                 dataflow_of(config.mxu.dataflow).name()));
  if (!request.pad_tokens) return pad_rows;
  bool any = false;
  for (const auto& layer : program.layers)
    any = any || !pad_token_rows(*request.pad_tokens, layer, 0).empty();
  const packing::Shape b = request.pad_tokens->bucket;
  if (!any)
    throw InputError(fmt::format(
        "viz: no layer of the program has the tokens of the bucket {}x{} as its rows (M = {}): pad "
        "tokens need a transformer model in prefill at that bucket (-w MODEL --bucket {}x{})",
        b.batch, b.length, b.batch * b.length, b.batch, b.length));
  for (const auto& rec : mxu.records)
    if (rec.end > w.first && rec.start < w.last && rec.layer >= 0) {
      const LayerInfo& layer = program.layers.at(static_cast<size_t>(rec.layer));
      const auto& op = std::get<MatmulOp>(stream->instructions.at(static_cast<size_t>(rec.index)).op);
      const auto rows = pad_token_rows(*request.pad_tokens, layer, op.instance);
      if (rows.empty()) continue;
      const auto begin = rows.begin() + std::min<int64_t>(op.m_offset, static_cast<int64_t>(rows.size()));
      pad_rows.emplace(rec.index, std::vector<uint8_t>(begin, begin + std::min<int64_t>(op.m, rows.end() - begin)));
    }
  return pad_rows;
}

// The recording's tags name stream indices; the view lists each instruction once and the tags
// become indices into that list.
void list_instructions(const ChipConfig& config, const Program& program, const Stream* stream,
                       const EngineResult& ran, const std::map<int, std::vector<uint8_t>>& pad_rows,
                       GridView& view) {
  std::map<int, int> slot;  // stream index -> view.instructions index
  for (int& tag : view.recording.tag) {
    auto it = slot.find(tag);
    if (it == slot.end()) {
      const InstrRecord& rec = ran.records.at(static_cast<size_t>(tag));
      GridViewInstruction gi;
      gi.index = tag;
      gi.layer = rec.layer;
      if (rec.layer >= 0 && static_cast<size_t>(rec.layer) < program.layers.size())
        gi.layer_name = program.layers[static_cast<size_t>(rec.layer)].name;
      gi.op = std::get<MatmulOp>(stream->instructions.at(static_cast<size_t>(tag)).op);
      gi.folds = dataflow_of(config.mxu.dataflow).folds(view.shape, {gi.op.m, gi.op.k, gi.op.n});
      gi.start = rec.start;
      gi.end = rec.end;
      gi.instance = gi.op.instance;
      if (const auto pr = pad_rows.find(tag); pr != pad_rows.end()) gi.pad_rows = pr->second;
      it = slot.emplace(tag, static_cast<int>(view.instructions.size())).first;
      view.instructions.push_back(std::move(gi));
    }
    tag = it->second;
  }
}

}  // namespace

void parse_cycle_range(const std::string& text, VizRequest& request) {
  const CycleRange range = parse_cycle_range(text, "--cycles");
  request.first = range.first;
  request.last = range.last;
}

GridView capture_grid_view(const ChipConfig& config, const std::string& workload_name,
                           const Program& program, const VizRequest& request) {
  check_viz_request(config, request);
  const ArrayShape shape = config.mxu.shape();
  const std::string engine = engine_name(EngineKind::mxu, request.mxu);

  // Pass 1 (fast model, identical timing): where things happen.
  ChipConfig fast = config;
  fast.mxu.model = MxuModel::fast;
  const SimResult plan = simulate(fast, program);
  const EngineResult* mxu = find_engine(plan, engine);
  if (!mxu) throw InputError(fmt::format("viz: the run has no engine {}", engine));
  const Window w = select_window(program, *mxu, engine, request, plan.total_cycles, shape);
  const Stream* stream = nullptr;
  for (const auto& s : program.streams)
    if (s.engine == EngineId{EngineKind::mxu, request.mxu}) stream = &s;
  const std::map<int, std::vector<uint8_t>> pad_rows = pad_rows_in(config, program, request, *mxu, stream, w);

  // Pass 2 (exact model): record the grid.
  ChipConfig exact = config;
  exact.mxu.model = MxuModel::exact;
  GridCapture capture(engine, shape, w.first, w.last, pad_rows);
  RunOptions options;
  options.observer = &capture;
  const SimResult run = simulate(exact, program, options);

  GridView view;
  view.chip = config.name;
  view.workload = workload_name;
  view.engine = engine;
  view.shape = shape;
  view.convention = config.mxu.convention;
  view.dataflow = config.mxu.dataflow;
  view.clock_mhz = config.clock_mhz;
  view.mxus = config.mxu.count;
  view.selection = w.selection;
  view.first = w.first;
  view.last = w.last;
  view.total_cycles = run.total_cycles;
  view.recording = capture.take();
  view.pad_tokens = request.pad_tokens;
  list_instructions(config, program, stream, *find_engine(run, engine), pad_rows, view);
  return view;
}

}  // namespace systolic
