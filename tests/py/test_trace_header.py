"""A compiled trace says what it was compiled for: run under another chip config it is refused
(exit 2, every differing key with both values, no report), energy-only changes and the memory
mode are allowed, and report.json says what the trace was compiled for and how it was timed."""
import json
import re

import pytest

from conftest import REPO, run_cli, run_report

TINY = REPO / "configs" / "tiny-4x4.yaml"
EXAMPLE = REPO / "traces" / "gemms" / "example.yaml"
REAL = ("--set", "memory.ideal=false")


def fnv1a_64(data: bytes) -> int:
    """FNV-1a, 64 bits, written from the published definition (offset basis, prime)."""
    h = 0xcbf29ce484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) % (1 << 64)
    return h


@pytest.fixture
def trace(systolic_bin, tmp_path):
    path = tmp_path / "ex.trace"
    run_cli("compile", "-c", TINY, "-w", EXAMPLE, *REAL, "-o", path)
    return path


def header_config(path):
    """{key: (value, line number)} of the trace's `config` lines, and its config_hash."""
    lines, digest = {}, None
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        if line.startswith("config "):
            _, key, value = line.split()
            lines[key] = (value, n)
        elif line.startswith("config_hash "):
            digest = int(line.split()[1], 16)
    return lines, digest


def test_hash_is_fnv1a_of_the_config_lines_and_stable_across_processes(trace, tmp_path):
    lines, digest = header_config(trace)
    text = "".join(f"{k} {v}\n" for k, (v, _) in sorted(lines.items()))
    assert fnv1a_64(text.encode()) == digest
    again = tmp_path / "again.trace"
    run_cli("compile", "-c", TINY, "-w", EXAMPLE, *REAL, "-o", again)
    assert again.read_text() == trace.read_text()
    # An energy-only change, the config's name and the MXU model keep the hash.
    greener = tmp_path / "greener.trace"
    run_cli("compile", "-c", TINY, "-w", EXAMPLE, *REAL, "--set", "energy.tech_scale=0.3", "--set", "name=x",
            "--set", "mxu.model=fast", "-o", greener)
    assert header_config(greener)[1] == digest


def test_config_lines_are_the_resolved_config_minus_energy(trace):
    """Every key `systolic config` prints appears with the same value, except the energy
    section and the keys that change no cycle (docs/trace-format.md)."""
    resolved = json.loads(run_cli("config", "-c", TINY, *REAL).stdout)
    flat = {}

    def walk(node, prefix):
        for k, v in node.items():
            if isinstance(v, dict):
                walk(v, f"{prefix}{k}.")
            else:
                flat[f"{prefix}{k}"] = v
    walk(resolved, "")
    lines, _ = header_config(trace)
    free = {"name", "hbm.preset", "mxu.model", "mxu.seed", "memory.ideal", "hbm.capacity_bytes"}
    expected = {k for k in flat if not k.startswith(("energy.", "area.")) and k not in free}
    assert set(lines) == expected
    for key in expected:
        value = flat[key]
        text = json.dumps(value) if not isinstance(value, str) else value
        assert lines[key][0] == text, key
    head = trace.read_text().splitlines()[:5]
    assert head == ["systolic-trace 2", "dataflow ws", "memory ideal=false", "dtypes mxu.dtype=int8",
                    "system chips=1 chip=0"]


@pytest.mark.parametrize("key,value,was,now", [
    ("sram.vmem_bytes", "32 KiB", "65536 B (64 KiB)", "32768 B (32 KiB)"),
    ("mxu.rows", "8", "4", "8"),
])
def test_a_timing_key_that_differs_exits_2_naming_it(trace, tmp_path, key, value, was, now):
    lines, _ = header_config(trace)
    out = tmp_path / "out"
    p = run_cli("run", "-c", TINY, "-t", trace, *REAL, "--set", f"{key}={value}", "-o", out, "-q", check=False)
    assert p.returncode == 2
    assert f"{trace}:{lines[key][1]}: compiled for {key} = {was}, but the config has {now}" in p.stderr
    assert "systolic compile -c" in p.stderr and "run it with -c the config it was compiled for" in p.stderr
    assert p.stdout == "" and not (out / "report.json").exists()


def test_a_trace_compiled_for_os_is_refused_under_ws_naming_the_key(systolic_bin, tmp_path):
    path = tmp_path / "os.trace"
    run_cli("compile", "-c", TINY, "-w", EXAMPLE, *REAL, "--set", "mxu.dataflow=os", "-o", path)
    assert path.read_text().splitlines()[1] == "dataflow os"
    lines, _ = header_config(path)
    out = tmp_path / "out"
    p = run_cli("run", "-c", TINY, "-t", path, *REAL, "-o", out, "-q", check=False)
    assert p.returncode == 2
    assert f"{path}:{lines['mxu.dataflow'][1]}: compiled for mxu.dataflow = os, but the config has ws" in p.stderr
    assert p.stdout == "" and not (out / "report.json").exists()
    # Under its own dataflow it runs, and the report says what it was compiled for.
    report = run_report("-c", TINY, "-t", path, *REAL, "--set", "mxu.dataflow=os", outdir=tmp_path / "ok")
    assert report["trace"]["compiled_for"]["dataflow"] == "os"
    assert report["config"]["mxu"]["dataflow"] == "os"


def test_energy_only_change_runs_and_report_says_what_it_was_compiled_for(trace, tmp_path):
    base = run_report("-c", TINY, "-t", trace, *REAL, outdir=tmp_path / "a")
    greener = run_report("-c", TINY, "-t", trace, *REAL, "--set", "energy.tech_scale=0.5", outdir=tmp_path / "b")
    assert greener["totals"] == base["totals"]
    assert greener["energy_pj"]["total"] < base["energy_pj"]["total"]
    _, digest = header_config(trace)
    assert base["trace"] == {
        "format_version": 2,
        "compiled_for": {"dataflow": "ws", "memory_ideal": False, "dtypes": {"mxu.dtype": "int8"},
                         "chips": 1, "chip": 0, "config_hash": f"{digest:#018x}"},
        "timed_with": {"memory_ideal": False}}
    # A workload run has no trace to describe.
    assert "trace" not in run_report("-c", TINY, "-w", EXAMPLE, *REAL, outdir=tmp_path / "w")


def test_memory_mode_may_differ_and_the_report_says_which_timed_the_run(trace, tmp_path):
    out = tmp_path / "ideal"
    p = run_cli("run", "-c", TINY, "-t", trace, "--set", "memory.ideal=true", "-o", out, "-q")
    assert "compiled with memory.ideal=false and is timed with memory.ideal=true" in p.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["trace"]["compiled_for"]["memory_ideal"] is False
    assert report["trace"]["timed_with"]["memory_ideal"] is True


def test_hand_edited_headers_give_file_and_line(trace, tmp_path):
    text = trace.read_text()
    cases = [
        (re.sub(r"config_hash 0x[0-9a-f]+", "config_hash 0x0123456789abcdef", text),
         r":6: config_hash 0x0123456789abcdef does not match the config lines"),
        # Only the header line: the config line mxu.dataflow still says ws.
        (text.replace("\ndataflow ws\n", "\ndataflow os\n", 1),
         r":2: dataflow os disagrees with the config line mxu.dataflow = ws: the header was edited"),
        (text.replace("\ndataflow ws\n", "\ndataflow xs\n", 1), r":2: unknown dataflow 'xs': expected one of ws, os, is"),
        (text.replace("systolic-trace 2", "systolic-trace 1"),
         r":1: trace format version 1 is not supported .*recompile the trace with `systolic compile`"),
    ]
    for i, (edited, needle) in enumerate(cases):
        bad = tmp_path / f"bad{i}.trace"
        bad.write_text(edited)
        out = tmp_path / f"out{i}"
        p = run_cli("run", "-c", TINY, "-t", bad, *REAL, "-o", out, "-q", check=False)
        assert p.returncode == 2 and re.search(re.escape(str(bad)) + needle, p.stderr), p.stderr
        assert not (out / "report.json").exists()
