"""scripts/ab.py, the A/B of systolic binaries in user CPU time (docs/performance.md)."""
import re
import subprocess

from conftest import REPO

AB = REPO / "scripts" / "ab.py"
TINY = ["run", "-c", "configs/tiny-4x4.yaml", "-w", "traces/gemms/example.yaml"]
# Some 20 ms of user CPU: a run of a few ms can read as 0 s (the kernel counts user time by
# ticks), and ab.py then prints no ratio for it.
SHORT = ["run", "-c", "configs/tpu-v4i.yaml", "-w", "traces/models/llama2-7b.yaml", "--bucket", "1x128",
         "--set", "hbm.capacity_bytes=32 GiB", "--set", "memory.ideal=true"]


def ab(*args):
    return subprocess.run(["/usr/bin/python3", str(AB), *map(str, args)], cwd=REPO, capture_output=True,
                          text=True)


def test_each_binary_gets_its_median_and_its_ratio_to_the_first(systolic_bin):
    done = ab("--rounds", 3, systolic_bin, systolic_bin, "--", *SHORT)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"3 rounds; user CPU (s) and its per-round ratio to {systolic_bin}"
    # One line per binary given, the same binary twice included.
    rows = [re.fullmatch(r"(.+): median [0-9.]+ s, min ([0-9.]+) s, ratio median ([0-9.]+) "
                         r"\(quartiles ([0-9.]+)-([0-9.]+)\), fastest ([0-9.]+)", line) for line in lines[1:]]
    assert len(rows) == 2 and all(rows)
    assert float(rows[0].group(3)) == 1.0  # the first against itself, round by round
    assert float(rows[0].group(6)) == 1.0  # and fastest against fastest
    # The second's fastest ratio is its min over the first's: inside the interval the printed
    # mins (rounded to 0.0005 s either way) allow.
    m0, m1 = (float(r.group(2)) for r in rows)
    fastest = float(rows[1].group(6))
    assert (m1 - 0.0005) / (m0 + 0.0005) - 0.0005 <= fastest <= (m1 + 0.0005) / max(m0 - 0.0005, 1e-6) + 0.0005


def test_bad_input_is_refused_with_exit_2(systolic_bin):
    for args, message in [((systolic_bin,), "expected the binaries, then `--`"),
                          (("/nonexistent/systolic", "--", *TINY), "expected an executable systolic binary"),
                          (("--rounds", 0, systolic_bin, "--", *TINY), "--rounds: expected an integer >= 1")]:
        done = ab(*args)
        assert done.returncode == 2 and message in done.stderr, (args, done.stderr)


def test_a_failing_run_stops_the_ab_with_its_exit_code_and_message(systolic_bin):
    done = ab("--rounds", 1, systolic_bin, "--", "run", "-c", "configs/no-such.yaml")
    assert done.returncode == 2 and "configs/no-such.yaml" in done.stderr
    assert done.stdout == ""
