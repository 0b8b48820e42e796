"""The command line: exit codes, one-line errors naming the culprit, no partial output,
and the same bytes for the same inputs."""
import pathlib

import pytest

from conftest import REPO, run_cli, run_report

TINY = REPO / "configs" / "tiny-4x4.yaml"


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.fixture
def gemms(tmp_path):
    return write(tmp_path, "g.yaml", "gemms:\n  - {name: a, m: 6, k: 8, n: 4}\n"
                                     "  - {name: b, m: 2, k: 3, n: 9, repeat: 2}\n")


def test_version_and_help(systolic_bin):
    assert run_cli("--version").stdout.startswith("systolic ")
    for sub in ["run", "config", "compile", "viz", "sweep"]:
        out = run_cli(sub, "--help").stdout
        assert "Usage" in out or "usage" in out.lower()


def test_run_prints_summary_and_writes_report(systolic_bin, gemms, tmp_path):
    proc = run_cli("run", "-c", TINY, "-w", gemms, "-o", tmp_path / "out")
    assert "total" in proc.stdout
    report = run_report("-c", TINY, "-w", gemms, "--set", "memory.ideal=true", outdir=tmp_path / "out2")
    assert report["schema_version"] == 2
    # Ideal memory (transfers take no time): the MXU's cycles, 4x4 tpu convention, worked by
    # hand in docs/mxu.md:
    # a: F=2 -> 4 + max(6,4) + (6+4+4-2) = 22; b: F=3 -> 4 + 2*4 + (2+4+4-2) = 20, twice.
    assert [l["cycles"] for l in report["chips"][0]["layers"]] == [22, 40]
    assert report["totals"]["cycles"] == 62
    assert report["totals"]["macs"] == 6 * 8 * 4 + 2 * 2 * 3 * 9
    assert report["totals"]["utilization"] == pytest.approx(300 / (16 * 62))
    # The preset's real memory system (DDR3) times the same program: never faster.
    real = run_report("-c", TINY, "-w", gemms, outdir=tmp_path / "out3")
    assert real["totals"]["cycles"] > 62
    assert real["totals"]["hbm_bytes_read"] == report["totals"]["hbm_bytes_read"] > 0


def test_summary_shows_whole_layer_names(systolic_bin, tmp_path):
    # Names longer than any former column limit, one repeated: printed whole, columns aligned.
    long = "decoder.block_11.self_attention.query_key_value_projection"
    (tmp_path / "w.yaml").write_text(f"gemms:\n  - {{name: {long}, m: 8, k: 8, n: 8}}\n"
                                     f"  - {{name: narrow_but_repeated_many_times_over, m: 4, k: 4, n: 4, repeat: 12}}\n")
    out = run_cli("run", "-c", TINY, "-w", tmp_path / "w.yaml", "-o", tmp_path / "out").stdout
    rows = [line for line in out.splitlines() if line.startswith(("layer ", long, "narrow", "total "))]
    assert rows[1].startswith(long + "  ") and rows[2].startswith("narrow_but_repeated_many_times_over x12  ")
    assert "~" not in out
    # The name column is as wide as the longest name: every row's M sits in the same 8 columns.
    w = len(long)
    assert [row[w + 2:w + 10].strip() for row in rows[:3]] == ["M", "8", "4"]


def test_same_inputs_same_bytes(systolic_bin, gemms, tmp_path):
    for d in ["x", "y"]:
        run_cli("run", "-c", TINY, "-w", gemms, "-o", tmp_path / d, "-q")
    assert (tmp_path / "x/report.json").read_bytes() == (tmp_path / "y/report.json").read_bytes()


@pytest.mark.parametrize("args,needle", [
    (["--set", "mxu.rowz=4"], "unknown key 'mxu.rowz' (did you mean 'mxu.rows'?)"),
    (["--set", "mxu.rows=0"], "expected an integer in [1, 65536], got '0'"),
    (["--set", "mxu.dtype=int4"], "expected one of int8"),
])
def test_bad_overrides_exit_2_without_output(systolic_bin, gemms, tmp_path, args, needle):
    out = tmp_path / "out"
    proc = run_cli("run", "-c", TINY, "-w", gemms, "-o", out, *args, check=False)
    assert proc.returncode == 2
    assert needle in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (out / "report.json").exists()


def test_bad_files_exit_2(systolic_bin, gemms, tmp_path):
    bad_cfg = write(tmp_path, "bad.yaml", "mxu:\n  rows: 4\n  cols: -1\n")
    proc = run_cli("run", "-c", bad_cfg, "-w", gemms, "-o", tmp_path / "o", check=False)
    assert proc.returncode == 2 and "bad.yaml:3: key 'mxu.cols'" in proc.stderr
    proc = run_cli("run", "-c", TINY, "-w", tmp_path / "missing.yaml", "-o", tmp_path / "o",
                   check=False)
    assert proc.returncode == 2 and "missing.yaml" in proc.stderr
    proc = run_cli("run", "-c", tmp_path / "nope.yaml", "-w", gemms, check=False)
    assert proc.returncode == 2 and "nope.yaml: cannot open config file" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_overflowing_layer_exit_2(systolic_bin, tmp_path):
    wl = write(tmp_path, "big.yaml", "gemms:\n  - {name: big, m: 1099511627776, k: 1073741824, "
                                     "n: 1073741824}\n")
    proc = run_cli("run", "-c", TINY, "-w", wl, "-o", tmp_path / "o", check=False)
    assert proc.returncode == 2
    assert "big.yaml:2" in proc.stderr and "overflows" in proc.stderr


def test_usage_errors_exit_2(systolic_bin):
    assert run_cli("run", check=False).returncode == 2           # -w missing
    assert run_cli("frobnicate", check=False).returncode == 2


def test_dataflow_key_runs_each_dataflow_and_rejects_an_unknown_one(tmp_path):
    workload = REPO / "traces" / "gemms" / "example.yaml"
    macs = {}
    for flow in ("ws", "os", "is"):
        out = tmp_path / flow
        p = run_cli("run", "-c", TINY, "-w", workload, "--set", f"mxu.dataflow={flow}", "-o", out)
        assert f", {flow}, " in p.stdout.splitlines()[0]  # the summary line names it
        report = run_report("-c", TINY, "-w", workload, "--set", f"mxu.dataflow={flow}", outdir=out)
        assert report["config"]["mxu"]["dataflow"] == flow
        macs[flow] = report["totals"]["macs_issued"]
    assert macs["ws"] == macs["os"] == macs["is"]  # the same work, however it is laid out
    out = tmp_path / "bad"
    p = run_cli("run", "-c", TINY, "-w", workload, "--set", "mxu.dataflow=xs", "-o", out, check=False)
    assert p.returncode == 2 and p.stdout == "" and not (out / "report.json").exists()
    assert "key 'mxu.dataflow': expected one of ws, os, is, got 'xs'" in p.stderr


@pytest.mark.parametrize("extension", [".yaml", ".yml", ".csv"])
def test_every_workload_reader_rejects_an_empty_file(systolic_bin, tmp_path, extension):
    # Each extension some registered reader takes (sim/workload/readers/; the C++ test
    # "Every workload reader rejects an empty file" asks every reader directly).
    empty = write(tmp_path, "empty" + extension, "")
    proc = run_cli("run", "-c", TINY, "-w", empty, "-o", tmp_path / "out", check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"systolic: error: {empty}:") and proc.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_progress_runs_in_slices_with_the_same_results(systolic_bin, tmp_path):
    # --progress pauses the simulation every 2^20 cycles to count finished instructions; the
    # reports are byte for byte those of an uninterrupted run, on one chip and on a system.
    runs = [["-c", REPO / "configs" / "tpu-v5e.yaml", "-w", REPO / "traces" / "models" / "llama3-8b-w8a16.yaml",
             "--bucket", "1x512"],
            ["-c", REPO / "configs" / "tpu-v5e-8.yaml", "--set", "ici.topology=ring", "--set", "ici.dims=2",
             "--set", "ici.algorithm=ring", "-w", REPO / "tests" / "py" / "data" / "tiny-lm.yaml", "--bucket", "1x8",
             "--tp", "2"]]
    for i, args in enumerate(runs):
        plain = run_cli("run", *args, "-o", tmp_path / f"a{i}")
        sliced = run_cli("run", *args, "-o", tmp_path / f"b{i}", "--progress")
        assert (tmp_path / f"a{i}" / "report.json").read_bytes() == (tmp_path / f"b{i}" / "report.json").read_bytes()
        assert sliced.stdout.replace(f"b{i}", f"a{i}") == plain.stdout  # the line never goes to stdout
        assert "simulating:" not in sliced.stderr  # under 2 s: no line at all
