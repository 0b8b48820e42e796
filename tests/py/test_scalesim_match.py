"""With mxu.convention=scalesim and memory.ideal=true, every layer's cycle count equals
SCALE-Sim v2's weight-stationary "Total Cycles" (CALC mode) + 1: SCALE-Sim prints the
zero-based index of the last cycle, Systolic the number of cycles (docs/mxu.md).
SCALE-Sim streams all M rows through each fold; the scratchpads here are made large enough that
the compiler keeps a layer's rows in one block too (its weight tiles are whole folds, and in the
scalesim convention folds add up), so the compiled program's MXU time is SCALE-Sim's.
The expected values come from scalesim_reference.py, an independent re-implementation of
SCALE-Sim's demand-matrix construction that shares no code with the simulator."""
import pathlib

import pytest

from conftest import REPO, run_report
from scalesim_reference import scalesim_total_cycles

TOPOLOGIES = sorted((REPO / "traces" / "topologies").rglob("*.csv"))
ARRAYS = [(128, 128), (32, 32), (8, 16), (256, 64), (3, 5)]


@pytest.mark.parametrize("rows,cols", ARRAYS, ids=[f"{r}x{c}" for r, c in ARRAYS])
@pytest.mark.parametrize("topology", TOPOLOGIES, ids=[p.stem for p in TOPOLOGIES])
def test_layer_cycles_equal_scalesim(systolic_bin, tmp_path, topology, rows, cols):
    report = run_report("-c", REPO / "configs" / "tpu-v4i.yaml", "-w", topology,
                        "--set", "mxu.convention=scalesim", "--set", "memory.ideal=true",
                        "--set", "mxu.count=1", "--set", f"mxu.rows={rows}",
                        "--set", "sram.vmem_bytes=1 GiB", "--set", "sram.accumulators_bytes=1 GiB",
                        "--set", "sram.weights_bytes=1 GiB", "--set", "hbm.capacity_bytes=64 GiB",
                        "--set", f"mxu.cols={cols}", outdir=tmp_path)
    expected = scalesim_total_cycles(topology, rows, cols)
    got = [(l["name"], l["cycles"] - 1) for l in report["chips"][0]["layers"]]
    assert len(got) == len(expected)
    assert got == [(name, cycles) for name, cycles in expected]
