"""A SCALE-Sim v2 .cfg file as the chip config (-c scale.cfg; docs/workloads.md, "SCALE-Sim .cfg
files"): the array it describes gives SCALE-Sim's own cycle counts (the independent
re-implementation in scalesim_reference.py), and the keys with no counterpart are refused by
name and line."""
import json

import pytest

from conftest import REPO, run_cli, run_report
from scalesim_reference import scalesim_total_cycles

SHIPPED = REPO / "traces" / "scalesim" / "scale.cfg"
RESNET = REPO / "traces" / "topologies" / "resnet18.csv"


def cfg(tmp_path, rows=32, cols=16, dataflow="ws", kb=1048576, extra=""):
    path = tmp_path / "scale.cfg"
    path.write_text(f"""[general]
run_name = cfg_test

[architecture_presets]
ArrayHeight:    {rows}
ArrayWidth:     {cols}
IfmapSramSzkB:    {kb}
FilterSramSzkB:   {kb}
OfmapSramSzkB:    {kb}
IfmapOffset:    0
FilterOffset:   10000000
OfmapOffset:    20000000
Dataflow : {dataflow}
{extra}
[run_presets]
InterfaceBandwidth: CALC
""")
    return path


def test_a_cfg_array_gives_scalesims_cycles(systolic_bin, tmp_path):
    report = run_report("-c", cfg(tmp_path), "-w", RESNET, "--set", "hbm.capacity_bytes=64 GiB", outdir=tmp_path / "o")
    expected = scalesim_total_cycles(RESNET, 32, 16)
    assert [(l["name"], l["cycles"] - 1) for l in report["chips"][0]["layers"]] == expected


def test_the_shipped_cfg_maps_its_keys(systolic_bin, tmp_path):
    r = run_report("-c", SHIPPED, "-w", REPO / "traces" / "gemms" / "example.yaml", outdir=tmp_path / "o")
    c = r["config"]
    assert c["name"] == "scale_example_run_32x32_os"
    assert (c["mxu"]["rows"], c["mxu"]["cols"], c["mxu"]["count"]) == (32, 32, 1)
    assert (c["mxu"]["dataflow"], c["mxu"]["convention"], c["mxu"]["dtype"]) == ("os", "scalesim", "int8")
    assert c["sram"]["vmem_bytes"] == c["sram"]["weights_bytes"] == c["sram"]["accumulators_bytes"] == 64 * 1024
    assert c["memory"]["ideal"] is True and r["memory_timing"] == "ideal"
    # --set still applies on top of the file.
    r8 = run_report("-c", SHIPPED, "-w", REPO / "traces" / "gemms" / "example.yaml", "--set", "mxu.rows=8",
                    outdir=tmp_path / "o8")
    assert r8["config"]["mxu"]["rows"] == 8


@pytest.mark.parametrize("extra,line,needle", [
    ("ReadRequestBuffer: 32", 14, "key 'ReadRequestBuffer' in [architecture_presets]: SCALE-Sim key with no counterpart"),
    ("MemoryBanks: 4", 14, "key 'MemoryBanks': 4 banks: expected 1"),
    ("IfmapCustomLayout: True", 14, "key 'IfmapCustomLayout': True is not read here"),
    ("OnChipMemoryBanks: 1\nFilterCustomLayout: False\nSparsityy: 1", 16, "key 'Sparsityy' in [architecture_presets]"),
    ("this line has no separator", 14, "expected [section] or key = value"),
])
def test_keys_with_no_counterpart_exit_2_naming_line_and_key(systolic_bin, tmp_path, extra, line, needle):
    proc = run_cli("run", "-c", cfg(tmp_path, extra=extra), "-w", RESNET, "-o", tmp_path / "o", check=False)
    assert proc.returncode == 2
    assert f"scale.cfg:{line}: {needle}" in proc.stderr, proc.stderr
    assert not (tmp_path / "o").exists()


def test_bad_values_and_user_bandwidth_exit_2(systolic_bin, tmp_path):
    proc = run_cli("run", "-c", cfg(tmp_path, rows=0), "-w", RESNET, "-o", tmp_path / "o", check=False)
    assert proc.returncode == 2 and "scale.cfg:5: key 'ArrayHeight' (as mxu.rows=0): expected an integer" in proc.stderr
    proc = run_cli("run", "-c", cfg(tmp_path, dataflow="xs"), "-w", RESNET, "-o", tmp_path / "o", check=False)
    assert proc.returncode == 2 and "scale.cfg:13: key 'Dataflow' (as mxu.dataflow=xs)" in proc.stderr
    path = cfg(tmp_path)
    path.write_text(path.read_text().replace("CALC", "USER"))
    proc = run_cli("run", "-c", path, "-w", RESNET, "-o", tmp_path / "o", check=False)
    assert proc.returncode == 2 and "scale.cfg:16: key 'InterfaceBandwidth': USER is not read here" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_compute_report_csv_reads_as_scalesims(systolic_bin, tmp_path):
    out = tmp_path / "o"
    proc = run_cli("run", "-c", cfg(tmp_path), "-w", RESNET, "--set", "hbm.capacity_bytes=64 GiB", "-o", out,
                   "--scalesim-reports")
    assert f"{out / 'COMPUTE_REPORT.csv'}" in proc.stdout.splitlines()[-1]
    lines = (out / "COMPUTE_REPORT.csv").read_text().splitlines()
    assert lines[0] == "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,"
    rows = [[field.strip() for field in line.split(",")] for line in lines[1:]]
    assert all(row[-1] == "" for row in rows)  # SCALE-Sim ends every line with a comma
    expected = scalesim_total_cycles(RESNET, 32, 16)
    assert [int(row[0]) for row in rows] == list(range(len(expected)))
    assert [int(row[1]) - 1 for row in rows] == [cycles for _, cycles in expected]
    # Overall Util % = useful MACs / (PEs x cycles), from the layer's own M, K, N.
    layers = json.loads((out / "report.json").read_text())["chips"][0]["layers"]
    for row, layer in zip(rows, layers):
        macs = layer["m"] * layer["k"] * layer["n"] * layer["repeat"]
        assert float(row[3]) == pytest.approx(100 * macs / (32 * 16 * int(row[1])))
    # The other two CSVs and a multi-chip run's refusal: tests/py/test_scalesim_reports.py.
