"""Multi-chip runs through the command line, end to end: a collective against its closed form
from the config's own numbers, tensor parallelism splitting every MAC exactly once and moving
the Megatron collectives, bad interconnect inputs rejected with the key named and nothing
written, the per-chip timeline, the TP crossover script, and expert parallelism (routing,
all-to-all traffic, determinism). tests/unit/test_ici.cpp covers the network in isolation."""
import json
import os
import re
import subprocess

import pytest
import yaml

from conftest import REPO, SYSTOLIC, assert_refused, model_with, require_python_module, run_cli, run_report

V5E = REPO / "configs" / "tpu-v5e-8.yaml"
MODELS = REPO / "traces" / "models"
MiB = 1 << 20


def preset_with(tmp_path, name, **ici):
    """tpu-v5e-8.yaml with some ici.* values replaced (each key occurs once, indented under
    ici:); returns (path, parsed config)."""
    text = V5E.read_text()
    for key, value in ici.items():
        text, n = re.subn(rf"^(  {key}:\s*)\S+", rf"\g<1>{value}", text, flags=re.M)
        assert n == 1, f"ici.{key} not found once in {V5E}"
    path = tmp_path / name
    path.write_text(text)
    return path, yaml.safe_load(text)



def cycles_of(seconds, cfg):
    return seconds * cfg["clock_mhz"] * 1e6


# ---- 1. one all-reduce against its closed form ---------------------------------------------

S = 256 * MiB  # per chip


def ring_all_reduce_seconds(n, s, gbps, lat_ns, ways):
    # 2(N-1) steps (reduce-scatter, then all-gather), each S/N bytes (split over `ways`
    # directions) over one link and one hop.
    return 2 * (n - 1) * ((s / n / ways) / (gbps * 1e9) + lat_ns * 1e-9)


def torus_2x4_all_reduce_seconds(s, gbps, lat_ns):
    # Dimension by dimension, a bidirectional ring per line: along x (2 chips) one step of S/4
    # each way, then along y (4 chips) on the S/2 left, three steps of S/16 each way; the
    # all-gather retraces them.
    step = lambda b: b / (gbps * 1e9) + lat_ns * 1e-9
    return 2 * step(s / 4) + 2 * 3 * step(s / 16)


@pytest.mark.parametrize("layout", ["ring", "bidir_ring", "torus2d", "mesh2x4"])
def test_all_reduce_takes_the_closed_form_time_and_moves_2_n_minus_1_over_n_s_per_chip(
        systolic_bin, tmp_path, layout):
    if layout == "mesh2x4":  # the preset as shipped: bidir_ring over the mesh's 8-chip cycle
        cfg_path, cfg = V5E, yaml.safe_load(V5E.read_text())
    elif layout == "torus2d":
        cfg_path, cfg = preset_with(tmp_path, "torus.yaml", wraparound="true", algorithm="torus")
    else:
        cfg_path, cfg = preset_with(tmp_path, "ring.yaml", topology="ring", dims=8, wraparound="true",
                                    algorithm=layout)
    ici = cfg["ici"]
    dims = [int(d) for d in str(ici["dims"]).split("x")]
    n = 1
    for d in dims:
        n *= d
    assert n == 8
    gbps, lat = ici["link_gbps"], ici["link_latency_ns"]
    wl = tmp_path / "ar.yaml"
    wl.write_text("gemms:\n  - {name: ar, collective: all_reduce, bytes: 256 MiB, dtype: bf16}\n")
    r = run_report("-c", cfg_path, "-w", wl, outdir=tmp_path / "out")

    assert r["system"] == {"chips": n, "topology": ici["topology"], "dims": str(ici["dims"]),
                           "wraparound": ici["wraparound"], "link_gbps": gbps, "link_latency_ns": lat,
                           "algorithm": ici["algorithm"]}
    if layout == "torus2d":
        formula = torus_2x4_all_reduce_seconds(S, gbps, lat)
    else:
        formula = ring_all_reduce_seconds(n, S, gbps, lat, 1 if layout == "ring" else 2)
    t = r["totals"]
    [c] = r["collectives"]
    assert (c["name"], c["kind"], c["algorithm"], c["bytes"]) == ("ar", "all_reduce", ici["algorithm"], S)
    # Nothing else runs: the collective is the run, all of it exposed. The VPU's additions
    # (one per reduce-scatter step) are the only thing on top of the formula.
    assert c["cycles"] == t["cycles"] == t["comm_cycles"] == t["exposed_comm_cycles"]
    assert t["overlapped_comm_cycles"] == 0 and t["macs"] == 0
    assert t["seconds"] == pytest.approx(t["cycles"] / (cfg["clock_mhz"] * 1e6), rel=1e-12)
    assert cycles_of(formula, cfg) <= c["cycles"] <= 1.05 * cycles_of(formula, cfg)
    assert formula <= t["seconds"] <= 1.05 * formula

    # Conservation: every chip sends 2(N-1)/N S (each algorithm sends its share of each step
    # to a neighbour), every message crosses exactly one link.
    per_chip = 2 * (n - 1) * S // n
    assert [ch["ici_bytes_sent"] for ch in r["chips"]] == [per_chip] * n
    assert t["ici_bytes_sent"] == n * per_chip
    assert sum(l["bytes"] for l in r["links"]) == t["ici_link_bytes"] == n * per_chip
    if ici["wraparound"]:
        assert len(r["links"]) == n * 2 * sum(1 for d in dims if d > 1)
    else:  # a 2x4 mesh: 2 (k - 1) links per line of k, 4 lines of 2 and 2 lines of 4
        assert len(r["links"]) == 4 * 2 * 1 + 2 * 2 * 3
    if layout == "ring":
        # One way round: the "+" link out of every chip carries all of it.
        for l in r["links"]:
            assert l["bytes"] == (per_chip if l["name"].endswith("+") else 0), l
    elif layout == "bidir_ring":
        assert {l["bytes"] for l in r["links"]} == {per_chip // 2}
    elif layout == "mesh2x4":  # the cycle's 8 links each way carry half each; the 4 others idle
        assert sorted(l["bytes"] for l in r["links"]) == [0] * 4 + [per_chip // 2] * 16
    for l in r["links"]:
        assert 0 <= l["utilization"] <= 1
    # ICI energy: energy.ici_pj_per_byte (10 pJ by default, docs/energy.md) per link-byte,
    # each link's counted by the chip that drives it.
    e = r["energy_pj"]
    assert e["by_component"]["ici"] == pytest.approx(10.0 * t["ici_link_bytes"])
    for i, ch in enumerate(r["chips"]):
        driven = sum(l["bytes"] for l in r["links"] if l["from"] == i)
        assert ch["energy_pj"]["by_component"]["ici"] == pytest.approx(10.0 * driven)
    assert e["total"] == pytest.approx(sum(ch["energy_pj"]["total"] for ch in r["chips"]))
    # The system's energy is the chips' added up, field by field.
    assert e["total"] == pytest.approx(sum(e["by_component"].values()))
    for component, pj in e["by_component"].items():
        assert pj == pytest.approx(sum(ch["energy_pj"]["by_component"][component] for ch in r["chips"]))
    if layout == "ring":
        # Like every dynamic energy, the links' scale with energy.tech_scale.
        scaled = run_report("-c", cfg_path, "-w", wl, "--set", "energy.tech_scale=0.25", outdir=tmp_path / "scaled")
        assert scaled["energy_pj"]["by_component"]["ici"] == pytest.approx(0.25 * e["by_component"]["ici"])
        assert scaled["totals"]["cycles"] == t["cycles"]


# ---- 2. tensor parallelism: every MAC once, the Megatron collectives -----------------------

# Llama-2-70B (traces/models/llama2-70b.yaml): d 8192, 64 heads of 128, 8 KV heads, SwiGLU
# FFN 28672, vocabulary 32000. Prefill at [1, T], bf16.
D, H, KV, HD, FF, VOCAB, T = 8192, 64, 8, 128, 28672, 32000, 256


def llama_prefill_macs(layers):
    qkv = T * D * (H + 2 * KV) * HD
    out = T * D * D
    ffn = 3 * T * D * FF
    attention = 2 * H * T * T * HD  # scores and context, every query row against every key
    lm_head = D * VOCAB            # the last token only
    return layers * (qkv + out + ffn + attention) + lm_head


def test_tp8_splits_every_mac_once_and_moves_the_megatron_collectives(systolic_bin, tmp_path):
    layers, n = 2, 8
    model = model_with(tmp_path, "llama2-70b.yaml", layers=layers)
    tp = run_report("-c", V5E, "-w", model, "--bucket", f"1x{T}", "--tp", n, outdir=tmp_path / "tp")
    one = run_report("-c", V5E, "--set", "ici.topology=none", "--set", "ici.dims=1", "-w", model,
                     "--bucket", f"1x{T}", outdir=tmp_path / "one")
    assert one["system"]["chips"] == 1 and tp["system"]["chips"] == n

    # MACs: the closed form, the single chip, the sum over chips, each chip an eighth.
    macs = llama_prefill_macs(layers)
    assert one["totals"]["macs"] == macs
    assert tp["totals"]["macs"] == sum(c["totals"]["macs"] for c in tp["chips"]) == macs
    assert [c["totals"]["macs"] for c in tp["chips"]] == [macs // n] * n
    for kind in ("matmul", "attention"):
        assert sum(c["op_kinds"][kind]["macs"] for c in tp["chips"]) == one["chips"][0]["op_kinds"][kind]["macs"]
    # Faster than one chip, but not more than n times.
    assert one["totals"]["cycles"] / n < tp["totals"]["cycles"] < one["totals"]["cycles"]

    # Collectives: per layer an all-gather of the [T, d] activations before attention and
    # before the FFN, a reduce-scatter after out_proj and after ffn_down; one all-gather of the
    # last token's row before the LM head.
    act = T * D * 2
    expected = [("layer.attn_norm.all_gather", "all_gather", act, layers),
                ("layer.out_proj.reduce_scatter", "reduce_scatter", act, layers),
                ("layer.ffn_norm.all_gather", "all_gather", act, layers),
                ("layer.ffn_down.reduce_scatter", "reduce_scatter", act, layers),
                ("head.final_norm.all_gather", "all_gather", D * 2, 1)]
    assert [(c["name"], c["kind"], c["bytes"]) for c in tp["collectives"]] == [e[:3] for e in expected]
    algorithm = yaml.safe_load(V5E.read_text())["ici"]["algorithm"]
    for c in tp["collectives"]:
        assert c["algorithm"] == algorithm
    for chip in tp["chips"]:
        repeats = {l["name"]: l["repeat"] for l in chip["layers"] if l["kind"] == "collective"}
        assert repeats == {e[0]: e[3] for e in expected}
    # Every chip sends (N-1)/N of each all-gather's and reduce-scatter's bytes, each message
    # one hop (bidir_ring around the mesh's comb only talks to neighbours).
    sent = sum((n - 1) * b // n * rep for _, _, b, rep in expected)
    assert [c["ici_bytes_sent"] for c in tp["chips"]] == [sent] * n
    t = tp["totals"]
    assert t["ici_bytes_sent"] == t["ici_link_bytes"] == n * sent

    # Communication time: the sum over the collectives; the exposed part is what no MXU
    # covered, the rest overlapped.
    assert t["comm_cycles"] == sum(c["cycles"] for c in tp["collectives"])
    assert t["exposed_comm_cycles"] == sum(c["exposed_cycles"] for c in tp["collectives"])
    assert t["exposed_comm_cycles"] + t["overlapped_comm_cycles"] == t["comm_cycles"]
    for c in tp["collectives"]:
        assert 0 < c["exposed_cycles"] <= c["cycles"] < t["cycles"]
    assert t["comm_cycles"] < t["cycles"]


@pytest.mark.parametrize("wiring", ["mesh", "torus"])
def test_tp8_collective_times_match_the_closed_forms(systolic_bin, tmp_path, wiring):
    # One layer: each collective runs once, half an all-reduce. On the preset's 2x4 mesh,
    # bidir_ring goes around the comb: 7 steps of S/16 each way. On the 2x4 as a torus with the
    # torus algorithm, an all-gather of S (each chip contributing S/8) goes along y (4 chips,
    # 3 steps of S/16 each way) then x (one step of S/4 each way); a reduce-scatter retraces
    # it, plus its VPU additions. The formulas time the links alone: ideal memory. With the
    # real memory system every message is also read from one HBM and written to another,
    # never faster.
    model = model_with(tmp_path, "llama2-70b.yaml", layers=1)
    what_if = ["--set", "ici.wraparound=true", "--set", "ici.algorithm=torus"] if wiring == "torus" else []
    # Whole collectives (--overlap off): decomposed ones span their matmuls (tests/py/test_mesh.py).
    whole = ["--overlap", "off"]
    r = run_report("-c", V5E, "-w", model, "--bucket", f"1x{T}", "--tp", 8, "--set", "memory.ideal=true", *what_if,
                   *whole, outdir=tmp_path / "o")
    real = run_report("-c", V5E, "-w", model, "--bucket", f"1x{T}", "--tp", 8, *what_if, *whole, outdir=tmp_path / "r")
    cfg = yaml.safe_load(V5E.read_text())
    gbps, lat = cfg["ici"]["link_gbps"], cfg["ici"]["link_latency_ns"]
    for c, c_real in zip(r["collectives"], real["collectives"]):
        all_reduce = (torus_2x4_all_reduce_seconds(c["bytes"], gbps, lat) if wiring == "torus"
                      else ring_all_reduce_seconds(8, c["bytes"], gbps, lat, 2))
        formula = cycles_of(all_reduce / 2, cfg)
        assert formula <= c["cycles"] <= 1.05 * formula, c
        assert c_real["name"] == c["name"] and c_real["cycles"] >= c["cycles"]


def test_exposed_communication_grows_with_the_layers(systolic_bin, tmp_path):
    # Layer L+1's all-gather needs layer L's output, so with the layers run one after another
    # each layer exposes what a single layer does (whole collectives: --overlap off).
    def per_layer_exposed(layers):
        (tmp_path / f"L{layers}").mkdir()
        model = model_with(tmp_path / f"L{layers}", "llama2-70b.yaml", layers=layers)
        r = run_report("-c", V5E, "-w", model, "--bucket", f"1x{T}", "--tp", 8, "--overlap", "off",
                       outdir=tmp_path / f"o{layers}")
        return sum(c["exposed_cycles"] for c in r["collectives"] if c["name"].startswith("layer."))
    one, two = per_layer_exposed(1), per_layer_exposed(2)
    assert two >= 0.99 * 2 * one


# ---- 3. bad inputs --------------------------------------------------------------------------

def run_refused(tmp_path, model, args, needle):
    """`run` of `model` at 1x128 on the 8-chip v5e with `args`: exit 2 naming the culprit
    (`needle`), nothing on stdout, no report."""
    out = tmp_path / "out"
    proc = run_cli("run", "-c", V5E, "-w", MODELS / model, "--bucket", "1x128", *args, "-o", out, check=False)
    assert_refused(proc, needle, out / "report.json")
    assert proc.stdout == ""


@pytest.mark.parametrize("setting,needle", [
    # The topology needs as many dimensions as it has; each dimension at least one chip.
    ("ici.dims=8", "key 'ici.dims': expected 2 dimensions for torus2d (e.g. 2x4), got '8'"),
    ("ici.topology=torus3d", "key 'ici.dims': expected 3 dimensions for torus3d"),
    ("ici.dims=0x8", "key 'ici.dims': expected chip counts in [1, 4096] per dimension"),
    ("ici.link_gbps=0", "key 'ici.link_gbps': expected a bandwidth > 0 GB/s, got 0"),
    ("ici.link_gbs=50", "unknown key 'ici.link_gbs' (did you mean 'ici.link_gbps'?)"),
    ("ici.ports=2", "key 'ici.ports': expected at least 4"),
])
def test_bad_interconnect_keys_exit_2_naming_the_key(systolic_bin, tmp_path, setting, needle):
    run_refused(tmp_path, "llama2-70b.yaml", ["--set", setting], needle)


@pytest.mark.parametrize("model,args,needle", [
    ("llama2-70b.yaml", ["--tp", "3"], "--tp 3: expected 1 or the system's chip count (8)"),
    ("llama2-70b.yaml", ["--tp", "16"], "--tp 16: expected 1 or the system's chip count (8)"),
    ("gpt2.yaml", ["--tp", "8"], "--tp 8 does not divide heads = 12"),
    # 16 chips: 64 query heads divide, Llama-2-70B's 8 KV heads do not.
    ("llama2-70b.yaml", ["--set", "ici.dims=4x4", "--tp", "16"], "--tp 16 does not divide kv_heads = 8"),
    ("llama2-70b.yaml", ["--tp", "8", "--ep", "8"], "--ep 8: model 'llama2-70b' has no experts"),
    ("deepseek-v3-moe.yaml", ["--tp", "8", "--ep", "4"], "--ep 4: expected 1 or the system's chip count (8)"),
    ("deepseek-v3-moe.yaml", ["--tp", "8", "--ep", "8", "--routing", "zipf"], "zipf not in {uniform,skewed}"),
    # Parallelism meshes (tests/py/test_mesh.py runs the good ones).
    ("llama2-70b.yaml", ["--mesh", "dp=2,tp=2"], "--mesh 'dp=2,tp=2': tp x dp x pp = 4, expected the system's chip count 8 (ici.dims 2x4)"),
    ("llama2-70b.yaml", ["--mesh", "dq=2,tp=4"], "unknown key 'dq': expected tp, dp, pp or ep (did you mean 'dp'?)"),
    ("llama2-70b.yaml", ["--mesh", "tp=4@x,dp=2"], "tp groups of 4 chips do not tile 2x4"),
    ("llama2-70b.yaml", ["--mesh", "dp=8"], "the batch B = 1 of --bucket 1x128 is not a multiple of dp x micro-batches = 8"),
    ("llama2-70b.yaml", ["--mesh", "tp=8", "--micro-batches", "2"], "--micro-batches 2: expected 1 without a pipeline"),
    ("llama2-70b.yaml", ["--mesh", "tp=8", "--tp", "8"], "expected one or the other"),
    ("llama2-70b.yaml", ["--mesh", "tp=8,ep=8"], "ep=8: model 'llama2-70b' has no experts"),
    ("gpt2.yaml", ["--mesh", "pp=8"], "gpt2: --mesh pp=8 does not divide layers = 12"),
    ("gpt2.yaml", ["--mesh", "tp=8"], "gpt2: --mesh tp=8 does not divide heads = 12"),
    ("deepseek-v3-moe.yaml", ["--mesh", "tp=8,ep=16"], "ep=16 does not divide dp x tp = 8"),
    ("llama2-70b.yaml", ["--overlap", "maybe"], "--overlap: maybe not in {on,off}"),
])
def test_bad_multichip_inputs_exit_2_naming_the_culprit(systolic_bin, tmp_path, model, args, needle):
    run_refused(tmp_path, model, args, needle)


def test_unknown_ici_key_in_a_config_file_names_its_line(systolic_bin, tmp_path):
    text = V5E.read_text()
    cfg = tmp_path / "typo.yaml"
    cfg.write_text(re.sub(r"^  link_gbps:", "  link_gbs:", text, flags=re.M))
    line = 1 + cfg.read_text().splitlines().index(
        next(l for l in cfg.read_text().splitlines() if l.startswith("  link_gbs:")))
    wl = tmp_path / "ar.yaml"
    wl.write_text("gemms:\n  - {name: ar, collective: all_reduce, bytes: 1 MiB}\n")
    proc = run_cli("run", "-c", cfg, "-w", wl, "-o", tmp_path / "out", check=False)
    assert proc.returncode == 2
    assert f"typo.yaml:{line}: unknown key 'ici.link_gbs' (did you mean 'ici.link_gbps'?)" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out" / "report.json").exists()
    # A collective on a one-chip config says which keys make a system.
    proc = run_cli("run", "-c", REPO / "configs" / "tpu-v4i.yaml", "-w", wl, "-o", tmp_path / "out", check=False)
    assert proc.returncode == 2 and "ici.topology is none" in proc.stderr
    assert not (tmp_path / "out" / "report.json").exists()


# ---- 4. the system timeline -----------------------------------------------------------------

def test_system_timeline_has_a_process_per_chip_and_spans_the_run(systolic_bin, tmp_path):
    n = 8
    model = model_with(tmp_path, "llama2-70b.yaml", layers=2)
    tl_path = tmp_path / "tl.json"
    r = run_report("-c", V5E, "-w", model, "--bucket", f"1x{T}", "--tp", n, "--timeline", tl_path,
                   outdir=tmp_path / "out")
    tl = json.loads(tl_path.read_text())
    events = tl["traceEvents"]
    assert {e["ph"] for e in events} <= {"M", "X", "C", "s", "f"}

    procs = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert procs == {i: f"chip {i}" for i in range(n)}
    assert sum(1 for e in events if e["ph"] == "M" and e["name"] == "process_name") == n
    tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
              if e["ph"] == "M" and e["name"] == "thread_name"}
    slices = {}
    for e in events:
        if e["ph"] == "X":
            assert (e["pid"], e["tid"]) in tracks, f"slice on an unknown track: {e}"
            assert isinstance(e["ts"], int) and isinstance(e["dur"], int) and e["dur"] >= 0
            slices.setdefault((e["pid"], e["tid"]), []).append(e)
        elif e["ph"] != "M":
            assert e["pid"] in procs
    # No two slices overlap on one track (a chip's engine runs one instruction at a time).
    for key, s in slices.items():
        s.sort(key=lambda e: e["ts"])
        for a, b in zip(s, s[1:]):
            assert a["ts"] + a["dur"] <= b["ts"], f"overlap on chip {key[0]} {tracks[key]}: {a} / {b}"
    # Each chip's tracks are its engines, with their instructions and busy cycles.
    for chip in r["chips"]:
        i = chip["chip"]
        mine = {name: slices.get((pid, tid), []) for (pid, tid), name in tracks.items() if pid == i}
        assert sorted(mine) == sorted(e["name"] for e in chip["engines"])
        for engine in chip["engines"]:
            work = [e for e in mine[engine["name"]] if e["cat"] != "stall"]
            assert len(work) == engine["instructions"]
            assert sum(e["dur"] for e in work) == engine["busy_cycles"]
        # Every collective shows on the chip's ICI track; its send slices carry the bytes the
        # chip sent, message by message, and the VPU's slices their op's shape and traffic.
        sends = [e for e in mine["ici0"] if e["cat"] != "stall"]
        assert {e["name"] for e in sends} == {c["name"] for c in r["collectives"]}
        assert all(e["cat"] == e["args"]["op"] == "send" for e in sends)
        assert sum(m["bytes"] for e in sends for m in e["args"]["messages"]) == chip["ici_bytes_sent"]
        assert all(m["to_chip"] != i for e in sends for m in e["args"]["messages"])
        for e in mine["vpu0"]:
            if e["cat"] != "stall":
                a = e["args"]
                assert e["cat"] == a["op"] == "vector" and a["bytes"] == a["bytes_read"] + a["bytes_written"] > 0
    # The span is the run.
    starts = [e["ts"] for s in slices.values() for e in s]
    ends = [e["ts"] + e["dur"] for s in slices.values() for e in s]
    assert min(starts) == 0 and max(ends) == r["totals"]["cycles"]
    assert tl["otherData"]["total_cycles"] == r["totals"]["cycles"] and tl["otherData"]["chips"] == n
    # Dependency arrows: each id starts once and finishes once, across all chips.
    for ph in "sf":
        ids = [e["id"] for e in events if e["ph"] == ph]
        assert len(ids) == len(set(ids))
    assert {e["id"] for e in events if e["ph"] == "s"} == {e["id"] for e in events if e["ph"] == "f"}


# ---- 5. the TP crossover script -------------------------------------------------------------

def test_tp_crossover_script_turns_communication_bound_between_8_and_16(systolic_bin):
    # scripts/tp_crossover.sh builds first; the .py is the part that runs the simulator.
    # With ideal memory the closed forms hold; the real memory system is never faster.
    def table(*extra):
        proc = subprocess.run(["/usr/bin/python3", REPO / "scripts" / "tp_crossover.py", "--systolic", SYSTOLIC, *extra],
                              capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE"))
        assert proc.returncode == 0, proc.stderr
        rows = {}
        for line in proc.stdout.splitlines():
            m = re.fullmatch(r"\s*(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(compute|communication)", line)
            if m:
                rows[int(m[1])] = (*map(float, m.group(2, 3, 4, 5)), m[6])
        assert sorted(rows) == [1, 2, 4, 8, 16, 32]
        return proc, rows
    proc, rows = table("--ideal-memory")
    assert "what-if" in proc.stdout
    real_proc, real = table()
    for y in rows:
        assert real[y][0] >= rows[y][0] and real[y][1] >= rows[y][1] and real[y][3] >= rows[y][3]
    assert real[8][4] == "compute" and real[16][4] == "communication"

    # The script's defaults (Llama-2-70B's MLP, B = 2048 tokens) on tpu-v5e-8's chip and links.
    cfg = yaml.safe_load(V5E.read_text())
    B, Dm, F = 2048, 8192, 28672
    mhz, mxu = cfg["clock_mhz"], cfg["mxu"]
    R, C, count = mxu["rows"], mxu["cols"], mxu["count"]
    link = cfg["ici"]["link_gbps"] * 1e9
    lat = cfg["ici"]["link_latency_ns"] * 1e-3  # us
    flops = R * C * count * 2 * mhz * 1e6
    predicted = float(re.search(r"predicted crossover Y = F \* W / C = ([\d.]+)", proc.stdout)[1])
    assert predicted == pytest.approx(F * 2 * link / flops, abs=0.05)
    assert 8 < predicted < 16

    def compute_us(y):
        # Each GEMM [B, k] x [k, n]: k/R row folds, n/C column folds split over the MXUs (the
        # busiest takes the ceiling), B rows streamed per fold.
        folds = lambda k, n: (k // R) * -(-(n // C) // count)
        return (folds(Dm, F // y) + folds(F // y, Dm)) * B / mhz

    def comm_us(y):
        # All-gather and reduce-scatter of B*D bf16 on a bidirectional ring: Y-1 steps each of
        # (B*D*2 / Y) / 2 bytes per direction, one hop each.
        return 2 * (y - 1) * (B * Dm * 2 / y / 2 / link * 1e6 + lat)

    for y, (compute, comm, exposed, total, bound) in rows.items():
        # The compiled weight and row tiles each fill and drain the array: a little over.
        assert compute_us(y) <= compute <= 1.10 * compute_us(y), y
        assert comm_us(y) - 0.1 <= comm <= 1.05 * comm_us(y), y
        assert 0 <= exposed <= comm
        assert total == pytest.approx(compute + exposed, abs=0.2)
        assert bound == ("communication" if comm > compute else "compute")
    assert rows[8][4] == "compute" and rows[16][4] == "communication"
    assert rows[1][1] == 0


# ---- 6. expert parallelism --------------------------------------------------------------------

# A DeepSeek-V3-like MoE (traces/models/deepseek-v3-moe.yaml) cut to one dense and two MoE
# layers: 256 experts of 2048, top-8, d = 7168; over 8 chips each owns 32 experts.
DS_D, DS_EXPERTS, DS_TOPK, DS_FF = 7168, 256, 8, 2048


@pytest.fixture(scope="module")
def moe_model(tmp_path_factory):
    return model_with(tmp_path_factory.mktemp("moe"), "deepseek-v3-moe.yaml", layers=3, dense_layers=1)


def ep_args(moe_model, routing, seed=7):
    return ["-c", V5E, "-w", moe_model, "--bucket", f"1x{T}", "--tp", "8", "--ep", "8",
            "--routing", routing, "--routing-seed", str(seed)]


def test_ep_skewed_routing_is_slower_all_to_all_present_and_runs_are_deterministic(
        systolic_bin, tmp_path, moe_model):
    uni = run_report(*ep_args(moe_model, "uniform"), outdir=tmp_path / "u")
    skew = run_report(*ep_args(moe_model, "skewed"), outdir=tmp_path / "s")
    run_cli("run", *ep_args(moe_model, "skewed"), "-o", tmp_path / "s2", "-q")
    other_seed = run_report(*ep_args(moe_model, "skewed", seed=8), outdir=tmp_path / "s3")

    for r in (uni, skew):
        kinds = {c["name"]: (c["kind"], c["algorithm"]) for c in r["collectives"]}
        assert kinds["moe_layer.dispatch"] == kinds["moe_layer.combine"] == ("all_to_all", "direct")
        assert {k for k, _ in kinds.values()} == {"all_gather", "reduce_scatter", "all_to_all"}
        for chip in r["chips"]:
            a2a = [l for l in chip["layers"] if l["name"] in ("moe_layer.dispatch", "moe_layer.combine")]
            assert [l["repeat"] for l in a2a] == [2, 2]  # once per MoE layer
        # The shared expert needs no routing: it computes while the dispatch moves the routed
        # tokens, so part of the dispatch is hidden. Nothing can run beside the combine (the
        # next op adds its results), nor beside the TP collectives.
        by_name = {c["name"]: c for c in r["collectives"]}
        dispatch, combine = by_name["moe_layer.dispatch"], by_name["moe_layer.combine"]
        assert dispatch["exposed_cycles"] < 0.9 * dispatch["cycles"]
        # With overlap (the default) the next layer's first qkv_proj block, the rows this chip
        # holds, needs no all-gather step: it starts once the combine has landed here, while this
        # chip's own combine messages may still be landing elsewhere.
        assert 0.5 * combine["cycles"] < combine["exposed_cycles"] <= combine["cycles"]
        assert r["totals"]["overlapped_comm_cycles"] > 0
        assert r["totals"]["exposed_comm_cycles"] + r["totals"]["overlapped_comm_cycles"] == r["totals"]["comm_cycles"]
    # Whole collectives: nothing runs beside the combine at all.
    whole = run_report(*ep_args(moe_model, "skewed"), "--overlap", "off", outdir=tmp_path / "w")
    combine = {c["name"]: c for c in whole["collectives"]}["moe_layer.combine"]
    assert combine["exposed_cycles"] == combine["cycles"]
    # Uniform: every expert gets T*k/E = 8 tokens, every chip the same work and traffic.
    assert len({c["totals"]["cycles"] for c in uni["chips"]}) == 1
    assert len({c["ici_bytes_sent"] for c in uni["chips"]}) == 1
    expert_macs = lambda r: sum(l["macs"] for c in r["chips"] for l in c["layers"]
                                if l["name"].startswith("moe_layer.expert_"))
    assert expert_macs(uni) == 2 * T * DS_TOPK * 3 * DS_D * DS_FF  # 2 MoE layers, every assignment once
    # Skewed (Zipf over the experts): the chips holding the popular experts take longer, so the
    # system does.
    assert skew["totals"]["cycles"] > 1.2 * uni["totals"]["cycles"]
    # Same tokens, same useful expert work; skew only adds padding (each local expert runs the
    # busiest one's rows), which macs_issued counts and macs does not.
    assert expert_macs(skew) == expert_macs(uni)
    issued = lambda r: sum(l["macs_issued"] for c in r["chips"] for l in c["layers"]
                           if l["name"].startswith("moe_layer.expert_"))
    assert issued(uni) == expert_macs(uni) and issued(skew) > 2 * expert_macs(skew)
    assert len({c["ici_bytes_sent"] for c in skew["chips"]}) > 1
    # The seed picks which experts are popular: the same seed gives the same bytes, another
    # seed another run.
    assert (tmp_path / "s" / "report.json").read_bytes() == (tmp_path / "s2" / "report.json").read_bytes()
    assert other_seed["chips"] != skew["chips"]


def test_python_run_takes_the_cli_s_routing_options_through_the_same_pipeline(systolic_bin, tmp_path, moe_model):
    # run() once lacked skew= and routing_seed=; now both reach the sharding as --skew and
    # --routing-seed do, and the report is the CLI's.
    systolic = require_python_module()
    cli = run_report(*ep_args(moe_model, "skewed", seed=8), "--skew", "1.5", outdir=tmp_path / "cli")
    py = systolic.run(V5E, moe_model, bucket=f"1x{T}", tp=8, ep=8, routing="skewed", skew=1.5, routing_seed=8)
    assert py.to_dict() == cli
    default_skew = systolic.run(V5E, moe_model, bucket=f"1x{T}", tp=8, ep=8, routing="skewed", routing_seed=8)
    assert default_skew.to_dict()["chips"] != cli["chips"]
    with pytest.raises(systolic.InputError, match=r"--skew 11: expected a Zipf exponent in \[0, 10\]"):
        systolic.run(V5E, moe_model, bucket=f"1x{T}", tp=8, ep=8, routing="skewed", skew=11)


def chip_sends(moe_model, routing, chip, tmp_path):
    """{collective layer name: {to: bytes}} of one instance, and {layer name: m} of the
    collective layers, from `systolic compile --chip` of that chip's program."""
    trace = tmp_path / f"{routing}{chip}.trace"
    run_cli("compile", *ep_args(moe_model, routing), "--chip", chip, "-o", trace)
    names, sizes, sends = {}, {}, {}
    for line in trace.read_text().splitlines():
        m = re.match(r"layer (\d+) name=(\S+) kind=collective m=(\d+)", line)
        if m:
            names[int(m[1])] = m[2]
            sizes[m[2]] = int(m[3])
        m = re.match(r"\s+send layer=(\d+) (.*)", line)
        if m and names[int(m[1])] in ("moe_layer.dispatch", "moe_layer.combine"):
            per = {}
            for to, b in re.findall(r"msg=(\d+),(\d+),", m[2]):
                per[int(to)] = per.get(int(to), 0) + int(b)
            sends.setdefault(names[int(m[1])], per)  # the first instance (both are alike)
    return sends, sizes


@pytest.mark.parametrize("routing", [
    "uniform",
    "skewed",
])
def test_ep_dispatch_routes_every_assignment_once(systolic_bin, tmp_path, moe_model, routing):
    # Each chip holds T/8 tokens between blocks, each token goes to its top-8 experts: the
    # dispatch buffer (the rows for every chip, this one included) is T/8 * 8 rows of d bf16.
    want = (T // 8) * DS_TOPK * DS_D * 2
    combined = 0
    for chip in range(8):
        _, sizes = chip_sends(moe_model, routing, chip, tmp_path)
        assert sizes["moe_layer.dispatch"] == want, chip
        combined += sizes["moe_layer.combine"]
    # Every row comes back to the chip it came from: the combines add up to the dispatches
    # (per chip they differ under skew: a popular chip returns more than it sent).
    assert combined == 8 * want


@pytest.mark.parametrize("routing", [
    "uniform",
    "skewed",
])
def test_ep_combine_returns_what_dispatch_brought(systolic_bin, tmp_path, moe_model, routing):
    # Chip i's experts processed the rows chip j sent it; combine sends those results back:
    # combine[i][j] == dispatch[j][i] for every pair of chips.
    dispatch, combine = {}, {}
    for chip in range(8):
        sends, _ = chip_sends(moe_model, routing, chip, tmp_path)
        dispatch[chip], combine[chip] = sends["moe_layer.dispatch"], sends["moe_layer.combine"]
        assert sorted(dispatch[chip]) == [j for j in range(8) if j != chip]
    if routing == "uniform":
        row = DS_D * 2
        assert {b for d in dispatch.values() for b in d.values()} == {(T // 8) * DS_TOPK // 8 * row}
    for i in range(8):
        for j in range(8):
            if i != j:
                assert combine[i][j] == dispatch[j][i], (i, j)
