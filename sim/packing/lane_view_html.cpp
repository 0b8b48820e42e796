// The lane view as one self-contained page (lane_view.hpp): the page template, one raw string,
// with lanes.json embedded. It draws the chosen instance's lanes as bars (a segment per
// request, labelled with its request id and segment id; pads hatched) and the chosen lane's
// attention mask: cell (q, k) is useful when q and k carry the same nonzero segment id, cross
// when both are tokens of different segments, pad when either is a pad position.
#include <string>

#include "sim/packing/lane_view.hpp"

namespace systolic::packing {
namespace {

constexpr const char* kTemplate = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Lane view</title>
<style>
body{font:14px system-ui,sans-serif;margin:20px;color:#222}
h1{font-size:18px;margin:0 0 6px}
.controls{margin:10px 0}
.lane{display:flex;align-items:center;margin:4px 0}
.lane .name{width:70px;font-size:12px;color:#555}
.bar{display:flex;height:34px;flex:1;border:1px solid #888;background:repeating-linear-gradient(45deg,#ddd 0 6px,#f4f4f4 6px 12px)}
.seg{overflow:hidden;white-space:nowrap;font-size:11px;padding:2px 4px;box-sizing:border-box;border-right:2px solid #fff;cursor:pointer}
.seg.sel{outline:2px solid #000}
.note{font-size:12px;color:#555;margin:6px 0}
canvas{border:1px solid #888;image-rendering:pixelated}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
</style></head><body>
<h1>Lane view</h1>
<div id="head" class="note"></div>
<div class="controls">instance <input id="inst" type="number" min="0" value="0" style="width:80px">
<button id="prev">&larr;</button><button id="next">&rarr;</button> <span id="count"></span></div>
<div id="summary" class="note"></div>
<div id="lanes"></div>
<h2 style="font-size:15px">Attention mask of lane <span id="lanenum">0</span></h2>
<div class="note">Query positions down, key positions across, the whole lane of S tokens.
<span class="legend"><span style="background:#2a7"></span>useful (same segment id)
<span style="background:#e94"></span>cross (different segments)<span style="background:#bbb"></span>pad</span></div>
<canvas id="mask" width="256" height="256" style="width:384px;height:384px"></canvas>
<div id="maskinfo" class="note"></div>
<script>
const DATA = /*LANES_JSON*/;
const $ = id => document.getElementById(id);
const pct = (a, b) => b ? (100 * a / b).toFixed(1) + " %" : "-";
const hue = r => (r * 137.508) % 360;
let current = 0, lane = 0;
$("head").textContent = "bucket set " + DATA.bucket_set + ", packer " + DATA.packer + ", window " +
  DATA.window_ms + " ms, " + DATA.instances.length + " prefill steps. Segment ids: 1..k in lane order, 0 on pads.";
function show(i) {
  if (!DATA.instances.length) { $("summary").textContent = "no prefill instance"; return; }
  current = Math.max(0, Math.min(DATA.instances.length - 1, i));
  $("inst").value = current;
  $("count").textContent = "of 0.." + (DATA.instances.length - 1);
  const inst = DATA.instances[current], S = inst.shape[1], c = inst.cells;
  $("summary").textContent = "[" + inst.shape.join(" x ") + "]" + (inst.runtime_shape ? " (compiled at run time)" : "") +
    ", replica " + inst.replica + ", started at " + inst.dispatch_s.toFixed(6) + " s: " + inst.useful_tokens +
    " useful + " + inst.pad_tokens + " pad tokens (" + pct(inst.pad_tokens, inst.shape[0] * S) + "); " +
    pct(c.computed - c.useful, c.computed) + " of attention cells masked (" + c.cross + " cross, " + c.pad + " pad)";
  const box = $("lanes"); box.innerHTML = "";
  inst.lanes.forEach(l => {
    const row = document.createElement("div"); row.className = "lane";
    row.innerHTML = "<div class=name>lane " + l.lane + "</div>";
    const bar = document.createElement("div"); bar.className = "bar";
    l.segments.forEach(s => {
      const d = document.createElement("div"); d.className = "seg" + (l.lane === lane ? " sel" : "");
      d.style.width = (100 * s.tokens / S) + "%";
      d.style.background = "hsl(" + hue(s.request) + ",60%,72%)";
      d.textContent = "r" + s.request + " seg " + s.segment_id + " (" + s.tokens + (s.chunks > 1 ? ", chunk " + (s.chunk + 1) + "/" + s.chunks : "") + ")";
      d.title = "request " + s.request + ", segment id " + s.segment_id + ", tokens " + s.offset + ".." + (s.offset + s.tokens - 1);
      d.onclick = () => { lane = l.lane; show(current); };
      bar.appendChild(d);
    });
    const pad = document.createElement("div"); pad.style.flex = "1"; pad.className = "seg";
    pad.textContent = l.pad_tokens ? "pad " + l.pad_tokens : ""; pad.onclick = () => { lane = l.lane; show(current); };
    bar.appendChild(pad); row.appendChild(bar); box.appendChild(row);
  });
  if (lane >= inst.lanes.length) lane = 0;
  drawMask(inst.lanes[lane], S);
}
function drawMask(l, S) {
  $("lanenum").textContent = l.lane;
  const cv = $("mask"), n = cv.width, ctx = cv.getContext("2d"), img = ctx.createImageData(n, n);
  const id = p => { for (const s of l.segments) if (p >= s.offset && p < s.offset + s.tokens) return s.segment_id; return 0; };
  const ids = []; for (let k = 0; k < n; k++) ids.push(id(Math.floor((k + 0.5) * S / n)));
  for (let q = 0; q < n; q++) for (let k = 0; k < n; k++) {
    const a = ids[q], b = ids[k], o = 4 * (q * n + k);
    const rgb = (a && b) ? (a === b ? [34, 170, 119] : [238, 153, 68]) : [187, 187, 187];
    img.data[o] = rgb[0]; img.data[o + 1] = rgb[1]; img.data[o + 2] = rgb[2]; img.data[o + 3] = 255;
  }
  ctx.putImageData(img, 0, 0);
  const c = l.cells;
  $("maskinfo").textContent = "lane " + l.lane + ": cu_seqlens [" + l.cu_seqlens.join(", ") + "], " + c.computed +
    " cells: " + c.useful + " useful, " + c.cross + " cross, " + c.pad + " pad (" + pct(c.computed - c.useful, c.computed) +
    " masked; sampled at " + n + " x " + n + ")";
}
$("inst").onchange = () => show(+$("inst").value);
$("prev").onclick = () => show(current - 1);
$("next").onclick = () => show(current + 1);
show(0);
</script></body></html>
)HTML";

}  // namespace

std::string lanes_html(const nlohmann::ordered_json& lanes) {
  std::string data = lanes.dump();
  // Inside <script>, "</" could close the element: JSON allows "<\/" for it.
  for (size_t at = data.find("</"); at != std::string::npos; at = data.find("</", at + 3))
    data.insert(at + 1, "\\");
  std::string page = kTemplate;
  const std::string marker = "/*LANES_JSON*/";
  page.replace(page.find(marker), marker.size(), data);
  return page;
}

}  // namespace systolic::packing
