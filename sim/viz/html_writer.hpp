#pragma once
// The PE-grid page: one self-contained HTML file (inline CSS and JavaScript, no network,
// no external scripts or fonts) that plays back a GridView cycle by cycle.
//
// The recording is embedded as JSON (<script type="application/json" id="systolic-data">)
// with the per-PE arrays as base64 little-endian typed arrays: weight, shadow, activation
// (int8 or float32), psum (int32, float32, or float64 when int8 and float layers mix), fold
// (int16, or int32 past 32767 folds) and flags (uint8: 1 useful MAC, 2 padded row, 4 padded
// column, 8 pad token: the row of A passing through is padding of the bucket (a MAC there is
// not useful, so 1 is not set), 16 weight shifting in). Per frame: useful MACs and MACs on pad
// tokens, and per PE its streamed row (int32, -1 when empty). With pad tokens, "tokens" gives the bucket, the useful tokens per lane and where
// they came from, and each instruction its pad rows as [first, last] ranges. The page shows
// exactly those values; it computes nothing but sums for the running utilization.
//
// For scripts and tests, the page takes #cycle=N in its URL, and exposes what it renders in
// the DOM: body[data-cycle], and per PE div.pe[data-r][data-c] with data-weight, data-shadow,
// data-activation, data-psum (full precision), data-fold, data-index (the elements it holds:
// "B[k][n] A[m][k] C[m][n]", from the fold and the recorded streamed row) and data-state
// (active | pad | token | bubble | idle).
#include <string>

#include <nlohmann/json.hpp>

#include "sim/viz/grid_view.hpp"

namespace systolic {

// The embedded data (also handy for tests).
nlohmann::ordered_json grid_view_data(const GridView& view);

std::string grid_view_html(const GridView& view);

// The page template; "/*@@SYSTOLIC_DATA@@*/" marks where the data goes.
extern const char* const kGridViewTemplate;

}  // namespace systolic
