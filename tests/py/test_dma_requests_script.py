"""scripts/dma_requests.py, a compiled program's HBM requests from its DMA descriptors
(docs/performance.md): counted from the trace alone, they must be the chunks the simulated HBM
booked (a request is one chunk on every preset), and bad input is refused."""
import json
import re
import subprocess

import pytest

from conftest import REPO, run_cli

SCRIPT = REPO / "scripts" / "dma_requests.py"
# Llama-2-7B prefill on a short prompt: weights in long runs, activations in strided rows.
WORKLOAD = ["-c", "configs/tpu-v4i.yaml", "-w", "traces/models/llama2-7b.yaml", "--bucket", "1x128",
            "--set", "hbm.capacity_bytes=32 GiB"]


def script(*args):
    return subprocess.run(["/usr/bin/python3", str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True, cwd=REPO)


# The presets' requests (one interleave block each) and smaller ones, which cut the strided rows
# into more pieces.
@pytest.mark.parametrize("overrides", [[], ["--set", "dma.request_bytes=256"]])
def test_the_requests_counted_from_the_trace_are_the_chunks_the_hbm_booked(systolic_bin, tmp_path, overrides):
    trace = tmp_path / "trace.txt"
    run_cli("compile", *WORKLOAD, *overrides, "-o", trace, cwd=REPO)
    run_cli("run", *WORKLOAD, *overrides, "-q", "-o", tmp_path / "out", cwd=REPO)
    hbm = json.loads((tmp_path / "out" / "report.json").read_text())["chips"][0]["memory"]["hbm"]
    done = script(trace)
    assert done.returncode == 0, done.stderr
    totals = dict(re.findall(r"^(read requests|write requests|requests): (\d+)$", done.stdout, re.M))
    assert int(totals["requests"]) == hbm["row_hits"] + hbm["row_misses"]
    assert int(totals["read requests"]) + int(totals["write requests"]) == int(totals["requests"])
    # Both directions are there: weights and activations read, activations written.
    assert int(totals["read requests"]) > 0 and int(totals["write requests"]) > 0


def test_bad_input_is_refused_with_exit_2_naming_the_file_and_line(tmp_path):
    missing = script(tmp_path / "none.txt")
    assert missing.returncode == 2 and "none.txt" in missing.stderr
    bad = tmp_path / "bad.txt"
    bad.write_text("config dma.request_bytes 0\nconfig hbm.chunk_bytes 1024\n  dma src=hbm:0x0 oops\n")
    done = script(bad)
    assert done.returncode == 2 and f"{bad}:3: expected a dma instruction" in done.stderr
    assert done.stdout == ""
    unconfigured = tmp_path / "unconfigured.txt"
    unconfigured.write_text("  dma src=hbm:0x0 dst=vmem:0x0 elem=2 shape=4x1x1 src_stride=1x0x0 dst_stride=1x0x0\n")
    done = script(unconfigured)
    assert done.returncode == 2 and "expected the config lines" in done.stderr
