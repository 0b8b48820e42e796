// The PE-grid page (see html_writer.hpp). Everything inline: no network, no external scripts,
// stylesheets or fonts. Text from the data is inserted with textContent, never as HTML.
//
// Why one 560-line file with a 420-line JavaScript function: it is a single self-contained
// page held in one raw string (the page must open offline from one file), and its script is one
// closure over the data; the C++ size limits (docs/architecture.md, "Size of the parts") do not
// apply to it. Its behaviour is tested through the written page (tests/py/test_viz.py).
#include "sim/viz/html_writer.hpp"

namespace systolic {

const char* const kGridViewTemplate = R"SYSTOLIC_HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Systolic: PE grid</title>
<style>
:root { --bubble:#eceff3; --pad:#f3b64c; --pad2:#fbe2b3; --token:#e06666; --idle:#f7f8fa;
        --ink:#1d232a; --muted:#66727e; --line:#d9dfe6; --load:#f5c400; }
* { box-sizing: border-box; }
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
       color: var(--ink); background: #fff; }
header { padding: 10px 16px 8px; border-bottom: 1px solid var(--line); }
header h1 { font-size: 17px; margin: 0; font-weight: 600; }
header .sub { color: var(--muted); font-size: 13px; }
main { display: flex; gap: 20px; padding: 14px 16px 8px; align-items: flex-start; flex-wrap: wrap; }
#stage { overflow: auto; max-width: 100%; }
#grid { display: grid; gap: 3px; }
.edge { font: 11px/1.2 ui-monospace, "DejaVu Sans Mono", Menlo, monospace; color: var(--muted);
        display: flex; flex-direction: column; align-items: center; justify-content: center;
        text-align: center; white-space: nowrap; overflow: hidden; }
.edge.left { align-items: flex-end; padding-right: 4px; }
.edge .lab { color: #9aa5b1; }
.edge .val { color: var(--ink); font-weight: 600; }
.edge .val.dim { color: #b0b8c1; font-weight: 400; }
.pe { border-radius: 5px; background: var(--bubble); position: relative; padding: 3px 4px;
      font: 12px/1.25 ui-monospace, "DejaVu Sans Mono", Menlo, monospace; color: #8a96a3;
      overflow: hidden; cursor: pointer; border: 1px solid transparent; white-space: nowrap; }
.pe.active { color: #fff; }
.pe.pad { background: repeating-linear-gradient(135deg, var(--pad) 0 6px, var(--pad2) 6px 12px);
          color: #5b3a00; }
.pe.token { background: var(--token); color: #fff; }
.pe.idle { background: var(--idle); border: 1px dashed var(--line); color: #c3cad2; }
.pe.loading { box-shadow: inset 0 4px 0 var(--load); }
.pe.bt { border-top: 2px solid #11181f; }
.pe.bl { border-left: 2px solid #11181f; }
.pe.sel { outline: 3px solid #11181f; outline-offset: 1px; }
.pe .v { display: block; overflow: hidden; text-overflow: ellipsis; }
.pe .k { opacity: .75; }
.pe .s { font-size: 10px; opacity: .8; }
.pe .ix { font-size: 10px; opacity: .85; }
aside { min-width: 300px; max-width: 420px; flex: 1; }
.cyc { font-size: 28px; font-weight: 650; font-variant-numeric: tabular-nums; }
.cyc small { font-size: 13px; font-weight: 400; color: var(--muted); }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 12px; margin: 10px 0; }
dt { color: var(--muted); }
dd { margin: 0; font-variant-numeric: tabular-nums; }
#story { background: #f4f7fa; border-left: 3px solid #1e6fd9; padding: 8px 10px; margin: 8px 0; }
#story div { margin: 2px 0; }
#legend { display: flex; flex-wrap: wrap; gap: 6px 14px; font-size: 12px; color: var(--muted); margin-top: 10px; }
#legend span.sw { display: inline-block; width: 14px; height: 14px; border-radius: 3px;
                  vertical-align: -3px; margin-right: 4px; }
#detail { font: 12px/1.45 ui-monospace, "DejaVu Sans Mono", Menlo, monospace; margin-top: 10px;
          white-space: pre-wrap; color: var(--ink); }
footer { position: sticky; bottom: 0; background: #fff; border-top: 1px solid var(--line);
         padding: 8px 16px 10px; }
#controls { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
button { font: inherit; padding: 4px 10px; border: 1px solid #b8c2cc; border-radius: 5px;
         background: #f7f9fb; cursor: pointer; }
button:hover { background: #eaf0f6; }
#play { min-width: 84px; font-weight: 600; }
input[type=number] { width: 90px; font: inherit; padding: 3px 4px; }
select { font: inherit; }
#scrub { flex: 1; min-width: 200px; }
#strip { position: relative; height: 22px; margin-top: 8px; background: #f3f5f8; border-radius: 4px;
         overflow: hidden; cursor: pointer; }
#strip .seg { position: absolute; top: 0; bottom: 0; font-size: 11px; color: #fff; padding: 3px 4px;
              overflow: hidden; white-space: nowrap; border-right: 1px solid #fff; }
#strip .now { position: absolute; top: 0; bottom: 0; width: 2px; background: #11181f; }
.muted { color: var(--muted); }
#matrices { display: flex; flex-wrap: wrap; gap: 10px 16px; margin-top: 12px; }
#matrices .mat { display: grid; gap: 1px; font: 9px/1 ui-monospace, "DejaVu Sans Mono", Menlo, monospace; }
#matrices .mat div { min-width: 26px; height: 15px; background: #f1f4f7; color: var(--ink); text-align: right;
                     padding: 3px 2px 0; overflow: hidden; }
#matrices .mat div.seen { background: #dbe8f7; }
#matrices .mat div.now { outline: 2px solid #1e6fd9; outline-offset: -2px; }
#matrices h3 { font-size: 12px; margin: 0 0 4px; font-weight: 600; }
</style>
</head>
<body>
<header>
  <h1 id="title">Systolic: PE grid</h1>
  <div class="sub" id="subtitle"></div>
</header>
<main>
  <section id="stage"><div id="grid" role="grid" aria-label="PE grid"></div></section>
  <aside id="panel">
    <div class="cyc">cycle <span id="cycle">0</span> <small id="window"></small></div>
    <dl>
      <dt>instruction</dt><dd id="instr"></dd>
      <dt>its cycle</dt><dd id="icycle"></dd>
      <dt>folds in the array</dt><dd id="folds"></dd>
      <dt>useful MACs now</dt><dd id="now"></dd>
      <dt>utilization so far</dt><dd id="util"></dd>
      <dt class="tok" hidden>pad tokens</dt><dd class="tok" id="pads" hidden></dd>
    </dl>
    <div id="story"></div>
    <div id="legend"></div>
    <div id="detail" class="muted">Click a PE to follow its values.</div>
    <div id="matrices"></div>
  </aside>
</main>
<footer>
  <div id="controls">
    <button id="first" title="first cycle (Home)">&laquo; first</button>
    <button id="back" title="step back one cycle (Left arrow)">&#x25C0; step</button>
    <button id="play" title="play / pause (Space)">&#x25B6; play</button>
    <button id="fwd" title="step forward one cycle (Right arrow)">step &#x25B6;</button>
    <button id="last" title="last cycle (End)">last &raquo;</button>
    <label>cycle <input id="jump" type="number" min="0" step="1"></label>
    <button id="go" title="jump to this cycle">jump</button>
    <label>speed <select id="speed">
      <option value="0.5">0.5 cycles/s</option><option value="1">1 cycle/s</option>
      <option value="2" selected>2 cycles/s</option><option value="4">4 cycles/s</option>
      <option value="8">8 cycles/s</option><option value="16">16 cycles/s</option>
      <option value="32">32 cycles/s</option><option value="60">60 cycles/s</option>
    </select></label>
    <label>zoom <select id="zoom" title="enlarge the cells: on large arrays the numbers appear; at 3x and more, the indices">
      <option value="1">1x</option><option value="2">2x</option><option value="3">3x</option><option value="4">4x</option>
    </select></label>
    <input id="scrub" type="range" min="0" max="0" step="1" aria-label="cycle">
  </div>
  <div id="strip" title="instructions in this window (click to jump)"></div>
</footer>
<script type="application/json" id="systolic-data">/*@@SYSTOLIC_DATA@@*/</script>
<script>
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("systolic-data").textContent);
  const R = D.chip.rows, C = D.chip.cols, P = R * C;
  const FIRST = D.window.first, LAST = D.window.last, SPAN = LAST - FIRST;
  const ACTIVE = 1, PAD_ROW = 2, PAD_COL = 4, PAD_TOKEN = 8, LOADING = 16;
  const PALETTE = ["#1f6fd6", "#2b9a57", "#8b43b0", "#00897b", "#c0392b", "#55677a"];

  function decode(a) {
    const bin = atob(a.data);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const T = { i8: Int8Array, u8: Uint8Array, i16: Int16Array, i32: Int32Array, u32: Uint32Array,
                f32: Float32Array, f64: Float64Array }[a.type];
    return new T(bytes.buffer, 0, a.count);
  }
  const F = {
    offset: decode(D.frames.offset), instruction: decode(D.frames.instruction),
    useful: decode(D.frames.useful), pad: decode(D.frames.pad),
  };
  const V = {};
  for (const k of ["weight", "shadow", "activation", "psum", "fold", "flags", "row"]) V[k] = decode(D.pe[k]);

  // Which matrix elements a PE holds (docs/watch-it-compute.md, "Indices"): the fold gives its
  // position along the array's rows and columns (docs/mxu.md: ws puts K on rows and N on
  // columns and streams M; os M x N, streams K; is K x M, streams N), the recorded row the
  // streamed index. Returns {w, a, p}: the labels of the weight, activation and partial-sum
  // fields, or null for an empty PE.
  // The same as numbers: [m, k] of A, [k, n] of B, [m, n] of C within the instruction, and which
  // PE field holds A's and B's value under this dataflow.
  function elements(ins, fold, streamed, r, c) {
    if (fold < 0 || streamed < 0) return null;
    const i = (fold % ins.row_folds) * R + r, j = Math.floor(fold / ins.row_folds) * C + c;
    if (D.chip.dataflow === "os") return { A: [i, streamed], B: [streamed, j], C: [i, j], a: "activation", b: "weight" };
    if (D.chip.dataflow === "is") return { A: [j, i], B: [i, streamed], C: [j, streamed], a: "weight", b: "activation" };
    return { A: [streamed, i], B: [i, j], C: [streamed, j], a: "activation", b: "weight" };
  }

  function indices(ins, fold, streamed, r, c) {
    if (fold < 0 || streamed < 0) return null;
    const i = (fold % ins.row_folds) * R + r, j = Math.floor(fold / ins.row_folds) * C + c;
    const mo = ins.m_offset || 0, no = ins.n_offset;
    const A = (m, k) => "A[" + (mo + m) + "][" + k + "]", B = (k, n) => "B[" + k + "][" + (no + n) + "]";
    const Cm = (m, n) => "C[" + (mo + m) + "][" + (no + n) + "]";
    if (D.chip.dataflow === "os") return { w: B(streamed, j), a: A(i, streamed), p: Cm(i, j) };
    if (D.chip.dataflow === "is") return { w: A(j, i), a: B(i, streamed), p: Cm(j, streamed) };
    return { w: B(i, j), a: A(streamed, i), p: Cm(streamed, j) };
  }

  // Cycle -> frame index (-1: the MXU is idle), and cumulative useful MACs.
  const frameAt = new Int32Array(SPAN).fill(-1);
  for (let f = 0; f < D.frames.count; f++) frameAt[F.offset[f]] = f;
  const usefulSoFar = new Float64Array(SPAN), padSoFar = new Float64Array(SPAN);
  { let sum = 0, pad = 0;
    for (let t = 0; t < SPAN; t++) {
      const f = frameAt[t]; if (f >= 0) { sum += F.useful[f]; pad += F.pad[f]; }
      usefulSoFar[t] = sum; padSoFar[t] = pad;
    } }

  const isInt = D.values === "int";
  function fmt(v) {
    if (isInt || Number.isInteger(v)) return String(v);
    const a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(2);
    return String(Number(v.toPrecision(4)));
  }
  function range(list) {  // [0,1,2,5] -> "0-2, 5"
    const out = []; let i = 0;
    while (i < list.length) {
      let j = i; while (j + 1 < list.length && list[j + 1] === list[j] + 1) j++;
      out.push(j > i ? list[i] + "\u2013" + list[j] : String(list[i])); i = j + 1;
    }
    return out.join(", ");
  }
  const $ = (id) => document.getElementById(id);
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // ---- static page ------------------------------------------------------------------
  document.title = "Systolic: " + D.chip.name + " " + R + "x" + C + " \u2014 " + D.selection;
  $("title").textContent = "PE grid of " + D.engine + ": " + D.chip.name + " (" + R + "\u00d7" + C +
      ", " + D.chip.convention + " convention, " + D.chip.dataflow + " dataflow)";
  $("subtitle").textContent = "workload " + D.workload + " \u2014 " + D.selection + " \u2014 exact model values, " +
      "recorded during the run by " + D.generator;
  $("window").textContent = "window " + FIRST + "\u2013" + (LAST - 1) + " of a " + D.total_cycles + "-cycle run";
  const T = D.tokens;
  if (T) {
    const lanes = T.useful.map((u, b) => "lane " + b + ": " + u + " useful + " + (T.bucket[1] - u) + " pad").join(", ");
    $("subtitle").textContent += " \u2014 prefill bucket " + T.bucket[0] + "\u00d7" + T.bucket[1] + " (" + lanes +
        "; " + T.origin + ")";
    for (const n of document.querySelectorAll(".tok")) n.hidden = false;
  }

  // #zoom=N (the zoom menu) enlarges the cells N times: numbers stay readable on large arrays.
  const ZOOM = Math.max(1, Math.min(8, Number((/zoom=(\d+)/.exec(location.hash) || [0, 1])[1])));
  const cell = ZOOM * Math.max(16, Math.min(96, Math.floor(Math.min(760 / C, 600 / R))));
  const showAll = cell >= 70, showPsum = cell >= 40, showIndex = cell >= 140;
  // Small cells: index-only edge labels (every 4th below 24 px) and no edge values.
  const every = cell >= 24 ? 1 : 4;
  const label = (word, i) => showPsum ? word + " " + i : (i % every === 0 ? String(i) : "");
  const grid = $("grid");
  grid.style.gridTemplateColumns = "auto repeat(" + C + ", " + cell + "px)";
  grid.style.gridTemplateRows = "auto repeat(" + R + ", " + cell + "px) auto";
  const top = [], left = [], bottom = [], cells = [];
  grid.appendChild(el("div", "edge"));
  for (let c = 0; c < C; c++) {
    const e = el("div", "edge"); e.appendChild(el("span", "lab", label("col", c)));
    const v = el("span", "val", ""); e.appendChild(v); top.push(v); grid.appendChild(e);
  }
  for (let r = 0; r < R; r++) {
    const e = el("div", "edge left"); e.appendChild(el("span", "lab", label("row", r)));
    const v = el("span", "val", ""); e.appendChild(v); left.push(v); grid.appendChild(e);
    for (let c = 0; c < C; c++) {
      const p = el("div", "pe");
      p.dataset.r = r; p.dataset.c = c;
      p.setAttribute("role", "gridcell");
      const parts = {};
      if (showAll) {
        for (const [k, label] of [["w", "w "], ["a", "a "], ["p", "\u03a3 "], ["s", "next "]]) {
          const line = el("span", "v" + (k === "s" ? " s" : ""));
          line.appendChild(el("span", "k", label)); parts[k] = el("span", "", "");
          line.appendChild(parts[k]);
          if (showIndex && k !== "s") { parts[k + "i"] = el("span", "ix", ""); line.appendChild(parts[k + "i"]); }
          p.appendChild(line);
        }
      } else if (showPsum) {
        parts.p = el("span", "v", ""); p.appendChild(parts.p);
      }
      p.addEventListener("click", () => { selected = (selected === r * C + c) ? -1 : r * C + c; render(); });
      cells.push({ node: p, parts: parts }); grid.appendChild(p);
    }
  }
  grid.appendChild(el("div", "edge left", showPsum ? "out \u2193" : ""));
  for (let c = 0; c < C; c++) {
    const e = el("div", "edge"); const v = el("span", "val", ""); e.appendChild(v);
    bottom.push(v); grid.appendChild(e);
  }

  const legend = $("legend");
  // One swatch per colour a useful MAC takes in this window: the colour is the fold's number
  // (modulo the palette), so neighbouring folds differ.
  const foldsShown = new Set();
  for (let j = 0; j < V.fold.length; j++) if (V.flags[j] & ACTIVE) foldsShown.add(V.fold[j] % PALETTE.length);
  const foldSwatches = [...foldsShown].sort((a, b) => a - b).map((g) => ["useful MAC, fold " +
      [...new Set([...V.fold].filter((x) => x >= 0 && x % PALETTE.length === g))].sort((a, b) => a - b).slice(0, 4).join(", ") +
      (D.instructions.some((ins) => ins.folds > g + PALETTE.length) ? ", ..." : ""), PALETTE[g]]);
  const swatches = [...foldSwatches,
    ["padded row/column (zero weights, no useful work)",
     "repeating-linear-gradient(135deg, #f3b64c 0 4px, #fbe2b3 4px 8px)"],
    ["pad token: a row of A past its lane's useful tokens (real MACs, wasted)", "#e06666"],
    ["bubble: no data in the PE", "#eceff3"],
    ["weight shifting in (yellow top edge)", "linear-gradient(#f5c400 0 4px, #eceff3 4px)"]];
  for (const [text, bg] of swatches) {
    const s = el("span"); const sw = el("span", "sw"); sw.style.background = bg;
    s.appendChild(sw); s.appendChild(document.createTextNode(text)); legend.appendChild(s);
  }
  // The PE fields are named for weight-stationary; what they hold under each dataflow (pe_grid.hpp).
  const roles = {
    ws: "w: stationary weight, a: activation passing through, \u03a3: partial sum passed down, next: the other weight bank.",
    os: "w: B value passing down, a: A value passing right, \u03a3: the PE's own output C[m][n], kept until its last k.",
    is: "w: stationary input (A), a: B value passing through, \u03a3: partial sum passed down, next: the other input bank."};
  legend.appendChild(el("span", "", roles[D.chip.dataflow] + " Thick lines: fold boundaries."));

  // Instruction strip.
  const strip = $("strip");
  D.instructions.forEach((ins, i) => {
    const a = Math.max(ins.start, FIRST), b = Math.min(ins.end, LAST);
    if (b <= a) return;
    const seg = el("div", "seg", (ins.layer || "instruction " + ins.index) + " (" + ins.m + "\u00d7" + ins.k + "\u00d7" + ins.n + ")");
    seg.style.left = (100 * (a - FIRST) / SPAN) + "%";
    seg.style.width = (100 * (b - a) / SPAN) + "%";
    seg.style.background = i % 2 ? "#4f7fb8" : "#2d5f9a";
    strip.appendChild(seg);
  });
  const nowMark = el("div", "now"); strip.appendChild(nowMark);
  strip.addEventListener("click", (ev) => {
    const box = strip.getBoundingClientRect();
    goto(FIRST + Math.floor(SPAN * (ev.clientX - box.left) / box.width));
  });

  // ---- state and rendering ------------------------------------------------------------
  let cur = FIRST, playing = false, selected = -1, timer = null;
  const scrub = $("scrub"); scrub.min = FIRST; scrub.max = LAST - 1;
  const jump = $("jump"); jump.min = FIRST; jump.max = LAST - 1;

  function foldSpan(ins, f) {
    const k0 = (f % ins.row_folds) * R, n0 = Math.floor(f / ins.row_folds) * C;
    return "K " + k0 + "\u2013" + (Math.min(ins.k, k0 + R) - 1) + ", N " + (ins.n_offset + n0) + "\u2013" +
        (ins.n_offset + Math.min(ins.n, n0 + C) - 1);
  }

  // A, B and C of the current instruction filling in: A's and B's elements as they pass a PE,
  // C's as its partial sums leave the bottom row (ws, is: the row folds add up, as in the output
  // accumulator) or, under os, as each PE's own sum grows. Elements this cycle are outlined.
  const MAT_MAX = 1024;  // elements per matrix drawn
  function renderMatrices(f) {
    const box = $("matrices"); box.textContent = "";
    if (f < 0) return;
    const ins = D.instructions[F.instruction[f]];
    const dims = { A: [ins.m, ins.k], B: [ins.k, ins.n], C: [ins.m, ins.n] };
    const val = { A: new Map(), B: new Map(), C: new Map() }, now = { A: new Set(), B: new Set(), C: new Set() };
    let g = f; while (g > 0 && F.instruction[g - 1] === F.instruction[f]) g--;
    for (; g <= f; g++)
      for (let i = 0; i < P; i++) {
        const j = g * P + i, r = Math.floor(i / C), c = i % C;
        const e = elements(ins, V.fold[j], V.row[j], r, c);
        if (!e || e.A[0] >= ins.m || e.A[1] >= ins.k || e.B[1] >= ins.n) continue;  // padding
        val.A.set(e.A.join(","), V[e.a][j]); val.B.set(e.B.join(","), V[e.b][j]);
        if (g === f) { now.A.add(e.A.join(",")); now.B.add(e.B.join(",")); }
        const key = e.C.join(",");
        if (D.chip.dataflow === "os") { val.C.set(key, V.psum[j]); if (g === f) now.C.add(key); }
        else if (r === R - 1) { val.C.set(key, (val.C.get(key) || 0) + V.psum[j]); if (g === f) now.C.add(key); }
      }
    for (const name of ["A", "B", "C"]) {
      const [rows, cols] = dims[name], wrap = el("div");
      wrap.appendChild(el("h3", "", name + " (" + rows + "×" + cols + ")"));
      if (rows * cols > MAT_MAX) {
        wrap.appendChild(el("span", "muted", "too large to draw (more than " + MAT_MAX + " elements)"));
      } else {
        const m = el("div", "mat"); m.id = "mat" + name;
        m.style.gridTemplateColumns = "repeat(" + cols + ", auto)";
        for (let a = 0; a < rows; a++)
          for (let b = 0; b < cols; b++) {
            const key = a + "," + b, has = val[name].has(key);
            const d = el("div", (has ? "seen" : "") + (now[name].has(key) ? " now" : ""), has ? fmt(val[name].get(key)) : "");
            d.dataset.i = a; d.dataset.j = b; if (has) d.dataset.v = val[name].get(key);
            d.title = name + "[" + a + "][" + b + "]";
            m.appendChild(d);
          }
        wrap.appendChild(m);
      }
      box.appendChild(wrap);
    }
  }

  function render() {
    const t = cur - FIRST, f = frameAt[t], base = f * P;
    renderMatrices(f);
    document.body.dataset.cycle = cur;
    $("cycle").textContent = cur;
    scrub.value = cur; jump.value = cur;
    nowMark.style.left = (100 * t / SPAN) + "%";
    const folds = new Map();
    const story = [];
    for (let i = 0; i < P; i++) {
      const r = Math.floor(i / C), c = i % C, x = cells[i], n = x.node;
      let state = "idle", cls = "pe idle", bg = "";
      if (f < 0) {
        n.dataset.weight = n.dataset.shadow = n.dataset.activation = n.dataset.psum = "";
        n.dataset.fold = "-1"; n.dataset.loading = "0";
        for (const k in x.parts) x.parts[k].textContent = "";
        n.title = "PE(" + r + "," + c + "): MXU idle";
        n.dataset.index = "";
      } else {
        const j = base + i, fold = V.fold[j], fl = V.flags[j];
        const w = V.weight[j], s = V.shadow[j], a = V.activation[j], p = V.psum[j];
        n.dataset.weight = w; n.dataset.shadow = s; n.dataset.activation = a; n.dataset.psum = p;
        n.dataset.fold = fold; n.dataset.loading = (fl & LOADING) ? "1" : "0";
        if (fold < 0) { state = "bubble"; cls = "pe"; }
        else if ((fl & PAD_TOKEN) && !(fl & (PAD_ROW | PAD_COL))) { state = "token"; cls = "pe token"; }
        else if (fl & ACTIVE) { state = "active"; cls = "pe active"; bg = PALETTE[fold % PALETTE.length]; }
        else { state = "pad"; cls = "pe pad"; }
        if (fl & LOADING) cls += " loading";
        if (fold >= 0) {
          if (r > 0 && V.fold[j - C] !== fold) cls += " bt";
          if (c > 0 && V.fold[j - 1] !== fold) cls += " bl";
          folds.set(fold, (folds.get(fold) || 0) + 1);
        }
        const live = fold >= 0;
        if (x.parts.w) x.parts.w.textContent = fmt(w);
        if (x.parts.a) x.parts.a.textContent = live ? fmt(a) : "\u00b7";
        if (x.parts.p) x.parts.p.textContent = live ? fmt(p) : (x.parts.w ? "\u00b7" : "");
        if (x.parts.s) x.parts.s.textContent = fmt(s);
        const ix = indices(D.instructions[F.instruction[f]], fold, V.row[j], r, c);
        for (const k of ["w", "a", "p"]) if (x.parts[k + "i"]) x.parts[k + "i"].textContent = ix ? " " + ix[k] : "";
        n.dataset.index = ix ? [ix.w, ix.a, ix.p].join(" ") : "";
        n.title = "PE(" + r + "," + c + ") " + state + (live ? ", fold " + fold : "") + "\nweight " + fmt(w) +
            (ix ? " = " + ix.w : "") + "  (next " + fmt(s) + ")\nactivation " + (live ? fmt(a) : "-") + (ix ? " = " + ix.a : "") +
            "\npartial sum " + (live ? fmt(p) : "-") + (ix ? " toward " + ix.p : "");
      }
      n.dataset.state = state;
      if (i === selected) cls += " sel";
      n.className = cls;
      n.style.background = bg;
    }
    // Edges: weights entering at the top, activations entering at the left, sums leaving below.
    for (let c = 0; c < C && showPsum; c++) {
      const j = base + c, jb = base + (R - 1) * C + c;
      const entering = f >= 0 && (V.flags[j] & LOADING);
      top[c].textContent = entering ? "\u2193 " + fmt(V.shadow[j]) : "";
      const leaving = f >= 0 && V.fold[jb] >= 0;
      bottom[c].textContent = leaving ? fmt(V.psum[jb]) : "";
      bottom[c].className = "val" + (leaving && (V.flags[jb] & PAD_COL) ? " dim" : "");
    }
    for (let r = 0; r < R && showPsum; r++) {
      const j = base + r * C;
      left[r].textContent = f >= 0 && V.fold[j] >= 0 ? fmt(V.activation[j]) + " \u2192" : "";
    }

    if (f < 0) {
      $("instr").textContent = "\u2014"; $("icycle").textContent = "\u2014";
      $("folds").textContent = "\u2014"; $("now").textContent = "0"; $("pads").textContent = "\u2014";
      story.push("The MXU is idle this cycle (between instructions, or waiting on a semaphore).");
    } else {
      const ins = D.instructions[F.instruction[f]];
      $("instr").textContent = "#" + ins.index + " " + (ins.layer || "") + " [" + ins.m + "," + ins.k + "]\u00d7[" +
          ins.k + "," + ins.n + "] " + ins.dtype + ", " + ins.folds + " fold" + (ins.folds > 1 ? "s" : "");
      $("icycle").textContent = (cur - ins.start) + " of " + (ins.end - ins.start) + " (cycles " + ins.start + "\u2013" + (ins.end - 1) + ")";
      const present = [...folds.keys()].sort((a, b) => a - b);
      $("folds").textContent = present.length ? present.map((g) => "fold " + g + " of " + ins.folds + " (" + foldSpan(ins, g) + ")").join("; ") : "none (bubbles only)";
      $("now").textContent = F.useful[f] + " of " + P + " PEs" + (F.pad[f] ? " (+ " + F.pad[f] + " on pad tokens)" : "");
      if (T) {
        const rows = ins.pad_rows.map(([a, b]) => a === b ? String(a) : a + "\u2013" + b).join(", ");
        $("pads").textContent = rows ? "rows " + rows + " of A (instance " + ins.instance + " of its layer)" :
            "none in this instruction (instance " + ins.instance + ")";
      }
      const loadCols = [], enterRows = [], leaveCols = [];
      for (let c = 0; c < C; c++) {
        let any = false; for (let r = 0; r < R; r++) if (V.flags[base + r * C + c] & LOADING) any = true;
        if (any) loadCols.push(c);
        if (V.fold[base + (R - 1) * C + c] >= 0 && !(V.flags[base + (R - 1) * C + c] & PAD_COL)) leaveCols.push(c);
      }
      for (let r = 0; r < R; r++) if (V.fold[base + r * C] >= 0) enterRows.push(r);
      if (loadCols.length) story.push("Weights of the next fold shift down columns " + range(loadCols) + " into the other weight bank.");
      if (enterRows.length) story.push("Activations enter rows " + range(enterRows) + " from the left (one row later per row: the skew).");
      if (present.length) story.push("Each PE with data adds activation \u00d7 weight to the partial sum from above and passes it down.");
      if (F.pad[f]) story.push(F.pad[f] + " PE" + (F.pad[f] > 1 ? "s multiply" : " multiplies") + " a pad token (red): a row of A that " +
          "only fills the bucket's static shape. The MACs are real, and wasted.");
      if (leaveCols.length) story.push("Finished sums leave the bottom of columns " + range(leaveCols) + " into the output accumulator.");
      if (!story.length) story.push("Nothing moves in the array this cycle.");
    }
    const done = usefulSoFar[t];
    $("util").textContent = (100 * done / (P * (t + 1))).toFixed(1) + "% (" + done + " useful MACs in " + (t + 1) + " cycle" + (t ? "s" : "") + ")" +
        (padSoFar[t] ? "; " + padSoFar[t] + " more MACs on pad tokens" : "");
    const st = $("story"); st.textContent = "";
    for (const line of story) st.appendChild(el("div", "", line));

    const det = $("detail");
    if (selected >= 0) {
      const r = Math.floor(selected / C), c = selected % C;
      det.className = "";
      const ix = f < 0 ? null : indices(D.instructions[F.instruction[f]], V.fold[base + selected], V.row[base + selected], r, c);
      det.textContent = f < 0 ? "PE(" + r + "," + c + "): idle" :
          "PE(" + r + "," + c + ")  " + cells[selected].node.dataset.state + ", fold " + V.fold[base + selected] +
          "\n  weight      " + fmt(V.weight[base + selected]) + (ix ? " = " + ix.w : "") + "   (other bank " + fmt(V.shadow[base + selected]) + ")" +
          "\n  activation  " + fmt(V.activation[base + selected]) + (ix ? " = " + ix.a : "") +
          "\n  partial sum " + fmt(V.psum[base + selected]) + (ix ? ", toward " + ix.p : "");
    } else {
      det.className = "muted"; det.textContent = "Click a PE to follow its values.";
    }
    $("play").textContent = playing ? "\u275A\u275A pause" : "\u25B6 play";
    try { history.replaceState(null, "", "#cycle=" + cur + (ZOOM > 1 ? "&zoom=" + ZOOM : "")); } catch (e) { /* file:// in some browsers */ }
  }

  function goto(c) {
    c = Math.round(Number(c));
    if (!Number.isFinite(c)) return;
    cur = Math.min(LAST - 1, Math.max(FIRST, c));
    render();
  }
  function step(d) { goto(cur + d); }
  function setPlaying(on) {
    playing = on;
    if (timer) { clearInterval(timer); timer = null; }
    if (on) {
      if (cur >= LAST - 1) cur = FIRST;
      timer = setInterval(() => { if (cur >= LAST - 1) setPlaying(false); else step(1); },
                          1000 / Number($("speed").value));
    }
    render();
  }
  $("first").onclick = () => { setPlaying(false); goto(FIRST); };
  $("last").onclick = () => { setPlaying(false); goto(LAST - 1); };
  $("back").onclick = () => { setPlaying(false); step(-1); };
  $("fwd").onclick = () => { setPlaying(false); step(1); };
  $("play").onclick = () => setPlaying(!playing);
  $("go").onclick = () => { setPlaying(false); goto(jump.value); };
  jump.addEventListener("keydown", (e) => { if (e.key === "Enter") { setPlaying(false); goto(jump.value); } });
  $("speed").onchange = () => { if (playing) setPlaying(true); };
  $("zoom").value = String(ZOOM);
  $("zoom").onchange = () => { location.hash = "cycle=" + cur + "&zoom=" + $("zoom").value; location.reload(); };
  scrub.oninput = () => { setPlaying(false); goto(scrub.value); };
  document.addEventListener("keydown", (e) => {
    if (e.target && (e.target.tagName === "INPUT" || e.target.tagName === "SELECT")) return;
    if (e.key === " ") { e.preventDefault(); setPlaying(!playing); }
    else if (e.key === "ArrowRight") { setPlaying(false); step(1); }
    else if (e.key === "ArrowLeft") { setPlaying(false); step(-1); }
    else if (e.key === "Home") { setPlaying(false); goto(FIRST); }
    else if (e.key === "End") { setPlaying(false); goto(LAST - 1); }
  });

  // #cycle=N selects a cycle, #cycle=N&play plays from there (render() keeps #cycle current).
  // For scripted checks, #cycle=N&press=fwd,fwd,back then clicks those buttons in turn.
  function fromHash(hash) {
    const m = /cycle=(\d+)/.exec(hash);
    if (m) { setPlaying(false); goto(Number(m[1])); }
    const p = /press=([a-z,]+)/.exec(hash);
    if (p) for (const id of p[1].split(",")) {
      const b = document.getElementById(id);
      if (b && b.tagName === "BUTTON") b.click();
    }
    if (/play/.test(hash)) setPlaying(true);
  }
  window.addEventListener("hashchange", () => fromHash(location.hash));
  // For scripts and tests.
  window.systolicGrid = { goto: goto, step: step, play: () => setPlaying(true),
                          pause: () => setPlaying(false), cycle: () => cur, data: D };
  const initial = location.hash;
  render();
  fromHash(initial);
})();
</script>
</body>
</html>
)SYSTOLIC_HTML";

}  // namespace systolic
