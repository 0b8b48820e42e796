#!/usr/bin/python3
"""A/B of systolic binaries on one command, in user CPU time, robust to a host whose speed drifts.

Runs each binary once per round, in turns (the order reversed every other round), and prints per
binary its median user CPU time (from getrusage around each run) and the median, with quartiles,
of its per-round ratio to the first binary's, and the ratio of its fastest run to the first's.
The host this project is measured on changes speed by a third within minutes, and its two cores
can run at two speeds at once. Runs of the same round share the host's state, so their ratio
holds better than the times; where even those swing, the fastest runs (each binary's on a fast
core) are what compares (docs/performance.md, "Real memory against ideal memory"). Usage:

    /usr/bin/python3 scripts/ab.py [--rounds 21] BASE NEW [MORE ...] -- SYSTOLIC ARGS...

e.g. scripts/ab.py old/systolic build/systolic -- run -c configs/tpu-v4i.yaml
     -w traces/models/llama2-7b.yaml --bucket 1x2048 --set "hbm.capacity_bytes=32 GiB"
The runs write into a temporary directory (`-o`); a run that fails stops the A/B with its exit
code and message.
"""
import argparse
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=21, help="rounds of one run per binary (default 21)")
    p.add_argument("binaries", nargs="+", help="systolic binaries; ratios are to the first")
    if "--" not in argv:
        p.error("expected the binaries, then `--` and the systolic arguments")
    cut = argv.index("--")
    args = p.parse_args(argv[:cut])
    if args.rounds < 1:
        p.error(f"--rounds: expected an integer >= 1, got {args.rounds}")
    for b in args.binaries:
        if not os.access(b, os.X_OK):
            p.error(f"{b}: expected an executable systolic binary")
    return args, argv[cut + 1:]


def user_cpu(binary, command, outdir):
    """User CPU seconds of one run of `binary command -q -o outdir`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    done = subprocess.run([binary, *command, "-q", "-o", outdir], capture_output=True, text=True,
                          env=dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE"))
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        sys.exit(done.returncode)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before


def quartiles(values):
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def main():
    args, command = parse(sys.argv[1:])
    order = list(range(len(args.binaries)))  # by position: one binary may be given twice (noise)
    times = [[] for _ in order]
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for i in (order if r % 2 == 0 else order[::-1]):
                times[i].append(user_cpu(args.binaries[i], command, str(pathlib.Path(tmp) / "out")))
    print(f"{args.rounds} rounds; user CPU (s) and its per-round ratio to {args.binaries[0]}")
    for b, t in zip(args.binaries, times):
        line = f"{b}: median {statistics.median(t):.3f} s, min {min(t):.3f} s"
        if min(times[0]) > 0:  # getrusage counts in microseconds: a run too short reads as 0
            ratios = [x / y for x, y in zip(t, times[0])]
            low, high = quartiles(ratios)
            line += (f", ratio median {statistics.median(ratios):.3f} (quartiles {low:.3f}-{high:.3f}),"
                     f" fastest {min(t) / min(times[0]):.3f}")
        print(line)


if __name__ == "__main__":
    main()
