#!/usr/bin/python3
"""Chips against wall time and peak memory: writes the "Scale" table of docs/performance.md.

Each case runs `systolic run` once per chip count (SCALE_REPEATS times, median wall time;
peak resident memory of the process from GNU time), one chip simulated per class of chips that
run alike (the default), and the smaller systems also with --every-chip for comparison. The
report's `simulation.chips_simulated` says how many chips each run simulated. Usage:

    /usr/bin/python3 scripts/scale.py [--systolic build/systolic] [--long]

--long adds the slowest row, Llama-2-70B sharded dp=8,pp=16,tp=8 on tpu-v5p-1024 in the
tiling's blocks (tp=8@z,dp=8@yz,pp=16, the default placement before whole torus lines; 512 chips
simulated). --every-chip runs only where they take minutes, not
hours.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import perf_table  # noqa: E402
REPEATS = int(os.environ.get("SCALE_REPEATS", "1"))
LLAMA = ["-w", "traces/models/llama2-70b.yaml", "--bucket", "1x2048", "--weight-dtype", "int8"]
AR = "gemms:\n  - {name: up, m: 2048, k: 8192, n: 3584}\n" \
     "  - {name: grads, collective: all_reduce, bytes: 64 MiB, dtype: bf16}\n" \
     "  - {name: down, m: 2048, k: 3584, n: 8192}\n"
# v5p slices: 2x2x2 (8 chips, no wraparound below a cube), a cube, 4 and 16 cubes.
V5P = [(8, ["-c", "configs/tpu-v5p-64.yaml", "--set", "ici.dims=2x2x2", "--set", "ici.wraparound=false"]),
       (64, ["-c", "configs/tpu-v5p-64.yaml"]),
       (256, ["-c", "configs/tpu-v5p-256.yaml"]),
       (1024, ["-c", "configs/tpu-v5p-1024.yaml"])]


def measure(systolic, args):
    """Median wall seconds, median CPU seconds (user + system), peak RSS MiB, the report."""
    walls, cpus, peak = [], [], 0.0
    with tempfile.TemporaryDirectory() as out:
        rss = pathlib.Path(out) / "rss"
        for _ in range(REPEATS):
            (pathlib.Path(out) / "report.json").unlink(missing_ok=True)
            t0 = time.perf_counter()
            subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", str(rss), str(systolic), "run", *args, "-o", out, "-q",
                            "--max-instructions", "100000000", "--max-ici-chunks", "100000000"],
                           check=True, env=dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE"))
            walls.append(time.perf_counter() - t0)
            user, system, kib = rss.read_text().split()[-3:]
            cpus.append(float(user) + float(system))
            peak = max(peak, int(kib) / 1024)
        report = json.loads((pathlib.Path(out) / "report.json").read_text())
    return statistics.median(walls), statistics.median(cpus), peak, report


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--systolic", default=str(ROOT / "build" / "systolic"))
    p.add_argument("--long", action="store_true")
    a = p.parse_args()
    rows = []

    def case(name, chips, args, every_chip=False):
        wall, cpu, mem, report = measure(a.systolic, args + (["--every-chip"] if every_chip else []))
        simulated = report["simulation"]["chips_simulated"]
        cycles = report["totals"]["cycles"]
        rows.append((name, f"{chips:,}", f"{simulated:,}", f"{wall:.1f}", f"{cpu:.1f}", f"{mem:.0f}", f"{cycles:,}"))
        print(f"{name}, {chips} chips: {simulated} simulated, {wall:.1f} s, {cpu:.1f} s CPU, {mem:.0f} MiB, {cycles:,} cycles",
              flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        ar = pathlib.Path(tmp) / "ar.yaml"
        ar.write_text(AR)
        for chips, preset in V5P:
            case("Llama-2-70B prefill [1, 2048] int8, a replica per chip (--tp 1), real memory", chips, preset + LLAMA)
        case("the same, --every-chip", 8, V5P[0][1] + LLAMA, every_chip=True)
        for chips, preset in V5P:
            case("all-reduce of 64 MiB between two matmuls (ar.yaml), memory.ideal=true", chips,
                 preset + ["-w", str(ar), "--set", "memory.ideal=true"])
        for chips, preset in V5P[:3]:
            case("the same, --every-chip", chips, preset + ["-w", str(ar), "--set", "memory.ideal=true"],
                 every_chip=True)
        v5e = ["-c", "configs/tpu-v5e-8.yaml", "-w", "traces/models/llama2-70b.yaml", "--bucket", "1x2048", "--tp", "8",
               "--weight-dtype", "int8"]
        case("Llama-2-70B prefill [1, 2048] --tp 8 int8 on tpu-v5e-8, memory.ideal=true", 8,
             v5e + ["--set", "memory.ideal=true"])
        case("the same on the real memory system", 8, v5e)
        case("the same, --every-chip", 8, v5e, every_chip=True)
        case("DeepSeek-V3 MoE prefill [8, 2048] --tp 64 --ep 64 on tpu-v5p-64, real memory (all-to-all: two classes)",
             64, ["-c", "configs/tpu-v5p-64.yaml", "-w", "traces/models/deepseek-v3-moe.yaml", "--bucket", "8x2048",
                  "--tp", "64", "--ep", "64"])
        # Sharded over a pod: tensor parallelism capped at 8 (the KV heads), pipeline and data
        # parallelism beside it; int8 weights, real memory.
        sharded = ["-w", "traces/models/llama2-70b.yaml", "--weight-dtype", "int8"]
        case("Llama-2-70B prefill [2, 2048] int8 --mesh dp=2,pp=16,tp=8 (pipeline sends over 3 hops)", 256,
             V5P[2][1] + sharded + ["--bucket", "2x2048", "--mesh", "dp=2,pp=16,tp=8"])
        case("Llama-2-70B prefill [8, 2048] int8 --mesh dp=8,pp=16,tp=8 (on whole torus lines, the default)", 1024,
             V5P[3][1] + sharded + ["--bucket", "8x2048", "--mesh", "dp=8,pp=16,tp=8"])
        if a.long:
            case("the same in the tiling's blocks, --mesh tp=8@z,dp=8@yz,pp=16 (the default before)", 1024,
                 V5P[3][1] + sharded + ["--bucket", "8x2048", "--mesh", "tp=8@z,dp=8@yz,pp=16"])

    perf_table.write_section(
        "scale", "scripts/scale.py",
        f"Measured on {perf_table.machine()}; median of {REPEATS} run{'s' if REPEATS > 1 else ''}, Release build; "
        f"load average {os.getloadavg()[0]:.1f} at the end (CPU is user + system time, which other processes on "
        "the machine inflate less than wall time).",
        ["case", "chips", "simulated", "wall (s)", "CPU (s)", "peak RSS (MiB)", "simulated cycles"], rows)


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
