"""Design-space sweeps (docs/sweeps.md, "Constraints and the Pareto front"; docs/design-space.md):
the Pareto front against one worked by hand, constraints, sizes as numbers, workload keys as
axes, the spec checked before anything runs (exit 2, nothing written), and honest failure
counts across runs."""
import os
import subprocess
import sys

import pytest

from conftest import PYDIR, REPO, SYSTOLIC as CLI, assert_refused, require_python_module

systolic = require_python_module()
import systolic.sweep  # noqa: E402
from systolic import pareto  # noqa: E402

TINY = REPO / "configs" / "tiny-4x4.yaml"
V4I = REPO / "configs" / "tpu-v4i.yaml"
EXAMPLE = REPO / "traces" / "gemms" / "example.yaml"
GPT2 = REPO / "traces" / "models" / "gpt2.yaml"
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(
    [str(PYDIR)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]),
    SC_COPYRIGHT_MESSAGE="DISABLE")


def sweep_cli(*args):
    return subprocess.run([sys.executable, "-m", "systolic.sweep", *map(str, args)],
                          capture_output=True, text=True, env=ENV, timeout=300)


def test_pareto_front_matches_a_hand_worked_one():
    # (throughput: max, area: min). A (10, 100) and B (8, 50) trade off; C (9, 120) is worse
    # than A in both; D (4, 50) ties B's area with less throughput; E (12, 200) is the fastest;
    # F = A repeated is not dominated by its twin. Front: A, B, E, F.
    points = [(10, 100), (8, 50), (9, 120), (4, 50), (12, 200), (10, 100)]
    assert pareto.pareto_mask(points, ["max", "min"]) == [True, True, False, False, True, True]
    # A third objective (power: min) rescues C if it is the coolest.
    three = [(10, 100, 50), (8, 50, 50), (9, 120, 10), (4, 50, 60), (12, 200, 80)]
    assert pareto.pareto_mask(three, ["max", "min", "min"]) == [True, True, True, False, True]


def test_short_names_resolve_to_columns_and_typos_are_refused():
    cols = ["mxu.rows", "area_mm2.chip", "area_mm2.total", "efficiency.tokens_per_s", "power_w.total"]
    assert pareto.resolve_column("area_mm2", cols) == "area_mm2.total"
    assert pareto.resolve_column("tokens_per_s", cols) == "efficiency.tokens_per_s"
    with pytest.raises(pareto.ParetoError, match="did you mean 'area_mm2'"):
        pareto.resolve_column("area_mm", cols)
    c = pareto.parse_constraint("power_w <= 175", cols)
    assert (c.column, c.op, c.value) == ("power_w.total", "<=", 175.0)
    assert c.holds(175.0) and not c.holds(175.1) and not c.holds(None)
    with pytest.raises(pareto.ParetoError, match="direction 'up' is not max or min"):
        pareto.parse_objectives("tokens_per_s:up,area_mm2:min", cols)
    with pytest.raises(pareto.ParetoError, match="two or three objectives"):
        pareto.parse_objectives(["tokens_per_s:max"], cols)


SPEC = f"""name: dse
config: {TINY}
workload: {EXAMPLE}
grid:
  sram.vmem_bytes: [16 KiB, 4 KiB, 64 KiB]
  mxu.rows: [4, 8]
metrics: [totals.seconds, area_mm2.*, power_w.*]
"""


def test_sizes_are_numbers_with_a_mib_column_and_the_front_is_marked(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    frame = systolic.sweep(spec, tmp_path / "out", jobs=1, progress=False,
                           constraints=["area_mm2 <= 1000"], pareto="totals.seconds:min,area_mm2:min")
    assert frame.attrs["failed"] == 0 and set(frame["status"]) == {"ok"}
    assert sorted(frame["sram.vmem_bytes"].unique()) == [4096, 16384, 65536]  # numbers, not "4 KiB"
    assert list(frame["sram.vmem_mib"][::2]) == [16 / 1024, 4 / 1024, 64 / 1024]  # rows vary fastest
    # Independent of the model's terms: the front is what the hand rule says of the table.
    t, a = frame["totals.seconds"], frame["area_mm2.total"]
    for i in range(len(frame)):
        dominated = any(t[j] <= t[i] and a[j] <= a[i] and (t[j] < t[i] or a[j] < a[i])
                        for j in range(len(frame)))
        assert frame["pareto"][i] == (not dominated)
    assert frame["feasible"].all()
    csv = (tmp_path / "out" / "results.csv").read_text().splitlines()
    assert csv[0].split(",")[4:6] == ["sram.vmem_bytes", "sram.vmem_mib"] and ",16384," in csv[1]


LIST_MIXED = "list:\n  - {sram.accumulators_bytes: 64 KiB}\n  - {sram.accumulators_bytes: 131072}\n"


@pytest.mark.parametrize("old, new, message, line", [
    ("totals.seconds", "totals.secnds", "metric 'totals.secnds': totals has no 'secnds' (did you mean 'seconds'?)", 7),
    ("[4, 8]", "[4, '8']", "grid 'mxu.rows': mixed types (numbers and strings)", 6),
    ("[4, 8]", "[]", "grid 'mxu.rows': expected a non-empty list of values", 6),
    ("metrics:", "list: []\nmetrics:", "'list': expected a non-empty list of {key: value} maps", 7),
    ("metrics:", LIST_MIXED + "metrics:", "list 'sram.accumulators_bytes': mixed types (a string in entry 1, "
     "a number in entry 2)", 9),
])
def test_bad_spec_stops_before_anything_runs(tmp_path, old, new, message, line):
    text = SPEC.replace(old, new)
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    r = sweep_cli(spec, "-o", tmp_path / "out", "-q")
    assert_refused(r, f"spec.yaml:{line}: {message}", tmp_path / "out")


@pytest.mark.parametrize("flag, message", [
    (["--pareto", "totals.seconds:fastest,area_mm2:min"], "direction 'fastest' is not max or min"),
    (["--pareto", "tokens:max,area_mm2:min"], "no results column 'tokens'"),
    (["--constraint", "power_watts <= 175"], "no results column 'power_watts'"),
    (["--constraint", "area_mm2 400"], "expected NAME OP NUMBER"),
])
def test_bad_objective_or_constraint_exits_2_writing_nothing(tmp_path, flag, message):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    r = sweep_cli(spec, "-o", tmp_path / "out", "-q", *flag)
    assert_refused(r, message, tmp_path / "out")


def test_earlier_failures_are_counted_and_named(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.replace("mxu.rows: [4, 8]", "mxu.rows: [0, 4]"))
    first = systolic.sweep(spec, tmp_path / "out", jobs=1, progress=False)
    assert first.attrs["failed"] == 3 and first.attrs["failed_now"] == 3
    again = systolic.sweep(spec, tmp_path / "out", jobs=1, progress=False)
    # Not re-run, but not hidden either: 3 failed in all, recorded by the earlier run.
    assert again.attrs["ran"] == 0 and again.attrs["failed"] == 3 and again.attrs["failed_earlier"] == 3
    r = sweep_cli(spec, "-o", tmp_path / "out")
    assert r.returncode == 3 and "recorded by an earlier run and not re-run: --retry-failed" in r.stderr


def test_workload_keys_are_axes(tmp_path):
    # GPT-2 prefill at two buckets and decode: tokens = B x S for a prefill, B for a decode step.
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""config: {V4I}
workload: {GPT2}
grid:
  bucket: [1x64, 2x64]
  phase: [prefill, decode]
metrics: [efficiency.tokens, totals.seconds]
""")
    frame = systolic.sweep(spec, tmp_path / "out", jobs=2, progress=False)
    assert set(frame["status"]) == {"ok"}
    got = {(b, p): t for b, p, t in zip(frame["bucket"], frame["phase"], frame["efficiency.tokens"])}
    assert got == {("1x64", "prefill"): 64, ("2x64", "prefill"): 128, ("1x64", "decode"): 1,
                   ("2x64", "decode"): 2}
    assert len(set(frame["hash"])) == 4


def test_pareto_and_energy_plots_from_a_sweep(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.replace("metrics: [", "metrics: [energy_pj.*, "))
    systolic.sweep(spec, tmp_path / "out", jobs=1, progress=False, pareto="totals.seconds:min,area_mm2:min")
    plot = [sys.executable, str(REPO / "scripts" / "plot_sweep.py")]
    for args, png in ((["pareto", tmp_path / "out"], "pareto.png"), (["energy", tmp_path / "out"], "energy.png"),
                      (["heatmap", tmp_path / "out"], "heatmap_totals.seconds.png")):
        proc = subprocess.run(plot + list(map(str, args)), capture_output=True, text=True, env=ENV)
        assert proc.returncode == 0 and (tmp_path / "out" / png).exists(), proc.stderr
    # A sweep without energy metrics: refused, saying what to add.
    other = tmp_path / "other.yaml"
    other.write_text(SPEC)
    systolic.sweep(other, tmp_path / "out2", jobs=1, progress=False)
    proc = subprocess.run(plot + ["energy", str(tmp_path / "out2")], capture_output=True, text=True, env=ENV)
    assert_refused(proc, "add energy_pj.* to the sweep's metrics")


def test_design_space_specs_load():
    # docs/design-space.md's study and its benchmark slice: checked (metrics, constraints,
    # objectives) and expanded without running anything.
    study = systolic.sweep.load_spec(REPO / "traces" / "sweeps" / "design-space.yaml")
    points = systolic.sweep.expand(study)
    assert len(points) == 540
    assert [c.column for c in study.constraints] == ["area_mm2.total", "power_w.total"]
    assert [o.column for o in study.objectives] == ["efficiency.tokens_per_s", "area_mm2.total"]
    bench = systolic.sweep.load_spec(REPO / "traces" / "sweeps" / "bench-design-space.yaml")
    assert len(systolic.sweep.expand(bench)) == 108
    # No what-if: every point's HBM is the stacks it pays PHY area for, 16 GiB and 460.8 GB/s
    # each (HBM2E), and holds the model's largest footprint (12.6 GiB of bf16 weights + 8 GiB of
    # KV cache at 8 x 2048).
    for p in points:
        hbm = p.config["hbm"]
        stacks = hbm["channels"] * hbm["pseudo_channels"] * hbm["bus_bits"] / 1024
        assert stacks in (2, 4) and hbm["capacity_bytes"] == stacks * 16 * 2**30
        assert stacks * 1024 * hbm["data_rate_gbps"] / 8 == pytest.approx(stacks * 460.8)
        assert p.config["energy"]["hbm_static_w"] == 1.5 * stacks
        assert not p.config["memory"]["ideal"]


def test_energy_plot_of_a_pack_report(tmp_path):
    # `systolic pack` keeps each bucket shape's energy (no components): one bar per shape.
    data = REPO / "tests" / "py" / "data"
    subprocess.run([str(CLI), "pack", "-c", TINY, "-m", data / "tiny-lm.yaml",
                    "--requests", data / "tiny-requests.csv", "--buckets", data / "tiny-buckets.yaml",
                    "-o", tmp_path, "-q"], check=True, env=ENV, capture_output=True)
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "plot_sweep.py"), "energy",
                           str(tmp_path / "report.json")], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0 and (tmp_path / "energy.png").exists(), proc.stderr


def test_bad_objective_from_python_raises_writing_nothing(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    with pytest.raises(systolic.InputError, match="direction 'up' is not max or min"):
        systolic.sweep(spec, tmp_path / "out", jobs=1, progress=False, pareto="totals.seconds:up,area_mm2:min")
    with pytest.raises(systolic.InputError, match="no results column 'watts'"):
        systolic.sweep(spec, tmp_path / "out", jobs=1, progress=False, constraints=["watts <= 1"])
    assert not (tmp_path / "out").exists()


def _plot_module():
    import importlib.util
    loader = importlib.util.spec_from_file_location("plot_sweep", REPO / "scripts" / "plot_sweep.py")
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return module


def test_pareto_plot_draws_one_panel_per_front(tmp_path):
    # Two phases of GPT-2 over two array sizes: the sweep keeps one front per phase, and the plot
    # one panel per front, each panel's red points being its phase's front.
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""config: {V4I}
workload: {GPT2}
bucket: 1x64
grid:
  mxu.rows: [64, 128]
  phase: [prefill, decode]
metrics: [efficiency.tokens_per_s, area_mm2.total, power_w.total]
pareto: [tokens_per_s:max, area_mm2:min, power_w:min]
""")
    frame = systolic.sweep(spec, tmp_path / "out", jobs=2, progress=False)
    plot = _plot_module()
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "plot_sweep.py"), "pareto", str(tmp_path / "out")],
                          capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0 and (tmp_path / "out" / "pareto.png").exists(), proc.stderr
    import csv
    rows = list(csv.DictReader(open(tmp_path / "out" / "results.csv")))
    panels = plot.front_panels(rows, plot.spec_of(str(tmp_path / "out")), list(rows[0]))[1]
    assert sorted(k[-1] for k in panels) == ["decode", "prefill"]
    for (_, phase), members in panels.items():
        want = set(frame[(frame["phase"] == phase) & frame["pareto"]]["point"].astype(str))
        assert {r["point"] for r in members if r["pareto"] == "true"} == want


def test_roofline_counts_the_mac_rate_of_each_type(tmp_path):
    # int8 on tpu-v5e packs two products per PE-cycle (mxu.rate.int8 = 2): a compute-bound int8
    # GEMM runs above the bf16 roof, and must sit under the int8 one and under the memory roof.
    gemm = tmp_path / "g.yaml"
    gemm.write_text("gemms:\n  - {name: big, m: 2048, k: 2048, n: 2048, dtype: int8}\n"
                    "  - {name: thin, m: 8, k: 2048, n: 2048, dtype: int8}\n")
    subprocess.run([str(CLI), "run", "-q", "-c", REPO / "configs" / "tpu-v5e.yaml", "-w", gemm,
                    "--set", "mxu.dtype=int8", "-o", tmp_path], check=True, env=ENV, capture_output=True)
    import json
    report = json.loads((tmp_path / "report.json").read_text())
    plot = _plot_module()
    clock = report["config"]["clock_mhz"] * 1e6
    xs, ys, names, dtypes, _ = plot._layer_points(report, clock)
    roofs = plot._compute_roofs(report["config"]["mxu"], clock, dtypes)
    assert list(roofs.values()) == [["int8"]]
    peak = next(iter(roofs))
    mxu = report["config"]["mxu"]
    assert peak == 2 * 2 * mxu["rows"] * mxu["cols"] * mxu["count"] * clock  # rate 2
    bw = plot._find_bandwidth(report["config"])[1] * 1e9
    for x, y, name in zip(xs, ys, names):
        assert y <= peak * (1 + 1e-9) and y <= x * bw * (1 + 1e-9), name
    assert max(ys) > peak / 2, "the compute-bound GEMM should beat the rate-1 roof"
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "plot_sweep.py"), "roofline",
                           str(tmp_path / "report.json")], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0 and (tmp_path / "roofline.png").exists(), proc.stderr
