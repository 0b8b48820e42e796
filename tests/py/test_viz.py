"""Seeing the dataflow: the PE-grid page (in headless Chromium), the VCD waveforms and the
timeline, each checked against an independent reference.

The reference re-derives the exact model's operands (std::mt19937_64, as in
models/mxu/mxu_core.cpp) and the dataflow of docs/mxu.md in plain Python, so what the page
renders and what the VCD holds are compared with values computed without the simulator."""
import html.parser
import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

from conftest import REPO, run_cli

TINY = REPO / "configs" / "tiny-4x4.yaml"
WATCH = REPO / "traces" / "gemms" / "watch-4x4.yaml"  # worked (6x8x4), ragged (5x6x3)
R = C = 4
SEED = 1  # tiny-4x4.yaml mxu.seed
M64 = (1 << 64) - 1


# ---- the exact model's operands and dataflow, independently --------------------------------

class MT19937_64:
    """std::mt19937_64."""

    def __init__(self, seed):
        self.mt = [seed & M64]
        for i in range(1, 312):
            prev = self.mt[-1]
            self.mt.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & M64)
        self.index = 312

    def __call__(self):
        if self.index >= 312:
            for i in range(312):
                x = (self.mt[i] & 0xFFFFFFFF80000000) | (self.mt[(i + 1) % 312] & 0x7FFFFFFF)
                xa = x >> 1
                if x & 1:
                    xa ^= 0xB5026F5AA96619E9
                self.mt[i] = self.mt[(i + 156) % 312] ^ xa
            self.index = 0
        y = self.mt[self.index]
        self.index += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        return y & M64


def test_mt19937_64_matches_the_standard():
    rng = MT19937_64(5489)
    for _ in range(9999):
        rng()
    assert rng() == 9981545732273789042  # [rand.predef]: the 10000th value


def int8_operand(rows, cols, seed):
    rng = MT19937_64(seed)
    return np.array([(rng() & 0xFF) - 128 for _ in range(rows * cols)],
                    dtype=np.int64).reshape(rows, cols)


def operands(layer, m, k, n, n_offset=0):
    layer_seed = (SEED * 1000003 + layer) & M64
    b_seed = layer_seed ^ ((0x9E3779B97F4A7C15 * (n_offset + 1)) & M64)
    return int8_operand(m, k, layer_seed), int8_operand(k, n, b_seed)


def wrap32(x):
    return ((int(x) + (1 << 31)) % (1 << 32)) - (1 << 31)


def pe_state(a, b, u, r, c):
    """PE (r, c) at cycle u of a tpu-convention matmul on the 4x4 array (docs/mxu.md):
    (fold, weight, activation, psum, state)."""
    m_rows, k = a.shape
    n = b.shape[1]
    rf, cf = -(-k // R), -(-n // C)
    starts = [R + f * max(m_rows, R) for f in range(rf * cf)]  # S_f
    d = u - r - c
    g = max((f for f, s in enumerate(starts) if s <= d), default=-1)
    if g < 0:
        return -1, 0, 0, 0, "bubble"
    k0, n0 = (g % rf) * R, (g // rf) * C
    weight = int(b[k0 + r, n0 + c]) if k0 + r < k and n0 + c < n else 0
    m = d - starts[g]
    if m >= m_rows:
        return -1, weight, 0, 0, "bubble"
    act = int(a[m, k0 + r]) if k0 + r < k else 0
    psum = 0
    if n0 + c < n:
        for i in range(min(r + 1, k - k0)):
            psum += int(a[m, k0 + i]) * int(b[k0 + i, n0 + c])
    state = "active" if k0 + r < k and n0 + c < n else "pad"
    return g, weight, act, wrap32(psum), state


def pe_index(m_rows, k, n, u, r, c):
    """The elements PE (r, c) holds at cycle u (same schedule as pe_state): its weight B[k][n],
    the activation A[m][k] passing through and the sum toward C[m][n]; "" when empty."""
    rf, cf = -(-k // R), -(-n // C)
    starts = [R + f * max(m_rows, R) for f in range(rf * cf)]
    d = u - r - c
    g = max((f for f, s in enumerate(starts) if s <= d), default=-1)
    if g < 0 or d - starts[g] >= m_rows:
        return ""
    m, kk, nn = d - starts[g], (g % rf) * R + r, (g // rf) * C + c
    return f"B[{kk}][{nn}] A[{m}][{kk}] C[{m}][{nn}]"


# The two layers of watch-4x4.yaml: (layer index, M, K, N, start cycle).
LAYERS = {"worked": (0, 6, 8, 4, 0), "ragged": (1, 5, 6, 3, 22)}


def expected_at(cycle):
    for name, (layer, m, k, n, start) in LAYERS.items():
        length = 22 if name == "worked" else 20
        if start <= cycle < start + length:
            a, b = operands(layer, m, k, n)
            return {(r, c): pe_state(a, b, cycle - start, r, c) for r in range(R) for c in range(C)}
    raise ValueError(cycle)


# ---- VCD -------------------------------------------------------------------------------------

PERIOD_PS = 10_000  # tiny-4x4.yaml: clock_mhz 100


def parse_vcd(path, period_ps=PERIOD_PS):
    """{full.name: (width, [(cycle, value)])}, integer wires sign-extended from their width;
    the VCD's times (ps) divided by the clock period."""
    ids, signals, scope, time = {}, {}, [], 0
    tokens = iter(pathlib.Path(path).read_text().split())
    for tok in tokens:
        if tok in ("$date", "$version", "$timescale", "$comment"):
            while next(tokens) != "$end":
                pass
        elif tok == "$scope":
            next(tokens)
            scope.append(next(tokens))
        elif tok == "$upscope":
            scope.pop()
        elif tok == "$var":
            kind, width, code, name = next(tokens), int(next(tokens)), next(tokens), next(tokens)
            full = ".".join(scope + [name])
            ids.setdefault(code, []).append(full)
            signals[full] = (kind, width, [])
        elif tok.startswith("#"):
            time = int(tok[1:]) / period_ps
        elif tok[0] in "br":
            code = next(tokens)
            if tok[0] == "b":
                width = signals[ids[code][0]][1]
                v = int(tok[1:], 2) if set(tok[1:]) <= {"0", "1"} else 0
                if v >= 1 << (width - 1) and width > 1:
                    v -= 1 << width
            else:
                v = float(tok[1:])
            for name in ids[code]:
                signals[name][2].append((time, v))
        elif tok[0] in "01xz" and len(tok) > 1 and tok[1:] in ids:
            for name in ids[tok[1:]]:
                signals[name][2].append((time, 1 if tok[0] == "1" else 0))
    return signals


def value_at(signal, t):
    v = None
    for time, value in signal[2]:
        if time > t:
            break
        v = value
    return v


def test_vcd_partial_sums_at_the_drain_cycles_equal_the_reference_gemm(systolic_bin, tmp_path):
    vcd = tmp_path / "w.vcd"
    # Ideal memory: the grid starts at cycle 0 and the layers' starts are the worked ones.
    proc = run_cli("run", "-c", TINY, "-w", WATCH, "-o", tmp_path / "out", "-q", "--vcd", vcd,
                   "--set", "memory.ideal=true")
    assert proc.stdout == ""  # SystemC's tracing notices stay quiet
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["totals"]["cycles"] == 42  # tracing moves the grid in time, not the result
    sig = parse_vcd(vcd)
    prefix = "SystemC.chip.mxu0."
    for name, (layer, m, k, n, start) in LAYERS.items():
        a, b = operands(layer, m, k, n)
        reference = a @ b
        rf = -(-k // R)
        got = np.zeros((m, n), dtype=np.int64)
        # Output (m, c) of fold f leaves the bottom row after cycle S_f + m + R - 1 + c;
        # the row folds of a column add up in the output accumulator.
        for f in range(rf):
            s_f = R + f * max(m, R)
            for i in range(m):
                for c in range(n):
                    t = start + s_f + i + R - 1 + c
                    got[i, c] += value_at(sig[f"{prefix}pe_03_{c:02}.psum_03_{c:02}"], t)
                    # The bottom row did a useful MAC unless it is a padded row of the fold.
                    assert value_at(sig[f"{prefix}pe_03_{c:02}.active_03_{c:02}"], t) == int(k - f * R >= R)
        assert (got == reference).all(), f"layer {name}"
        # The stationary weights are B's, the activations A's.
        assert value_at(sig[f"{prefix}pe_02_01.weight_02_01"], start + R + 2 + 1) == b[2, 1]
        assert value_at(sig[f"{prefix}pe_00_00.activation_00_00"], start + R) == a[0, 0]
    busy = sig[prefix + "busy"][2]
    assert busy[0] == (0, 1) and busy[-1] == (42, 0)
    stored = sig["SystemC.chip.semaphores.outputs_stored"][2]  # each layer's one output tile
    assert stored[-1] == (42, 2)
    # GTKWave's own reader takes it (vcd2fst ships with the gtkwave package).
    if shutil.which("vcd2fst"):
        conv = subprocess.run(["vcd2fst", str(vcd), str(tmp_path / "w.fst")], capture_output=True,
                              text=True, timeout=60)
        assert conv.returncode == 0 and (tmp_path / "w.fst").stat().st_size > 0, conv.stderr


def test_vcd_has_a_clock_a_picosecond_axis_and_a_gtkwave_save_file(systolic_bin, tmp_path):
    # The real memory system (the default): DMA events fall inside cycles, and SystemC stays quiet.
    vcd = tmp_path / "grid.vcd"
    proc = run_cli("run", "-c", TINY, "-w", WATCH, "-o", tmp_path / "out", "-q", "--vcd", vcd)
    assert "W713" not in proc.stderr and "Warning" not in proc.stderr
    cycles = json.loads((tmp_path / "out" / "report.json").read_text())["totals"]["cycles"]
    text = vcd.read_text()
    assert "$timescale\n     1 ps\n$end" in text
    sig = parse_vcd(vcd)
    # One clock period per cycle: high at each cycle's start, low at its middle, to the end.
    clk = sig["SystemC.clk"][2]
    assert clk == [(e / 2, 1 - e % 2) for e in range(2 * cycles + 1)]
    # Every PE signal's name is unique, not only its path.
    leaves = [name.rsplit(".", 1)[1] for name in sig if ".pe_" in name]
    assert len(leaves) == len(set(leaves)) == R * C * 4
    # The save file: beside the VCD, naming it, every trace a signal of the VCD, one group per row.
    gtkw = (tmp_path / "grid.gtkw").read_text().splitlines()
    assert '[dumpfile] "grid.vcd"' in gtkw
    traces = [line for line in gtkw if line.startswith("SystemC.")]
    assert {re.sub(r"\[\d+:0\]$", "", t) for t in traces} <= set(sig) and len(traces) > R * C * 4
    labels = [gtkw[i + 1] for i, line in enumerate(gtkw) if line == "@800200"]
    assert labels[:2] == ["-clock", "-engines: busy, stalled"]
    assert [l for l in labels if "row" in l] == [f"-mxu0 row {r}" for r in range(R)]
    assert gtkw.count("@800200") == gtkw.count("@1000200")
    if shutil.which("vcd2fst"):
        conv = subprocess.run(["vcd2fst", str(vcd), str(tmp_path / "w.fst")], capture_output=True, text=True,
                              timeout=60)
        assert conv.returncode == 0, conv.stderr


def test_viz_names_the_chip_as_run_and_says_what_it_wrote(systolic_bin, tmp_path):
    page = tmp_path / "g.html"
    proc = run_cli("viz", "-c", TINY, "-w", WATCH, "-o", page, "--set", "mxu.rows=8", "--set", "memory.ideal=true")
    assert proc.stdout == f"wrote: {page}\n"
    assert '"name":"tiny-4x4 with mxu.rows=8, memory.ideal=true"' in page.read_text()
    proc = run_cli("viz", "-c", TINY, "-w", WATCH, "-o", page)
    assert f"note: replaced {page} from an earlier run" in proc.stderr


def test_vcd_refuses_what_it_cannot_trace(systolic_bin, tmp_path):
    # The default chip is 128x128.
    for extra, words in [(["--set", "mxu.model=exact"], "up to 32x32"),
                         (["-c", TINY, "--set", "mxu.model=fast"], "mxu.model=exact")]:
        proc = run_cli("run", "-w", WATCH, "-o", tmp_path / "o", "--vcd",
                       tmp_path / "x.vcd", *extra, check=False)
        assert proc.returncode == 2
        assert words in proc.stderr and proc.stderr.count("\n") == 1
        assert not (tmp_path / "x.vcd").exists()


# ---- timeline --------------------------------------------------------------------------------

def check_timeline(tl, total_cycles):
    assert isinstance(tl["traceEvents"], list)
    tracks = {}
    for e in tl["traceEvents"]:
        assert e["ph"] in {"M", "X", "C", "s", "f"}
        if e["ph"] == "M" and e["name"] == "thread_name":
            tracks[(e["pid"], e["tid"])] = e["args"]["name"]
    per_track = {}
    for e in tl["traceEvents"]:
        if e["ph"] != "X":
            continue
        assert (e["pid"], e["tid"]) in tracks, f"slice on an unknown track: {e}"
        assert isinstance(e["ts"], int) and isinstance(e["dur"], int) and e["dur"] >= 0
        per_track.setdefault(tracks[(e["pid"], e["tid"])], []).append(e)
    for name, slices in per_track.items():
        slices.sort(key=lambda e: e["ts"])
        for prev, nxt in zip(slices, slices[1:]):
            assert prev["ts"] + prev["dur"] <= nxt["ts"], f"overlap on {name}: {prev} / {nxt}"
    start = min(e["ts"] for s in per_track.values() for e in s)
    end = max(e["ts"] + e["dur"] for s in per_track.values() for e in s)
    assert start == 0 and end - start == total_cycles
    return tracks, per_track


def engine_slices(outdir, timeline_path):
    """report.json, the timeline, its slices by track and each engine's work slices (stalls
    left out), after checking one track per engine of the report and one work slice per
    instruction it ran."""
    report = json.loads((outdir / "report.json").read_text())
    tl = json.loads(timeline_path.read_text())
    tracks, per_track = check_timeline(tl, report["totals"]["cycles"])
    engines = report["chips"][0]["engines"]
    assert sorted(tracks.values()) == sorted(e["name"] for e in engines)
    work = {}
    for engine in engines:
        work[engine["name"]] = [e for e in per_track.get(engine["name"], []) if e["cat"] != "stall"]
        assert len(work[engine["name"]]) == engine["instructions"]
    return report, tl, per_track, work


def test_timeline_is_valid_and_spans_the_run(systolic_bin, tmp_path):
    gemms = tmp_path / "g.yaml"
    gemms.write_text("gemms:\n  - {name: l1, m: 5, k: 4, n: 10}\n  - {name: l2, m: 5, k: 4, n: 8}\n"
                     "  - {name: l3, m: 3, k: 9, n: 4, repeat: 2}\n")
    out = tmp_path / "out"
    run_cli("run", "-c", TINY, "-w", gemms, "-o", out, "-q", "--set", "mxu.count=2",
            "--timeline", tmp_path / "tl.json")
    # One track per engine of the report, one slice per instruction it ran.
    report, tl, per_track, work = engine_slices(out, tmp_path / "tl.json")
    for engine in report["chips"][0]["engines"]:
        assert sum(e["dur"] for e in work[engine["name"]]) == engine["busy_cycles"]
        stalls = [e for e in per_track.get(engine["name"], []) if e["cat"] == "stall"]
        assert sum(e["dur"] for e in stalls) == engine["stalled_cycles"]
    names = [e["name"] for e in per_track["mxu0"] if e["cat"] == "matmul"]
    assert names == ["l1", "l2", "l3", "l3"]
    first = next(e for e in per_track["mxu0"] if e["cat"] == "matmul")["args"]
    assert (first["m"], first["k"], first["n"], first["dtype"]) == (5, 4, 8, "int8")
    assert first["bytes"] == 5 * 4 + 4 * 8 + 5 * 8 * 4
    assert tl["otherData"]["total_cycles"] == report["totals"]["cycles"]


def test_timeline_tracks_come_from_the_engines_generically(systolic_bin, tmp_path):
    # With the memory system on, DMA engines run their own instructions: their tracks and
    # slices (with bytes) appear without the timeline knowing more than the op's shape.
    run_cli("run", "-c", TINY, "-w", WATCH, "-o", tmp_path / "out", "-q",
            "--set", "memory.ideal=false", "--timeline", tmp_path / "tl.json")
    _, _, _, work = engine_slices(tmp_path / "out", tmp_path / "tl.json")
    for slices in work.values():
        for e in slices:
            assert e["args"]["op"] == e["cat"] and e["args"]["bytes"] > 0


def sram_counters(tl):
    """{scratchpad: [(cycle, bytes)]} from the timeline's "sram NAME (bytes)" counters."""
    out = {}
    for e in tl["traceEvents"]:
        if e["ph"] == "C" and e["name"].startswith("sram "):
            out.setdefault(e["name"][len("sram "):-len(" (bytes)")], []).append((e["ts"], e["args"]["value"]))
    return out


def test_timeline_hbm_channels(systolic_bin, tmp_path):
    # One counter per HBM channel: the share of its data buses in use. Integrated over the run
    # it gives back each channel's busy cycles in report.json (conservation of bus time).
    out = tmp_path / "out"
    run_cli("run", "-c", REPO / "configs" / "tpu-v4i.yaml", "-w", REPO / "traces" / "models" / "gpt2.yaml",
            "--bucket", "1x256", "--set", "memory.ideal=false", "-o", out, "-q", "--timeline", tmp_path / "tl.json")
    report = json.loads((out / "report.json").read_text())
    tl = json.loads((tmp_path / "tl.json").read_text())
    busy = report["chips"][0]["memory"]["hbm"]["channel_busy_cycles"]
    pcs = report["config"]["hbm"]["pseudo_channels"]
    assert len(busy) == report["config"]["hbm"]["channels"] and sum(busy) > 0
    for ch, want in enumerate(busy):
        points = [(e["ts"], e["args"]["value"]) for e in tl["traceEvents"]
                  if e["ph"] == "C" and e["name"] == f"hbm ch{ch} busy (%)"]
        assert points and all(0 <= v <= 100 for _, v in points)
        assert points[-1][0] <= report["totals"]["cycles"]
        integral = sum((t1 - t0) * v / 100 * pcs for (t0, v), (t1, _) in zip(points, points[1:]))
        assert integral == pytest.approx(want, rel=1e-9)
    # Recording the channels changes nothing the report says.
    run_cli("run", "-c", REPO / "configs" / "tpu-v4i.yaml", "-w", REPO / "traces" / "models" / "gpt2.yaml",
            "--bucket", "1x256", "--set", "memory.ideal=false", "-o", tmp_path / "plain", "-q")
    assert (tmp_path / "plain" / "report.json").read_bytes() == (out / "report.json").read_bytes()


def test_timeline_sram_occupancy(systolic_bin, tmp_path):
    # With the memory system: one counter per scratchpad, from 0, within its capacity, ending
    # at 0, and every DMA slice names the ping/pong buffer it fills or drains.
    gemms = tmp_path / "g.yaml"
    gemms.write_text("gemms:\n  - {name: a, m: 40, k: 24, n: 20}\n  - {name: b, m: 300, k: 8, n: 12}\n")
    run_cli("run", "-c", TINY, "-w", gemms, "-o", tmp_path / "out", "-q", "--set", "memory.ideal=false",
            "--timeline", tmp_path / "tl.json")
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    tl = json.loads((tmp_path / "tl.json").read_text())
    capacity = tl["otherData"]["sram_capacity_bytes"]
    assert capacity == {"vmem": 64 << 10, "weights": 1 << 10, "accumulators": 4 << 10}  # tiny-4x4.yaml
    counters = sram_counters(tl)
    assert sorted(counters) == sorted(capacity)
    for name, points in counters.items():
        cycles = [c for c, _ in points]
        assert points[0] == (0, 0) and points[-1][1] == 0, name
        assert cycles == sorted(cycles) and len(set(cycles)) == len(cycles), name
        assert cycles[-1] <= report["totals"]["cycles"]
        assert all(isinstance(v, (int, float)) and 0 <= v <= capacity[name] for _, v in points), name
        assert max(v for _, v in points) > 0, name
    buffers = {e["args"]["buffer"] for e in tl["traceEvents"] if e["ph"] == "X" and e["cat"] == "dma"}
    assert buffers == {"act_ping", "act_pong", "wgt_ping", "wgt_pong", "acc_ping", "acc_pong"}

    # memory.ideal times the same program: the same tiles occupy the scratchpads (sooner).
    run_cli("run", "-c", TINY, "-w", gemms, "-o", tmp_path / "out2", "-q", "--timeline", tmp_path / "tl2.json",
            "--set", "memory.ideal=true")
    tl2 = json.loads((tmp_path / "tl2.json").read_text())
    ideal = sram_counters(tl2)
    assert sorted(ideal) == sorted(capacity)
    for name, points in ideal.items():
        assert 0 < max(v for _, v in points) <= capacity[name], name


# ---- the page --------------------------------------------------------------------------------

def test_viz_writes_a_self_contained_page(systolic_bin, tmp_path):
    page = tmp_path / "grid.html"
    run_cli("viz", "-c", TINY, "-w", WATCH, "-o", page)
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>")
    for external in ["http:", "https:", "<link", "src=", "@import", "url(", "@font-face"]:
        assert external not in text
    assert len(text) < 100_000


def test_viz_refuses_with_hints(systolic_bin, tmp_path):
    default = REPO / "configs" / "tpu-v4i.yaml"  # 128x128
    cases = [(["-c", default], "up to 32x32"),
             (["-c", TINY, "--layer", "wroked"], "did you mean 'worked'"),
             (["-c", TINY, "--cycles", "5000000:5000010"], "selects nothing"),
             (["-c", TINY, "--cycles", "9:3"], "greater than A"),
             (["-c", TINY, "--mxu", "3"], "mxu.count = 1")]
    for extra, words in cases:
        proc = run_cli("viz", "-w", WATCH, "-o", tmp_path / "x.html", *extra, check=False)
        assert proc.returncode == 2, extra
        assert words in proc.stderr, (extra, proc.stderr)
    big = tmp_path / "big.yaml"
    big.write_text("gemms:\n  - {name: big, m: 4000, k: 64, n: 64}\n")
    a32 = ["-c", default, "--set", "mxu.rows=32", "--set", "mxu.cols=32"]
    proc = run_cli("viz", "-w", big, "-o", tmp_path / "x.html", *a32, check=False)
    assert proc.returncode == 2 and "--cycles 0:512" in proc.stderr, proc.stderr
    assert not (tmp_path / "x.html").exists()
    run_cli("viz", "-w", big, "-o", tmp_path / "x.html", *a32, "--cycles", "0:512")


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    # Debian's package; installed here when we may (scripts/test.sh normally has done it).
    if os.geteuid() == 0 and shutil.which("apt-get") and not os.environ.get("SYSTOLIC_NO_APT"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], env=env,
                       capture_output=True, timeout=900)
        if shutil.which("chromium"):
            return shutil.which("chromium")
    return None


@pytest.fixture(scope="module")
def chromium():
    path = find_chromium()
    if not path:
        pytest.skip("Chromium is not installed and cannot be installed here "
                    "(apt-get install chromium): the page's rendering is not checked")
    return path


def headless(chromium, *args):
    with tempfile.TemporaryDirectory(prefix="systolic-chromium-") as profile:
        proc = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", *args],
            capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


class PeCells(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.cells, self.body = {}, {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        if tag == "div" and "pe" in (a.get("class") or "").split():
            self.cells[(int(a["data-r"]), int(a["data-c"]))] = a


def rendered(chromium, page, fragment):
    parser = PeCells()
    parser.feed(headless(chromium, "--dump-dom", page.as_uri() + "#" + fragment))
    return parser


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    if not pathlib.Path(os.environ.get("SYSTOLIC_BUILD", REPO / "build"), "systolic").exists():
        pytest.skip("systolic is not built")
    path = tmp_path_factory.mktemp("viz") / "grid.html"
    run_cli("viz", "-c", TINY, "-w", WATCH, "-o", path, "--set", "memory.ideal=true")  # the worked cycles
    return path


@pytest.mark.parametrize("fragment, cycle", [
    ("cycle=13", 13),                      # both folds of `worked` in the array (docs/mxu.md)
    ("cycle=2&press=fwd,fwd,back,fwd", 4),  # stepping with the buttons; fold 0 starts streaming
    ("cycle=29", 29),                      # `ragged`: padded rows and column
])
def test_page_renders_the_exact_models_values(chromium, page, fragment, cycle):
    dom = rendered(chromium, page, fragment)
    assert int(dom.body["data-cycle"]) == cycle
    assert len(dom.cells) == R * C
    expected = expected_at(cycle)
    for (r, c), cell in dom.cells.items():
        fold, weight, act, psum, state = expected[(r, c)]
        got = (int(cell["data-fold"]), int(cell["data-weight"]), int(cell["data-activation"]),
               int(cell["data-psum"]), cell["data-state"])
        assert got == (fold, weight, act, psum, state), f"PE({r},{c}) at cycle {cycle}"
        # The matrix elements it holds, named from the schedule of docs/mxu.md.
        name, (layer, m, k, n, start) = next((nm, v) for nm, v in LAYERS.items()
                                             if v[4] <= cycle < v[4] + (22 if nm == "worked" else 20))
        assert cell["data-index"] == pe_index(m, k, n, cycle - start, r, c), f"PE({r},{c}) at cycle {cycle}"
    states = {cell["data-state"] for cell in dom.cells.values()}
    if cycle == 29:
        assert "pad" in states


def test_page_legend_and_zoom(chromium, page, tmp_path):
    # watch-4x4's `worked` layer has two folds in the array at cycle 13: a swatch for each colour.
    dom = headless(chromium, "--dump-dom", page.as_uri() + "#cycle=13")
    assert "useful MAC, fold 0<" in dom and "useful MAC, fold 1<" in dom
    # A 16x16 array: no numbers fit its cells at 1x; at 2x every PE shows its four fields, and
    # at 4x the matrix indices beside them.
    big = tmp_path / "g16.html"
    run_cli("viz", "-c", TINY, "-w", WATCH, "-o", big, "--set", "memory.ideal=true", "--set", "mxu.rows=16",
            "--set", "mxu.cols=16")
    counts = {}
    for zoom in (1, 2, 4):
        dom = headless(chromium, "--dump-dom", big.as_uri() + f"#cycle=20&zoom={zoom}")
        counts[zoom] = (dom.count('class="v"'), dom.count('class="ix"'))
    assert counts == {1: (0, 0), 2: (16 * 16 * 3, 0), 4: (16 * 16 * 3, 16 * 16 * 3)}


@pytest.mark.parametrize("dataflow", ["os", "is"])
def test_page_indices_name_the_values_under_os_and_is(chromium, tmp_path, dataflow):
    # Each active PE's named elements hold the values it shows: under os the weight field is
    # B[k][n] and the activation A[m][k]; under is the stationary field is A[m][k], the passing
    # one B[k][n] (operands of `worked` drawn independently above).
    page = tmp_path / "g.html"
    run_cli("viz", "-c", TINY, "-w", WATCH, "-o", page, "--set", "memory.ideal=true", "--set", f"mxu.dataflow={dataflow}",
            "--layer", "worked")
    a, b = operands(0, 6, 8, 4)
    checked = 0
    for cycle in (6, 12):
        for cell in rendered(chromium, page, f"cycle={cycle}").cells.values():
            if cell["data-state"] != "active":
                continue
            at = {name: (int(i), int(j)) for name, i, j in re.findall(r"([ABC])\[(\d+)\]\[(\d+)\]", cell["data-index"])}
            w, act = int(cell["data-weight"]), int(cell["data-activation"])
            assert (b[at["B"]], a[at["A"]]) == ((w, act) if dataflow == "os" else (act, w))
            checked += 1
    assert checked > 10


def matrix_panel(dom, name):
    """{(i, j): value} of the page's matrix panel `name` (elements filled in so far)."""
    panel = dom[dom.index(f'id="mat{name}"'):]
    panel = panel[:panel.index("</div></div>") + 6]
    cells = re.findall(r'<div[^>]*data-i="(\d+)" data-j="(\d+)" data-v="(-?\d+)"', panel)
    return {(int(i), int(j)): int(v) for i, j, v in cells}


def test_page_fills_in_a_b_and_c(chromium, page):
    # At the last cycle of `worked` every element of A and B has passed a PE and C is A x B
    # (numpy on the independently drawn operands); halfway, C holds only what has left the array.
    a, b = operands(0, 6, 8, 4)
    dom = headless(chromium, "--dump-dom", page.as_uri() + "#cycle=21")
    assert matrix_panel(dom, "A") == {(i, j): int(a[i, j]) for i in range(6) for j in range(8)}
    assert matrix_panel(dom, "B") == {(i, j): int(b[i, j]) for i in range(8) for j in range(4)}
    c = a.astype(np.int64) @ b.astype(np.int64)
    assert matrix_panel(dom, "C") == {(i, j): wrap32(int(c[i, j])) for i in range(6) for j in range(4)}
    early = matrix_panel(headless(chromium, "--dump-dom", page.as_uri() + "#cycle=13"), "C")
    assert 0 < len(early) < 24 and early[(0, 0)] == 6298  # docs/watch-it-compute.md, cycle 13


def test_page_screenshot(chromium, page, tmp_path):
    shot = tmp_path / "grid.png"
    headless(chromium, "--window-size=1280,800", "--hide-scrollbars", f"--screenshot={shot}",
             page.as_uri() + "#cycle=13")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


# ---- pad tokens ------------------------------------------------------------------------------

DATA = REPO / "tests" / "py" / "data"
TINY_LM = DATA / "tiny-lm.yaml"  # d_model 8, 2 heads, d_ff 8, int8


def embedded(page):
    text = page.read_text()
    start = text.index('<script type="application/json" id="systolic-data">')
    start = text.index(">", start) + 1
    return json.loads(text[start:text.index("</script>", start)])


@pytest.fixture(scope="module")
def pad_page(tmp_path_factory):
    if not pathlib.Path(os.environ.get("SYSTOLIC_BUILD", REPO / "build"), "systolic").exists():
        pytest.skip("systolic is not built")
    path = tmp_path_factory.mktemp("viz") / "pad.html"
    run_cli("viz", "-c", TINY, "-w", TINY_LM, "--bucket", "1x8", "--pad-tokens", "3",
            "--layer", "layer.qkv_proj", "-o", path)
    return path


def test_pad_tokens_in_the_page_data(pad_page):
    data = embedded(pad_page)
    assert data["tokens"] == {"bucket": [1, 8], "useful": [5], "pad": 3, "origin": "--pad-tokens 3"}
    [ins] = data["instructions"]
    assert (ins["layer"], ins["m"], ins["k"], ins["n"]) == ("layer.qkv_proj", 8, 8, 24)
    assert ins["pad_rows"] == [[5, 7]]


def test_pad_tokens_are_drawn_in_their_own_colour(chromium, pad_page):
    # qkv_proj: A[8, 8] (8 tokens, the last 3 pad) x B[8, 24] on the 4x4 array: 2 row folds x
    # 6 column folds, none padded. Fold f streams from S_f = 4 + 8 f; PE(r, c) at cycle u of the
    # instruction works on row m = u - S_f - r - c of A.
    start = embedded(pad_page)["instructions"][0]["start"]
    for u in (11, 19, 40):
        dom = rendered(chromium, pad_page, f"cycle={start + u}")
        states = {}
        for (r, c), cell in dom.cells.items():
            d = u - r - c
            g = max((f for f in range(12) if 4 + 8 * f <= d), default=-1)
            m = d - (4 + 8 * g) if g >= 0 else -1
            want = "bubble" if not 0 <= m < 8 else "token" if m >= 5 else "active"
            assert cell["data-state"] == want, f"PE({r},{c}) at cycle {u}: row {m}"
            states[want] = states.get(want, 0) + 1
        assert states.get("token") and states.get("active")
    page = headless(chromium, "--dump-dom", pad_page.as_uri() + f"#cycle={start + 11}")
    assert "pad token: a row of A past its lane" in page  # the legend entry
    assert "rgb(224, 102, 102)" in page                   # its swatch, the colour of .pe.token
    assert "--token:#e06666" in pad_page.read_text()
    assert "prefill bucket 1\u00d78 (lane 0: 5 useful + 3 pad" in page


def test_viz_shows_a_packed_instance_of_a_request_log(systolic_bin, tmp_path):
    # Requests of 5, 2, 3 tokens within 2 ms, then 7: a 5 ms window packs the first three into
    # [2, 8] (lanes 5+3 and 2), first-fit-decreasing; instance 1 is the fourth alone in [1, 8].
    page = tmp_path / "p.html"
    common = ["viz", "-c", TINY, "-w", TINY_LM, "--requests", DATA / "tiny-requests.csv",
              "--buckets", DATA / "tiny-buckets.yaml", "--window", "5", "--layer", "layer.attn_scores"]
    run_cli(*common, "-o", page)
    data = embedded(page)
    assert data["tokens"]["bucket"] == [2, 8] and data["tokens"]["useful"] == [8, 2]
    assert "[#0+#2] [#1]" in data["tokens"]["origin"]
    # Attention instance i serves lane i % 2: lane 0 is full, lane 1 has 6 pad rows.
    for ins in data["instructions"]:
        assert ins["pad_rows"] == ([] if ins["instance"] % 2 == 0 else [[2, 7]])
    run_cli(*common, "--instance", "1", "-o", page)
    assert embedded(page)["tokens"]["useful"] == [7]


def test_viz_pad_tokens_refusals(systolic_bin, tmp_path):
    cases = [(["-w", WATCH, "--pad-tokens", "1"], "need a transformer model"),
             (["-w", TINY_LM, "--bucket", "1x8", "--phase", "decode", "--pad-tokens", "1"], "--phase prefill"),
             (["-w", TINY_LM, "--bucket", "1x8", "--pad-tokens", "9"], "0 to S = 8"),
             (["-w", TINY_LM, "--requests", DATA / "tiny-requests.csv", "--buckets", DATA / "tiny-buckets.yaml",
               "--instance", "5"], "prefill instances"),
             (["-w", TINY_LM, "--requests", DATA / "tiny-requests.csv"], "--buckets")]
    for extra, words in cases:
        proc = run_cli("viz", "-c", TINY, "-o", tmp_path / "x.html", *extra, check=False)
        assert proc.returncode != 0, extra
        assert words in proc.stderr, (extra, proc.stderr)
