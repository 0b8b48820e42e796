"""Per-operand traffic in report.json (layers[i].operands, docs/report.md) and the SCALE-Sim-style
CSVs written from it (run --scalesim-reports, docs/workloads.md "SCALE-Sim-style reports"):
conservation against the counters the report already has, a GEMM worked by hand, and the
values SCALE-Sim v2 itself printed for the same GEMMs."""
import json
import re

import pytest

from conftest import REPO, run_cli, run_report

TINY = REPO / "configs" / "tiny-4x4.yaml"
EXAMPLE = REPO / "traces" / "gemms" / "example.yaml"

# scalesim/simulator.py (scale-sim-v2 22f88b1), generate_reports: the three headers.
HEADERS = {
    "COMPUTE_REPORT.csv":
        "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,",
    "BANDWIDTH_REPORT.csv":
        "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, "
        "Avg IFMAP DRAM BW, Avg FILTER DRAM BW, Avg OFMAP DRAM BW,",
    "DETAILED_ACCESS_REPORT.csv":
        "LayerID, SRAM IFMAP Start Cycle, SRAM IFMAP Stop Cycle, SRAM IFMAP Reads, "
        "SRAM Filter Start Cycle, SRAM Filter Stop Cycle, SRAM Filter Reads, "
        "SRAM OFMAP Start Cycle, SRAM OFMAP Stop Cycle, SRAM OFMAP Writes, "
        "DRAM IFMAP Start Cycle, DRAM IFMAP Stop Cycle, DRAM IFMAP Reads, "
        "DRAM Filter Start Cycle, DRAM Filter Stop Cycle, DRAM Filter Reads, "
        "DRAM OFMAP Start Cycle, DRAM OFMAP Stop Cycle, DRAM OFMAP Writes,",
}


def gemms(tmp_path, *shapes):
    path = tmp_path / "g.yaml"
    path.write_text("gemms:\n" + "".join(f"  - {{name: g{i}, m: {m}, k: {k}, n: {n}}}\n"
                                         for i, (m, k, n) in enumerate(shapes)))
    return path


def operand_sum(layers, operand, field):
    return sum(layer["operands"][operand][field] for layer in layers)


@pytest.mark.parametrize("ideal", ["false", "true"])
def test_operand_bytes_add_up_to_the_reports_totals_and_scratchpad_counters(systolic_bin, tmp_path, ideal):
    wl = gemms(tmp_path, (8, 8, 8), (13, 9, 6), (20, 17, 11), (4, 300, 70))
    r = run_report("-c", TINY, "-w", wl, "--set", f"memory.ideal={ideal}", outdir=tmp_path / "o")
    [chip] = r["chips"]
    layers = chip["layers"]
    # HBM side: every DMA the compiler emits moves between HBM and one scratchpad.
    assert sum(operand_sum(layers, o, "hbm_bytes_read") for o in "abc") == r["totals"]["hbm_bytes_read"] > 0
    assert sum(operand_sum(layers, o, "hbm_bytes_written") for o in "abc") == r["totals"]["hbm_bytes_written"] > 0
    assert r["totals"]["hbm_bytes_read"] == chip["memory"]["hbm"]["bytes_read"]
    # Scratchpad side: each scratchpad's own counters are its operand's MXU and DMA traffic
    # (int8 GEMMs on an int8 array: no vector unit).
    pads = chip["memory"]["scratchpads"]
    for pad, o in (("vmem", "a"), ("weights", "b"), ("accumulators", "c")):
        assert pads[pad]["bytes_read"] == operand_sum(layers, o, "sram_bytes_read") + operand_sum(layers, o, "hbm_bytes_written")
        assert pads[pad]["bytes_written"] == operand_sum(layers, o, "sram_bytes_written") + operand_sum(layers, o, "hbm_bytes_read")
    # No transfer is faster than the memory allows: bytes over the cycles they spanned stay
    # under the peak (DDR3 on tiny-4x4; with ideal memory transfers take no time at all).
    peak_bytes_per_cycle = chip["memory"]["hbm"]["peak_gbps"] * 1e9 / (r["config"]["clock_mhz"] * 1e6)
    for layer in layers:
        for o in "abc":
            x = layer["operands"][o]
            moved = x["hbm_bytes_read"] + x["hbm_bytes_written"]
            if ideal == "false" and moved:
                assert moved <= peak_bytes_per_cycle * x["hbm_cycles"]
            assert x["sram_cycles"] <= layer["cycles"]


def test_a_gemm_worked_by_hand(systolic_bin, tmp_path):
    # C[8x8] = A[8x8] B[8x8], int8, on the 4x4 weight-stationary array, one MXU: K on the rows
    # gives 2 row folds, N on the columns 2 column folds, and every tile fits its scratchpad, so
    # it is one matmul instruction (checked in the compiled trace below).
    wl = gemms(tmp_path, (8, 8, 8))
    trace = tmp_path / "g.trace"
    run_cli("compile", "-c", TINY, "-w", wl, "-o", trace)
    opcodes = [line.split()[0] for line in trace.read_text().splitlines() if "layer=" in line and not line.startswith("layer")]
    assert opcodes.count("matmul") == 1 and opcodes.count("dma") == 3  # load A, load B, store C
    r = run_report("-c", TINY, "-w", wl, outdir=tmp_path / "o")
    [layer] = r["chips"][0]["layers"]
    a, b, c = (layer["operands"][o] for o in "abc")
    # SRAM: A streams once per column fold (8 x 8 x 2), B is held, read once (8 x 8); the
    # partial sums are written once per row fold (8 x 8 x 2 x 4 B) and read back on the second.
    assert (a["sram_bytes_read"], a["sram_bytes_written"]) == (128, 0)
    assert (b["sram_bytes_read"], b["sram_bytes_written"]) == (64, 0)
    assert (c["sram_bytes_read"], c["sram_bytes_written"]) == (8 * 8 * 1 * 4, 8 * 8 * 2 * 4)
    # HBM: A and B loaded once (64 B each), C stored once at int8 (64 B).
    assert (a["hbm_bytes_read"], b["hbm_bytes_read"], c["hbm_bytes_written"]) == (64, 64, 64)
    assert a["hbm_bytes_written"] == b["hbm_bytes_written"] == c["hbm_bytes_read"] == 0
    # One matmul: the MXU's accesses span exactly its busy cycles.
    assert a["sram_cycles"] == b["sram_cycles"] == c["sram_cycles"] == layer["mxu_busy_cycles"] > 0
    # The store follows the matmul; the loads precede it.
    assert c["hbm_start_cycle"] >= c["sram_start_cycle"] + c["sram_cycles"]
    assert a["hbm_start_cycle"] + a["hbm_cycles"] <= a["sram_start_cycle"]


def scalesim_cfg(tmp_path):
    path = tmp_path / "ws4.cfg"
    path.write_text("[general]\nrun_name = ws4\n\n[architecture_presets]\nArrayHeight: 4\nArrayWidth: 4\n"
                    "IfmapSramSzkB: 1024\nFilterSramSzkB: 1024\nOfmapSramSzkB: 1024\nIfmapOffset: 0\n"
                    "FilterOffset: 10000000\nOfmapOffset: 20000000\nDataflow : ws\n\n"
                    "[run_presets]\nInterfaceBandwidth: CALC\n")
    return path


def read_csv(path):
    lines = path.read_text().splitlines()
    assert all(line.endswith(",") for line in lines)  # SCALE-Sim ends every line with a comma
    return lines[0], [[field.strip() for field in line.split(",")[:-1]] for line in lines[1:]]


def test_the_three_csvs_have_scalesims_columns_and_values(systolic_bin, tmp_path):
    # G1 8x8x8 and G2 M=20 N=11 K=17 on SCALE-Sim's 4x4 ws array. SCALE-Sim v2 (22f88b1, run on
    # this cfg: docs/workloads.md) printed Mapping Efficiency 100.0 and 77.91666666666667, SRAM
    # IFMAP Reads 128 and 1020, SRAM Filter Reads 64 and 187: with int8 operands (one-byte words)
    # our bytes are its words.
    wl = tmp_path / "gemm.csv"
    wl.write_text("Layer, M, N, K,\nG1, 8, 8, 8,\nG2, 20, 11, 17,\n")
    out = tmp_path / "o"
    proc = run_cli("run", "-c", scalesim_cfg(tmp_path), "-w", wl, "-o", out, "--scalesim-reports")
    wrote = proc.stdout.splitlines()[-1]
    for name, header in HEADERS.items():
        assert str(out / name) in wrote
        first, rows = read_csv(out / name)
        assert first == header
        assert [row[0] for row in rows] == ["0", "1"]
    layers = json.loads((out / "report.json").read_text())["chips"][0]["layers"]
    _, compute = read_csv(out / "COMPUTE_REPORT.csv")
    _, bandwidth = read_csv(out / "BANDWIDTH_REPORT.csv")
    _, detail = read_csv(out / "DETAILED_ACCESS_REPORT.csv")
    assert [float(row[4]) for row in compute] == pytest.approx([100.0, 77.91666666666667])
    assert [(int(row[3]), int(row[6])) for row in detail] == [(128, 64), (1020, 187)]
    for layer, c, bw, d in zip(layers, compute, bandwidth, detail):
        x = {o: layer["operands"][o] for o in "abc"}
        assert int(c[1]) == layer["cycles"] and int(c[2]) == layer["mxu_stalled_cycles"]
        assert float(c[3]) == pytest.approx(100 * layer["utilization"])
        assert float(c[5]) == pytest.approx(100 * layer["mapping_efficiency"])
        # SRAM bandwidth: ifmap and filter reads, ofmap writes, over the layer's cycles.
        sram = [x["a"]["sram_bytes_read"], x["b"]["sram_bytes_read"], x["c"]["sram_bytes_written"]]
        assert [float(v) for v in bw[1:4]] == pytest.approx([s / layer["cycles"] for s in sram])
        # DRAM bandwidth: over the transfers' own span (at least one cycle, as SCALE-Sim's + 1).
        dram = [(x["a"]["hbm_bytes_read"], x["a"]["hbm_cycles"]), (x["b"]["hbm_bytes_read"], x["b"]["hbm_cycles"]),
                (x["c"]["hbm_bytes_written"], x["c"]["hbm_cycles"])]
        assert [float(v) for v in bw[4:7]] == pytest.approx([b / max(cy, 1) for b, cy in dram])
        # Detail: start, inclusive stop, count for SRAM then DRAM, ifmap/filter/ofmap.
        spans = [(x[o]["sram_start_cycle"], x[o]["sram_cycles"]) for o in "abc"] + \
                [(x[o]["hbm_start_cycle"], x[o]["hbm_cycles"]) for o in "abc"]
        counts = sram + [b for b, _ in dram]
        expected = [v for (start, cy), n in zip(spans, counts) for v in (start, start + max(cy, 1) - 1, n)]
        assert [int(v) for v in d[1:]] == expected
    # Floats as Python's str() writes them: a whole number keeps ".0".
    assert re.fullmatch(r"\d+\.\d+", compute[0][4])


def test_a_multi_chip_run_is_refused_with_nothing_written(systolic_bin, tmp_path):
    proc = run_cli("run", "-c", REPO / "configs" / "tpu-v5e-8.yaml", "-w", EXAMPLE, "-o", tmp_path / "m",
                   "--scalesim-reports", check=False)
    assert proc.returncode == 2 and "describe one array; this run has 8 chips" in proc.stderr
    assert not (tmp_path / "m").exists()
