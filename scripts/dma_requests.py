#!/usr/bin/python3
"""Where a compiled program's HBM requests come from: its DMA descriptors cut into requests.

Reads a compiled trace (`systolic compile ... -o trace.txt`) and cuts the HBM side of every DMA
descriptor the way a DMA engine does (models/dma/dma_core.hpp): into runs, merging the
dimensions that continue one another (models/isa/dma_descriptor.cpp, RunCursor), then each run
into requests that never cross a multiple of the request size (dma.request_bytes, or
hbm.chunk_bytes when that is 0, both read from the trace's config lines). Prints the requests by
direction and run shape (run bytes, bytes between runs), most first, and the totals. Where a
request is one HBM chunk (a power of two no larger than the HBM's chunk, page and interleave
block, as on every preset), the total is the report's memory.hbm.row_hits + row_misses. Usage:

    /usr/bin/python3 scripts/dma_requests.py TRACE [--top 12]

docs/performance.md ("Real memory against ideal memory") uses it on Llama-2-7B prefill.
"""
import argparse
import collections
import re
import sys

import numpy as np

DMA = re.compile(r"^\s*dma\s.*?\bsrc=(\S+):(0x[0-9a-f]+|\d+) dst=(\S+):(0x[0-9a-f]+|\d+) elem=(\d+) "
                 r"shape=(\d+)x(\d+)x(\d+) src_stride=(\d+)x(\d+)x(\d+) dst_stride=(\d+)x(\d+)x(\d+)")
CONFIG = re.compile(r"^config (dma\.request_bytes|hbm\.chunk_bytes) (\d+)\s*$")


def runs(base, elem, shape, stride):
    """(run bytes, bytes from one run to the next (0 for one run), run starts) of one side, as
    RunCursor walks it."""
    run_elements, level = 1, 0
    while level < 3 and (shape[level] == 1 or stride[level] == run_elements):
        run_elements *= shape[level]
        level += 1
    grid = [(shape[k], stride[k] * elem) for k in range(level, 3) if shape[k] != 1]
    starts = np.array([base], dtype=np.uint64)
    for count, step in grid:  # innermost first, as RunCursor advances
        starts = (starts[None, :] + np.arange(count, dtype=np.uint64)[:, None] * np.uint64(step)).T.ravel()
    return run_elements * elem, grid[0][1] if grid else 0, starts


def requests_per_run(run_bytes, starts, request_bytes):
    """Requests of each run: the request-aligned blocks it touches."""
    first = starts // np.uint64(request_bytes)
    last = (starts + np.uint64(run_bytes - 1)) // np.uint64(request_bytes)
    return (last - first + np.uint64(1)).astype(np.int64)


def fail(message):
    sys.stderr.write(message + "\n")
    sys.exit(2)


def count(lines, path):
    config, counts = {}, collections.Counter()
    run_counts = collections.Counter()
    for number, line in enumerate(lines, 1):
        m = CONFIG.match(line)
        if m:
            config[m.group(1)] = int(m.group(2))
            continue
        if not line.lstrip().startswith("dma "):
            continue
        m = DMA.match(line)
        if not m:
            fail(f"{path}:{number}: expected a dma instruction with src=, dst=, elem=, shape= and strides, "
                 f"got {line.strip()!r}")
        request_bytes = config.get("dma.request_bytes") or config.get("hbm.chunk_bytes")
        if not request_bytes:
            fail(f"{path}:{number}: expected the config lines dma.request_bytes and hbm.chunk_bytes "
                 "before the first dma instruction")
        g = m.groups()
        elem, shape = int(g[4]), [int(x) for x in g[5:8]]
        if elem == 0 or shape[0] * shape[1] * shape[2] == 0:
            continue
        for space, base, stride, direction in ((g[0], g[1], g[8:11], "read"), (g[2], g[3], g[11:14], "write")):
            if space != "hbm":
                continue
            run_bytes, step, starts = runs(int(base, 0), elem, shape, [int(x) for x in stride])
            key = (direction, run_bytes, step)
            counts[key] += int(requests_per_run(run_bytes, starts, request_bytes).sum())
            run_counts[key] += len(starts)
    return counts, run_counts


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace", help="a compiled trace (systolic compile -o FILE)")
    p.add_argument("--top", type=int, default=12, help="run shapes to list (default 12)")
    args = p.parse_args()
    if args.top < 1:
        p.error(f"--top: expected an integer >= 1, got {args.top}")
    try:
        with open(args.trace) as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail(f"{args.trace}: {e.strerror}")
    counts, run_counts = count(lines, args.trace)
    total = sum(counts.values())
    print(f"{'direction':<9} {'run bytes':>10} {'apart':>8} {'runs':>10} {'requests':>11} {'share':>6}")
    for (direction, run_bytes, step), n in counts.most_common(args.top):
        print(f"{direction:<9} {run_bytes:>10} {step:>8} {run_counts[direction, run_bytes, step]:>10} {n:>11} "
              f"{100 * n / total:>5.1f}%")
    for direction in ("read", "write"):
        print(f"{direction} requests: {sum(n for k, n in counts.items() if k[0] == direction)}")
    print(f"requests: {total}")


if __name__ == "__main__":
    main()
