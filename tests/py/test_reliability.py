"""Hardening (issue #20, docs/reliability.md): the bad-input corpus, safe outputs, budgets and
the Python entry points' one-line errors with exit code 2."""
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import REPO, SYSTOLIC, assert_refused, run_cli

EXAMPLE = REPO / "traces" / "gemms" / "example.yaml"
TINY = REPO / "configs" / "tiny-4x4.yaml"


def test_bad_input_corpus(systolic_bin):
    """Every malformed variant (>= 300, over every input) exits 2 with one line naming the file
    and a line or key, and leaves no output (scripts/bad_inputs.py; the table in
    docs/reliability.md is its --table output). Under scripts/test.sh with the sanitizer step
    (SYSTOLIC_CORPUS_SANITIZED=1), that step runs the corpus on the instrumented build of the same
    sources, every input but the sweep spec (Python's, which that build lacks): here only that one."""
    only_sweep = os.environ.get("SYSTOLIC_CORPUS_SANITIZED") == "1"
    args = ["--only", "sweep spec"] if only_sweep else []
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "bad_inputs.py"), "--systolic", str(SYSTOLIC),
                           "--quiet", *args], capture_output=True, text=True, timeout=900)
    summary = proc.stdout.strip().splitlines()[-1]
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert int(summary.split()[0]) >= (20 if only_sweep else 300), summary
    assert ("over 1 inputs" if only_sweep else "over 9 inputs") in summary, summary


def test_a_link_at_a_temporary_name_is_never_followed(tmp_path, systolic_bin):
    """The temporaries are fresh, exclusive names: a link planted at the old fixed name
    (report.json.tmp) keeps pointing at its untouched file."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json.tmp").symlink_to(victim)
    (out / "w.vcd.tmp.vcd").symlink_to(victim)
    run_cli("run", "-c", TINY, "-w", EXAMPLE, "-o", out, "-q", "--vcd", out / "w.vcd")
    assert victim.read_text() == "keep me\n"
    assert (out / "report.json").read_text().startswith("{")
    assert (out / "w.vcd").read_text().startswith("$")
    assert sorted(p.name for p in out.iterdir()) == ["report.json", "report.json.tmp", "w.gtkw", "w.vcd",
                                                     "w.vcd.tmp.vcd"]


def test_outputs_are_committed_together_and_checked_before_the_run(tmp_path, systolic_bin):
    out = tmp_path / "out"
    # The timeline's folder cannot be created (a file is in the way): found before the run,
    # and no report.json is left behind.
    (tmp_path / "blocker").write_text("")
    proc = run_cli("run", "-c", TINY, "-w", EXAMPLE, "-o", out, "-q", "--timeline", tmp_path / "blocker" / "t.json",
                   check=False)
    assert_refused(proc, "blocker/t.json: cannot write", out)
    # -o is a file: refused before the run as well.
    proc = run_cli("run", "-c", TINY, "-w", EXAMPLE, "-o", tmp_path / "blocker", "-q", check=False)
    assert_refused(proc, "cannot write")


def test_budgets_refuse_before_the_work(tmp_path, systolic_bin):
    big = tmp_path / "big.yaml"
    big.write_text("name: big\ngemms:\n  - {name: a, m: 4096, k: 4096, n: 4096}\n")
    proc = run_cli("run", "-c", TINY, "--set", "mxu.model=fast", "-w", big, "-o", tmp_path / "o", "-q", check=False)
    assert_refused(proc, "more than --max-instructions 1000000")
    mid = tmp_path / "mid.yaml"
    mid.write_text("name: mid\ngemms:\n  - {name: a, m: 64, k: 64, n: 64}\n")
    proc = run_cli("run", "-c", TINY, "-w", mid, "-o", tmp_path / "o", "-q", "--max-pe-cycles", "1000", check=False)
    assert_refused(proc, "more than --max-pe-cycles 1000", tmp_path / "o")


@pytest.mark.parametrize("args, expected", [
    (["--skew", "nan"], "--skew: expected a finite number, got 'nan'"),
    (["--routing-seed", "-1"], "--routing-seed: expected an integer in [0, 2^63), got '-1'"),
    (["--set", "mxu.rows=1e3"], "expected an integer in [1, 65536], got '1e3'"),
    (["--set", "clock_mhz=0x10"], "got '0x10'"),
])
def test_flags_refuse_what_they_used_to_wrap_or_accept(tmp_path, systolic_bin, args, expected):
    proc = run_cli("run", "-c", TINY, "-w", EXAMPLE, "-o", tmp_path / "o", "-q", *args, check=False)
    assert_refused(proc, expected, tmp_path / "o")


def test_a_config_path_that_is_a_folder(tmp_path, systolic_bin):
    proc = run_cli("run", "-c", tmp_path, "-w", EXAMPLE, "-o", tmp_path / "o", "-q", check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"systolic: error: {tmp_path}: is a directory, expected a YAML file"


# ----------------------------------------------------------------------------- sweeps

def sweep(tmp_path, text, *args):
    spec = tmp_path / "s.yaml"
    spec.write_text(text)
    env = dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE")
    return subprocess.run([str(SYSTOLIC), "sweep", str(spec), *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)


SPEC = f"name: s\nconfig: {TINY}\nworkload: {EXAMPLE}\ngrid:\n  mxu.rows: [4, 8]\n"


def test_sweep_refuses_a_duplicate_grid_and_an_escaping_name(tmp_path, systolic_bin):
    proc = sweep(tmp_path, SPEC + "grid:\n  mxu.cols: [4, 8]\n", "--dry-run")
    assert_refused(proc, "s.yaml:6: malformed YAML: duplicate key 'grid' (first on line 4)")
    proc = sweep(tmp_path, SPEC.replace("name: s", "name: ../../escape"), "--dry-run")
    assert_refused(proc, "'name': expected a plain name")
    proc = sweep(tmp_path, SPEC + "set:\n  mxu.count: abc\n", "--dry-run")
    assert_refused(proc, "'set'", tmp_path / "out")


def test_sweep_spec_that_is_not_utf8(tmp_path, systolic_bin):
    # Found by fuzz/sweep_spec_fuzzer.cpp: a Python traceback (UnicodeDecodeError), not one line.
    spec = tmp_path / "s.yaml"
    spec.write_bytes(SPEC.encode().replace(b"grid:", b"# \xc7\ngrid:"))
    env = dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE")
    proc = subprocess.run([str(SYSTOLIC), "sweep", str(spec), "--dry-run"], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("s.yaml:4: expected UTF-8 text, got byte 0xc7"), proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "out").exists()


def test_sweep_dry_run_writes_nothing_and_points_are_counted_first(tmp_path, systolic_bin):
    proc = sweep(tmp_path, SPEC, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "2 points" in proc.stderr
    assert not (tmp_path / "out").exists()
    # 10^8 points: refused from the count, in about a second, not expanded.
    values = "[" + ", ".join(str(v) for v in range(1, 101)) + "]"
    many = SPEC.replace("  mxu.rows: [4, 8]\n", "".join(
        f"  {key}: {values}\n" for key in ("mxu.rows", "mxu.cols", "mxu.count", "clock_mhz")))
    proc = sweep(tmp_path, many, "--dry-run")
    assert_refused(proc, "100000000 points (workloads x list x grid), more than --max-points 100000")


# ----------------------------------------------------------------------------- ONNX script

def test_onnx_cycle_opset_and_unwritable_output(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    def save(nodes, opset, name):
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        path = tmp_path / name
        onnx.save(model, str(path))
        return path

    def convert(path, *args):
        return subprocess.run([sys.executable, str(REPO / "scripts" / "onnx_to_workload.py"), str(path), *args],
                              capture_output=True, text=True, timeout=120)

    ok = save([helper.make_node("MatMul", ["x", "x"], ["y"])], 17, "ok.onnx")
    cycle = save([helper.make_node("MatMul", ["x", "b"], ["a"], name="one"),
                  helper.make_node("MatMul", ["a", "x"], ["b"], name="two"),
                  helper.make_node("Relu", ["a"], ["y"])], 17, "cycle.onnx")
    future = save([helper.make_node("MatMul", ["x", "x"], ["y"])], 999, "future.onnx")
    for path, expected in ((cycle, "the graph has a cycle through node"), (future, "opset 999: expected")):
        proc = convert(path)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith(f"{path}: ") and expected in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
    proc = convert(ok, "-o", str(tmp_path / "missing" / "w.yaml"))
    assert proc.returncode == 2 and "w.yaml: cannot write" in proc.stderr, proc.stderr
    proc = convert(ok, "-o", str(tmp_path / "w.yaml"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "w.yaml").read_text().startswith("#") or "gemms" in (tmp_path / "w.yaml").read_text()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
