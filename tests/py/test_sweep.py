"""Sweeps (docs/sweeps.md): a 24-point sweep on 2 worker processes equals one-by-one runs,
results survive a kill and a re-run does only what is missing, failing (and crashing) points
are recorded without stopping the others, and a Dask LocalCluster gives what the local pool
gives.

The build is found through $SYSTOLIC_BUILD (default <repo>/build)."""
import json
import os
import pathlib
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import PYDIR, REPO, SYSTOLIC as CLI, require_python_module

systolic = require_python_module()
import systolic.sweep  # noqa: E402

V4I = REPO / "configs" / "tpu-v4i.yaml"
TINY = REPO / "configs" / "tiny-4x4.yaml"
GPT2 = REPO / "traces" / "gemms" / "gpt2.yaml"
EXAMPLE = REPO / "traces" / "gemms" / "example.yaml"  # small enough for the exact model
EXACT = REPO / "tests" / "py" / "data" / "exact.yaml"  # exact model, any array up to 128x128
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(
    [str(PYDIR)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]),
    SC_COPYRIGHT_MESSAGE="DISABLE")


def write(path, text):
    path.write_text(text)
    return path


def db_rows(outdir):
    conn = sqlite3.connect(outdir / systolic.sweep.DB_NAME)
    conn.row_factory = sqlite3.Row
    rows = {r["hash"]: dict(r) for r in conn.execute("SELECT * FROM points")}
    conn.close()
    return rows


def sweep_cli(*args):
    return subprocess.run([sys.executable, "-m", "systolic.sweep", *map(str, args)],
                          capture_output=True, text=True, env=ENV, timeout=300)


SPEC24 = f"""
name: grid24
config: {V4I}
workload: {GPT2}
grid:
  mxu.rows: [32, 64, 128, 256]
  mxu.cols: [64, 128, 256]
list:
  - {{mxu.dtype: bf16}}
  - {{mxu.dtype: int8, mxu.count: 2}}
metrics: [totals.*, chips.0.layers.qkv_proj.cycles]
"""


@pytest.fixture(scope="module")
def local24(tmp_path_factory):
    d = tmp_path_factory.mktemp("grid24")
    spec = write(d / "spec.yaml", SPEC24)
    start = time.monotonic()
    frame = systolic.sweep(spec, d / "out", jobs=2, progress=False)
    return spec, d / "out", frame, time.monotonic() - start


def test_24_points_on_2_workers_equal_single_runs(local24):
    spec, out, frame, _ = local24
    assert len(frame) == 24 and frame.attrs["ran"] == 24 and frame.attrs["failed"] == 0
    assert set(frame["status"]) == {"ok"}
    rows = db_rows(out)
    assert len(rows) == 24 and {r["status"] for r in rows.values()} == {"ok"}
    workers = {r["worker"] for r in rows.values()}
    assert 1 <= len(workers) <= 2 and all(not w.endswith(f":{os.getpid()}") for w in workers)
    csv_lines = (out / systolic.sweep.CSV_NAME).read_text().splitlines()
    assert len(csv_lines) == 25 and csv_lines[0].startswith("point,hash,status,workload,mxu.rows")
    for p in systolic.sweep.expand(systolic.sweep.load_spec(spec)):
        report = systolic.run(systolic.load_config(V4I, p.overrides), GPT2).to_dict()
        metrics = json.loads(rows[p.hash]["metrics"])
        assert metrics == {**{f"totals.{k}": v for k, v in report["totals"].items()},
                           "chips.0.layers.qkv_proj.cycles": report["chips"][0]["layers"][0]["cycles"]}
        assert json.loads(rows[p.hash]["config"]) == report["config"]
    row = frame[(frame["mxu.rows"] == 64) & (frame["mxu.cols"] == 256) &
                (frame["mxu.dtype"] == "int8")].iloc[0]
    assert row["totals.cycles"] == run_cli_cycles(out.parent / "cli", "mxu.rows=64",
                                                  "mxu.cols=256", "mxu.dtype=int8", "mxu.count=2")


def run_cli_cycles(outdir, *sets):
    if not CLI.exists():
        pytest.skip(f"{CLI} is not built")
    args = [a for s in sets for a in ("--set", s)]
    subprocess.run([str(CLI), "run", "-c", V4I, "-w", GPT2, *args, "-o", outdir, "-q"],
                   check=True, env=ENV)
    return json.loads((outdir / "report.json").read_text())["totals"]["cycles"]


def test_rerun_skips_finished_points(local24):
    spec, out, frame, _ = local24
    before = db_rows(out)
    again = systolic.sweep(spec, out, jobs=2, progress=False)
    assert again.attrs["ran"] == 0 and again.attrs["skipped"] == 24
    assert db_rows(out) == before
    assert again.drop(columns=["run_id"]).equals(frame.drop(columns=["run_id"]))


def test_asking_for_more_metrics_reruns_points(tmp_path):
    spec = {"config": str(V4I), "workload": str(GPT2), "grid": {"mxu.rows": [64, 128]},
            "metrics": ["totals.cycles"]}
    first = systolic.sweep(spec, tmp_path, jobs=1, progress=False)
    assert first.attrs["ran"] == 2 and "chips.0.layers.ffn_up.cycles" not in first.columns
    assert systolic.sweep(spec, tmp_path, jobs=1, progress=False).attrs["ran"] == 0
    spec["metrics"].append("chips.0.layers.ffn_up.cycles")
    more = systolic.sweep(spec, tmp_path, jobs=1, progress=False)
    assert more.attrs["ran"] == 2 and more["chips.0.layers.ffn_up.cycles"].notna().all()
    assert list(more["totals.cycles"]) == list(first["totals.cycles"])


def test_dask_local_cluster_equals_local_pool(local24, tmp_path):
    distributed = pytest.importorskip("distributed")
    spec, out, frame, _ = local24
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None,
                                  silence_logs=40) as cluster:
        dask_frame = systolic.sweep(spec, tmp_path / "dask", dask=cluster.scheduler_address,
                                    progress=False)
    assert dask_frame.attrs["ran"] == 24 and set(dask_frame["status"]) == {"ok"}
    metric_cols = [c for c in frame.columns if c.startswith(("totals.", "chips."))]
    assert metric_cols
    cols = ["hash", "mxu.rows", "mxu.cols", "mxu.dtype"] + metric_cols
    assert dask_frame[cols].equals(frame[cols])
    workers = {r["worker"] for r in db_rows(tmp_path / "dask").values()}
    assert all(not w.endswith(f":{os.getpid()}") for w in workers)


def test_resume_after_kill_runs_only_missing_points(tmp_path):
    wl = write(tmp_path / "slow.yaml", "gemms:\n  - {name: g, m: 16384, k: 64, n: 64}\n")
    spec = write(tmp_path / "spec.yaml", f"""
config: {EXACT}
workload: {wl}
grid: {{mxu.rows: [32, 48, 64], mxu.cols: [32, 48, 64, 80]}}
metrics: [totals.cycles]
""")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "systolic.sweep", str(spec), "-j", "1",
                             "-o", str(out), "-q"], env=ENV, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    db = out / systolic.sweep.DB_NAME
    deadline = time.monotonic() + 120
    done = 0
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists():
            try:
                conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
                done = conn.execute("SELECT COUNT(*) FROM points").fetchone()[0]
                conn.close()
            except sqlite3.OperationalError:
                pass
        if done >= 3:
            break
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its workers, mid-point
    proc.wait()
    first = db_rows(out)
    assert 3 <= len(first) < 12, f"{len(first)} points finished before the kill"
    assert all(r["status"] == "ok" and r["run_id"] == 1 for r in first.values())

    frame = systolic.sweep(spec, out, jobs=2, progress=False)
    assert frame.attrs["skipped"] == len(first)
    assert frame.attrs["ran"] == 12 - len(first)
    rows = db_rows(out)
    assert len(rows) == 12 and {r["status"] for r in rows.values()} == {"ok"}
    assert {h: rows[h] for h in first} == first  # untouched
    assert sum(r["run_id"] == 2 for r in rows.values()) == 12 - len(first)
    conn = sqlite3.connect(db)
    assert [s for (s,) in conn.execute("SELECT status FROM runs ORDER BY run_id")] == \
        ["running", "done"]  # the killed run never got to close itself
    conn.close()
    # A resumed point and a first-run point both equal a direct run.
    for p in systolic.sweep.expand(systolic.sweep.load_spec(spec))[::11]:
        cycles = systolic.run(systolic.load_config(EXACT, p.overrides), wl).cycles
        assert json.loads(rows[p.hash]["metrics"]) == {"totals.cycles": cycles}


def cli_error(*args):
    if not CLI.exists():
        pytest.skip(f"{CLI} is not built")
    proc = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 2
    return proc.stderr.strip().removeprefix("systolic: error: ")


def test_failed_points_are_recorded_and_others_finish(tmp_path):
    bad = write(tmp_path / "bad.yaml", "gemms:\n  - {name: a, m: 4, k: 0, n: 4}\n")
    good = write(tmp_path / "good.yaml", "gemms:\n  - {name: a, m: 40, k: 8, n: 6}\n")
    spec = write(tmp_path / "spec.yaml", f"""
config: {EXACT}
workloads: [good.yaml, bad.yaml]
grid: {{mxu.rows: [0, 8, 16]}}
metrics: [totals.cycles]
""")
    out = tmp_path / "out"
    proc = sweep_cli(spec, "-j", "2", "-o", out)
    assert proc.returncode == 3, proc.stderr  # finished, with failed points
    rows = db_rows(out)
    assert len(rows) == 6
    by = {(r["workload"], json.loads(r["overrides"])["mxu.rows"]): r for r in rows.values()}
    cfg_msg = cli_error("run", "-c", EXACT, "-w", good, "--set", "mxu.rows=0", "-o", out / "x")
    wl_msg = cli_error("run", "-c", EXACT, "-w", bad, "-o", out / "x")
    for rows_value in (8, 16):
        assert by["good.yaml", rows_value]["status"] == "ok"
        assert by["bad.yaml", rows_value]["status"] == "error"
        assert by["bad.yaml", rows_value]["error"] == wl_msg
    assert by["good.yaml", 0]["error"] == by["bad.yaml", 0]["error"] == cfg_msg
    assert by["good.yaml", 0]["status"] == "error" and by["good.yaml", 0]["metrics"] is None
    csv_text = (out / "results.csv").read_text()
    assert csv_text.count(",ok,") == 2 and csv_text.count(",error,") == 4

    again = sweep_cli(spec, "-j", "2", "-o", out, "-q")  # failed points count as finished ...
    assert again.returncode == 3 and db_rows(out) == rows
    frame = systolic.sweep(spec, out, jobs=2, progress=False, retry_failed=True)  # ... unless
    assert frame.attrs["ran"] == 4 and frame.attrs["failed"] == 4


def test_a_point_whose_workload_does_not_fit_the_hbm_fails_with_the_cli_message(tmp_path):
    # capacity-lm decoding 4 x 512 needs 4,997,120 B of HBM (tests/unit/test_capacity.cpp):
    # one byte less fails the point, exactly that much runs it.
    small = REPO / "tests" / "data" / "models" / "capacity-lm.yaml"
    spec = {"config": str(V4I), "workload": str(small), "bucket": "4x512", "phase": "decode",
            "grid": {"hbm.capacity_bytes": [4997119, 4997120]}, "metrics": ["chips.0.memory.hbm.footprint_bytes"]}
    frame = systolic.sweep(spec, tmp_path / "out", jobs=1, progress=False)
    by = {c: row for c, row in zip(frame["hbm.capacity_bytes"], frame.to_dict("records"))}
    assert by[4997120]["status"] == "ok" and by[4997120]["chips.0.memory.hbm.footprint_bytes"] == 4997120
    assert by[4997119]["status"] == "error"
    assert by[4997119]["error"] == cli_error("run", "-c", V4I, "-w", small, "--bucket", "4x512", "--phase", "decode",
                                             "--set", "hbm.capacity_bytes=4997119", "-o", tmp_path / "x")
    assert "needs 0.00 GB (4997120 B) of HBM" in by[4997119]["error"]


CRASHER = """
import os
from systolic._point import run_point

def crash_on_16(task):
    if task["overrides"].get("mxu.rows") == 16:
        os._exit(9)  # a worker dying in the middle of a point, as a simulator crash would
    return run_point(task)
"""


def test_a_crashing_point_is_recorded_and_others_finish(tmp_path, monkeypatch):
    write(tmp_path / "crashmod.py", CRASHER)
    monkeypatch.syspath_prepend(str(tmp_path))  # spawned workers inherit sys.path
    import crashmod
    monkeypatch.setattr(systolic.sweep, "run_point", crashmod.crash_on_16)
    spec = {"config": str(EXACT), "workload": str(EXAMPLE),
            "grid": {"mxu.rows": [4, 8, 16, 32, 64]}, "metrics": ["totals.cycles"]}
    frame = systolic.sweep(spec, tmp_path / "out", jobs=2, progress=False)
    status = dict(zip(frame["mxu.rows"], frame["status"]))
    assert status == {4: "ok", 8: "ok", 16: "error", 32: "ok", 64: "ok"}
    error = frame.loc[frame["mxu.rows"] == 16, "error"].iloc[0]
    assert "worker process died" in error


@pytest.mark.parametrize("text,message", [
    ("config: {tiny}\nworkload: {gpt2}\ngird: {{mxu.rows: [1]}}\n",
     "spec.yaml:3: unknown key 'gird' (did you mean 'grid'?)"),
    ("config: {tiny}\nworkload: {gpt2}\ngrid:\n  mxu.rowz: [4, 8]\n",
     "spec.yaml:4: unknown key 'mxu.rowz' (did you mean 'mxu.rows'?)"),
    ("config: {tiny}\nworkload: {gpt2}\ngrid:\n  mxu.rows: 4\n",
     "spec.yaml:4: grid 'mxu.rows': expected a non-empty list of values, got 4"),
    ("config: {tiny}\nworkload: nothere.yaml\n",
     "spec.yaml:2: 'workload': no such file: nothere.yaml"),
    ("workload: {gpt2}\n", "spec.yaml: missing 'config'"),
    ("config: {tiny}\nworkload: {gpt2}\nmetrics: [total.cycles]\n",
     "spec.yaml:3: metric 'total.cycles': report.json has no section 'total' "
     "(did you mean 'totals'?)"),
    ("config: {tiny}\nworkload: {gpt2}\nmetrics: [totals.cycles, layers.qkv_proj.cycles]\n",
     "spec.yaml:3: metric 'layers.qkv_proj.cycles': report schema 2 moved 'layers' into each chip: "
     "expected 'chips.0.layers.qkv_proj.cycles'"),
    ("config: {tiny}\nworkload: {gpt2}\ngrid: {{mxu.rows: [4]}}\nlist: [{{mxu.rows: 8}}]\n",
     "spec.yaml:4: 'mxu.rows' is swept by both 'grid' and 'list' entry 1"),
    ("config: [\n", "spec.yaml:2: malformed YAML"),
    # Workload keys whose values are names run() parses: refused before any point runs.
    ("config: {tiny}\nworkload: {gpt2}\ngrid:\n  routing: [uniform, zipf]\n",
     "spec.yaml:4: 'routing': expected uniform or skewed, got 'zipf'"),
    ("config: {tiny}\nworkload: {gpt2}\ngrid:\n  phase: [prefil]\n",
     "spec.yaml:4: 'phase': expected prefill or decode, got 'prefil'"),
    ("config: {tiny}\nworkload: {gpt2}\ngrid:\n  routing_seed: [1, -2]\n",
     "spec.yaml:4: 'routing_seed': expected a non-negative integer, got -2"),
])
def test_bad_specs_name_file_line_and_key(tmp_path, text, message):
    spec = write(tmp_path / "spec.yaml", text.format(tiny=TINY, gpt2=GPT2))
    with pytest.raises(systolic.InputError) as err:
        systolic.sweep.load_spec(spec)
    assert message in str(err.value)
    proc = sweep_cli(spec, "-o", tmp_path / "out")
    assert proc.returncode == 2 and message in proc.stderr
    assert proc.stderr.startswith("systolic: error: ")
    assert not (tmp_path / "out").exists()


def test_systolic_sweep_command(tmp_path):
    if not CLI.exists():
        pytest.skip(f"{CLI} is not built")
    help_ = subprocess.run([str(CLI), "sweep", "--help"], capture_output=True, text=True)
    if "usage: systolic sweep" not in help_.stdout:
        pytest.skip("`systolic sweep` is not registered in sim/cli/main.cpp yet")
    assert "usage: systolic sweep" in help_.stdout and "--dask" in help_.stdout
    spec = write(tmp_path / "spec.yaml", f"config: {EXACT}\nworkload: {EXAMPLE}\n"
                                         "grid: {mxu.rows: [4, 8]}\n")
    env = {k: v for k, v in ENV.items() if k != "PYTHONPATH"}  # it finds the package itself
    proc = subprocess.run([str(CLI), "sweep", str(spec), "-j", "1", "-o", str(tmp_path / "o")],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "100% 2/2 [" in proc.stderr and "already=0, failed=0]" in proc.stderr  # tqdm meter, one line
    assert len(db_rows(tmp_path / "o")) == 2
    proc = subprocess.run([str(CLI), "sweep", str(tmp_path / "none.yaml")], capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 2 and "cannot open sweep spec" in proc.stderr


def test_example_spec_and_plots(local24, tmp_path):
    example = systolic.sweep.load_spec(REPO / "traces" / "sweeps" / "example.yaml")
    assert len(systolic.sweep.expand(example)) == 18
    _, out, _, _ = local24
    plot = [sys.executable, str(REPO / "scripts" / "plot_sweep.py")]
    proc = subprocess.run(plot + ["heatmap", str(out), "--x", "mxu.cols", "--y", "mxu.rows",
                                  "-o", str(tmp_path)], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr
    pngs = sorted(p.name for p in tmp_path.glob("heatmap_*.png"))
    # One faceted figure per metric (a panel per dtype), not one file per dtype.
    assert pngs == ["heatmap_totals.seconds.png", "heatmap_totals.utilization.png"]
    report = pathlib.Path(systolic.run(V4I, GPT2).write(tmp_path / "run"))
    proc = subprocess.run(plot + ["roofline", str(report), "--bandwidth", "614"],
                          capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0 and (tmp_path / "run" / "roofline.png").exists(), proc.stderr
    proc = subprocess.run(plot + ["energy", str(report)], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0 and (tmp_path / "run" / "energy.png").exists(), proc.stderr
    data = json.loads(report.read_text())
    del data["energy_pj"]
    write(report, json.dumps(data))
    proc = subprocess.run(plot + ["energy", str(report)], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 2 and "no energy_pj section" in proc.stderr
    for energy in ({"mxu": 4.0e6, "sram": 1.5e6, "hbm": 6.0e6},
                   {"total": 11.5e6, "by_component": {"mxu": 4.0e6, "vmem": 1.5e6, "hbm": 6.0e6},
                    "by_op_kind": {"matmul": 11.5e6}}):
        data["energy_pj"] = energy
        write(report, json.dumps(data))
        (tmp_path / "run" / "energy.png").unlink(missing_ok=True)
        proc = subprocess.run(plot + ["energy", str(report)], capture_output=True, text=True,
                              env=ENV)
        assert proc.returncode == 0 and (tmp_path / "run" / "energy.png").exists(), proc.stderr
