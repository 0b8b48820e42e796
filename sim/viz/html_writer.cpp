#include "sim/viz/html_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "models/mxu/dataflow.hpp"
#include "models/mxu/mxu_timing.hpp"

namespace systolic {
namespace {

using json = nlohmann::ordered_json;

constexpr uint8_t kActive = 1, kPadRow = 2, kPadCol = 4, kPadToken = 8, kLoading = 16;

// Rows flagged in `flags` as [first, last] ranges: [[5, 7], [13, 15]].
json row_ranges(const std::vector<uint8_t>& flags) {
  json out = json::array();
  for (size_t i = 0; i < flags.size(); ++i) {
    if (!flags[i]) continue;
    size_t j = i;
    while (j + 1 < flags.size() && flags[j + 1]) ++j;
    out.push_back({i, j});
    i = j;
  }
  return out;
}

std::string base64(const std::vector<uint8_t>& bytes) {
  static const char* const alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (uint32_t{bytes[i]} << 16) | (uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
    out += alphabet[v >> 18];
    out += alphabet[(v >> 12) & 63];
    out += alphabet[(v >> 6) & 63];
    out += alphabet[v & 63];
  }
  if (i + 1 == bytes.size()) {
    const uint32_t v = uint32_t{bytes[i]} << 16;
    out += alphabet[v >> 18];
    out += alphabet[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    const uint32_t v = (uint32_t{bytes[i]} << 16) | (uint32_t{bytes[i + 1]} << 8);
    out += alphabet[v >> 18];
    out += alphabet[(v >> 12) & 63];
    out += alphabet[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

// A typed array as {"type": "i8", "data": base64 of its little-endian bytes}.
template <class T, class Src>
json typed(const char* type, const std::vector<Src>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  for (size_t i = 0; i < values.size(); ++i) {
    const T v = static_cast<T>(values[i]);
    uint8_t raw[sizeof(T)];
    std::memcpy(raw, &v, sizeof(T));
    for (size_t b = 0; b < sizeof(T); ++b) bytes[i * sizeof(T) + b] = raw[b];  // x86: LE
  }
  return {{"type", type}, {"count", values.size()}, {"data", base64(bytes)}};
}

// Per frame: cycle offset in the window, instruction, useful MACs, MACs on pad tokens. Per
// PE: flags.
struct FrameFlags {
  std::vector<uint32_t> offset, useful, wasted;
  std::vector<int32_t> instr;
  std::vector<uint8_t> flags;
};

FrameFlags frame_flags(const GridView& view) {
  const GridRecording& rec = view.recording;
  const int64_t R = view.shape.rows, C = view.shape.cols;
  const size_t pes = static_cast<size_t>(R * C);
  const DataflowMapping mapping = dataflow_of(view.dataflow).mapping();
  std::vector<uint32_t> offset(rec.frames()), useful(rec.frames()), wasted(rec.frames());
  std::vector<int32_t> instr(rec.frames());
  std::vector<uint8_t> flags(rec.fold.size(), 0);
  for (size_t f = 0; f < rec.frames(); ++f) {
    offset[f] = static_cast<uint32_t>(rec.cycle[f] - view.first);
    instr[f] = rec.tag[f];
    const GridViewInstruction& gi = view.instructions.at(static_cast<size_t>(rec.tag[f]));
    // Weight shifting in: the shadow bank's value changed while the stationary one did not
    // (when a new fold reaches a PE the banks swap roles, and both change). At an
    // instruction's cycle 0 the banks start from zero; a window opening mid-instruction has
    // no previous frame to compare with, so its first frame shows no shifting.
    const bool continues = f > 0 && rec.tag[f - 1] == rec.tag[f] && rec.cycle[f - 1] + 1 == rec.cycle[f];
    const bool starts = rec.cycle[f] == gi.start;
    for (int64_t r = 0; r < R; ++r)
      for (int64_t c = 0; c < C; ++c) {
        const size_t i = rec.at(f, r, c);
        uint8_t fl = 0;
        // A MAC on a pad token is real work of the array but not useful: it is counted apart.
        const bool pad_token = i < rec.pad_token.size() && rec.pad_token[i];
        if (pad_token) fl |= kPadToken;
        if (rec.active[i] && pad_token) ++wasted[f];
        if (rec.active[i] && !pad_token) {
          fl |= kActive;
          ++useful[f];
        }
        if (rec.fold[i] >= 0) {
          // Fold order (pe_grid.hpp, os.cpp): column folds outer, row folds inner; what lies
          // along rows and columns is the dataflow's mapping.
          const int64_t fold = rec.fold[i], rf = gi.folds.row_folds;
          const MatmulShape s{gi.op.m, gi.op.k, gi.op.n};
          const int64_t rows_real = std::min(R, dim_of(s, mapping.rows) - (fold % rf) * R);
          const int64_t cols_real = std::min(C, dim_of(s, mapping.cols) - (fold / rf) * C);
          if (r >= rows_real) fl |= kPadRow;
          if (c >= cols_real) fl |= kPadCol;
        }
        if (continues ? rec.shadow[i] != rec.shadow[i - pes] && rec.weight[i] == rec.weight[i - pes]
                      : starts && rec.shadow[i] != 0.0)
          fl |= kLoading;
        flags[i] = fl;
      }
  }

  return {std::move(offset), std::move(useful), std::move(wasted), std::move(instr), std::move(flags)};
}

json instruction_json(const GridViewInstruction& gi) {
  return {{"index", gi.index},
          {"layer", gi.layer_name},
          {"m", gi.op.m},
          {"k", gi.op.k},
          {"n", gi.op.n},
          {"n_offset", gi.op.n_offset},
          {"m_offset", gi.op.m_offset},
          {"dtype", std::string(kDTypeNames.name(gi.op.dtype))},
          {"folds", gi.folds.total()},
          {"row_folds", gi.folds.row_folds},
          {"col_folds", gi.folds.col_folds},
          {"start", gi.start},
          {"end", gi.end},
          {"instance", gi.instance},
          {"pad_rows", row_ranges(gi.pad_rows)}};
}

// The PE values, at the narrowest type that holds them exactly.
json pe_values_json(const GridRecording& rec, bool any_int, bool any_float) {
  json pe;
  if (any_int && !any_float) {
    pe["weight"] = typed<int8_t>("i8", rec.weight);
    pe["shadow"] = typed<int8_t>("i8", rec.shadow);
    pe["activation"] = typed<int8_t>("i8", rec.activation);
    pe["psum"] = typed<int32_t>("i32", rec.psum);
  } else {
    pe["weight"] = typed<float>("f32", rec.weight);
    pe["shadow"] = typed<float>("f32", rec.shadow);
    pe["activation"] = typed<float>("f32", rec.activation);
    pe["psum"] = any_int ? typed<double>("f64", rec.psum) : typed<float>("f32", rec.psum);
  }
  return pe;
}

}  // namespace

json grid_view_data(const GridView& view) {
  const GridRecording& rec = view.recording;
  const int64_t R = view.shape.rows, C = view.shape.cols;

  bool any_int = false, any_float = false;
  json instructions = json::array();
  for (const auto& gi : view.instructions) {
    (gi.op.dtype == DType::int8 ? any_int : any_float) = true;
    instructions.push_back(instruction_json(gi));
  }

  const FrameFlags ff = frame_flags(view);
  const bool integer = any_int && !any_float;
  json pe = pe_values_json(rec, any_int, any_float);
  // Fold indices fit 16 bits unless a layer has more than 32767 folds.
  const bool short_folds = std::all_of(rec.fold.begin(), rec.fold.end(),
                                       [](int32_t f) { return f <= INT16_MAX; });
  pe["fold"] = short_folds ? typed<int16_t>("i16", rec.fold) : typed<int32_t>("i32", rec.fold);
  pe["flags"] = typed<uint8_t>("u8", ff.flags);
  // The streamed index of each PE's data (ws: m, os: k, is: n; -1 none): with the fold, the
  // page names the matrix elements a PE holds (A[m][k], B[k][n], C[m][n]).
  pe["row"] = typed<int32_t>("i32", rec.row);

  json data;
  data["format"] = "systolic-grid-view";
  data["version"] = 1;
  data["generator"] = fmt::format("systolic {}", SYSTOLIC_VERSION);
  data["chip"] = {{"name", view.chip},
                  {"rows", R},
                  {"cols", C},
                  {"mxus", view.mxus},
                  {"convention", view.convention == Convention::tpu ? "tpu" : "scalesim"},
                  {"dataflow", std::string(dataflow_of(view.dataflow).name())},
                  {"clock_mhz", view.clock_mhz}};
  data["workload"] = view.workload;
  data["engine"] = view.engine;
  data["selection"] = view.selection;
  data["values"] = integer ? "int" : "float";
  data["window"] = {{"first", view.first}, {"last", view.last}};
  data["total_cycles"] = view.total_cycles;
  data["instructions"] = std::move(instructions);
  data["frames"] = {{"count", rec.frames()},
                    {"offset", typed<uint32_t>("u32", ff.offset)},
                    {"instruction", typed<int32_t>("i32", ff.instr)},
                    {"useful", typed<uint32_t>("u32", ff.useful)},
                    {"pad", typed<uint32_t>("u32", ff.wasted)}};
  if (view.pad_tokens) {
    const PadTokens& t = *view.pad_tokens;
    data["tokens"] = {{"bucket", {t.bucket.batch, t.bucket.length}},
                      {"useful", t.useful},
                      {"pad", t.pad_count()},
                      {"origin", t.origin}};
  }
  data["pe"] = std::move(pe);
  return data;
}

std::string grid_view_html(const GridView& view) {
  std::string data = grid_view_data(view).dump(-1, ' ', false, json::error_handler_t::replace);
  // '<' only occurs inside JSON strings, where \u003c means the same: no "</script>" inside.
  std::string safe;
  safe.reserve(data.size());
  for (char ch : data) {
    if (ch == '<') safe += "\\u003c";
    else safe += ch;
  }
  std::string page = kGridViewTemplate;
  const std::string marker = "/*@@SYSTOLIC_DATA@@*/";
  const auto at = page.find(marker);
  if (at == std::string::npos) throw std::logic_error("grid view template has no data marker");
  page.replace(at, marker.size(), safe);
  return page;
}

}  // namespace systolic
