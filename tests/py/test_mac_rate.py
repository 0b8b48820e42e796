"""The MXU's MAC rate per compute type (mxu.rate.<type>, docs/mxu.md "MAC rate") end to end:
TPU v5e multiplies int8 at twice its bf16 rate (Cloud TPU v5e docs: 197 TFLOPS bf16, 394 TOPS
int8), so a compute-bound W8A8 GEMM takes about half the bf16 cycles while W8A16 (computed in
bf16) is unchanged; utilization is against each type's own peak, nothing runs faster than that
peak, the idle-PE energy is counted in PE-cycles and the MAC energy does not move.
"""
import pytest

from conftest import REPO, run_cli, run_report

V5E = REPO / "configs" / "tpu-v5e.yaml"
BIG = "gemms:\n  - {name: big, m: 4096, k: 4096, n: 4096%s}\n"  # 68.7 G MACs, compute-bound


def peak_macs_per_cycle(config, dtype):
    mxu = config["mxu"]
    return mxu["rows"] * mxu["cols"] * mxu["count"] * mxu["rate"].get(dtype, 1.0)


def gemm_report(tmp_path, name, types, *sets):
    wl = tmp_path / f"{name}.yaml"
    wl.write_text(BIG % types)
    args = [a for s in sets for a in ("--set", s)]
    return run_report("-c", V5E, "-w", wl, *args, outdir=tmp_path / name)


def test_v5e_preset_packs_two_int8_products(systolic_bin, tmp_path):
    report = gemm_report(tmp_path, "probe", "")
    assert report["config"]["mxu"]["rate"]["int8"] == 2.0
    assert report["config"]["mxu"]["rate"]["bf16"] == 1.0


def test_w8a8_twice_as_fast_as_bf16_and_within_its_peak(systolic_bin, tmp_path):
    bf16 = gemm_report(tmp_path, "bf16", ", dtype: bf16")
    int8 = gemm_report(tmp_path, "int8", ", dtype: int8")
    slow = gemm_report(tmp_path, "int8-rate1", ", dtype: int8", "mxu.rate.int8=1")
    tb, t8, t1 = bf16["totals"], int8["totals"], slow["totals"]
    assert tb["macs"] == t8["macs"] == t1["macs"] == 4096 ** 3  # MACs conserved
    assert tb["macs_issued"] == t8["macs_issued"] == t1["macs_issued"]
    # Measured: 1,106,978 bf16 cycles against 564,159 int8: 1.96x. Not quite 2: each layer's
    # first weight tile and the last fold's drain do not halve.
    speedup = tb["cycles"] / t8["cycles"]
    assert 1.9 < speedup <= 2.0, speedup
    assert t1["cycles"] / t8["cycles"] > 1.9  # the rate, not int8's narrower bytes, did it
    # The compute floor at each type's peak: 68.7 G MACs / (4 x 128 x 128 x 2) a cycle.
    for report, dtype in ((bf16, "bf16"), (int8, "int8"), (slow, "int8")):
        floor = report["totals"]["macs_issued"] / peak_macs_per_cycle(report["config"], dtype)
        assert floor <= report["totals"]["cycles"]
        # Utilization against the type's own peak: a near-perfect int8 run is ~93 %, not ~186 %.
        util = report["totals"]["utilization"]
        assert util == pytest.approx(report["totals"]["macs"] / peak_macs_per_cycle(report["config"], dtype)
                                     / report["totals"]["cycles"])
        assert 0.9 < util <= 1.0
        for layer in report["chips"][0]["layers"]:
            assert 0 < layer["utilization"] <= 1.0
            assert layer["mapping_efficiency"] <= 1.0


def test_w8a16_computes_in_bf16_at_the_bf16_rate(systolic_bin, tmp_path):
    types = ", a_dtype: bf16, b_dtype: int8"
    packed = gemm_report(tmp_path, "w8a16", types)
    plain = gemm_report(tmp_path, "w8a16-rate1", types, "mxu.rate.int8=1")
    assert packed["chips"][0]["layers"][0]["dtype"] == "bf16"
    assert packed["totals"]["cycles"] == plain["totals"]["cycles"]
    assert packed["chips"][0]["energy_pj"] == plain["chips"][0]["energy_pj"]


def test_energy_per_mac_unchanged_and_idle_counted_in_pe_cycles(systolic_bin, tmp_path):
    for rate in ("1", "2"):
        # At 45 nm, the per-event energies' own node: no node factor (docs/area.md).
        r = gemm_report(tmp_path, f"e{rate}", ", dtype: int8", f"mxu.rate.int8={rate}", "area.node=45nm")
        config, totals = r["config"], r["totals"]
        pe_cycles = config["mxu"]["rows"] * config["mxu"]["cols"] * config["mxu"]["count"] * totals["cycles"]
        # A PE packing two products is busy half a PE-cycle per MAC.
        busy = -(-totals["macs_issued"] // int(rate))
        idle = pe_cycles - busy
        assert idle > 0
        e = config["energy"]
        mac_pj = e["mac_int8_pj"] * totals["macs_issued"]  # per MAC, whatever the rate
        mxu_pj = r["chips"][0]["energy_pj"]["by_component"]["mxu"]
        assert mxu_pj == pytest.approx(e["tech_scale"] * (mac_pj + e["pe_idle_pj"] * idle), rel=1e-12)


@pytest.mark.parametrize("value", ["1.5", "0", "-2", "17", "0.3", "two"])
def test_bad_rate_is_an_input_error_naming_the_key(systolic_bin, tmp_path, value):
    out = tmp_path / "out"
    proc = run_cli("run", "-c", V5E, "-w", REPO / "traces" / "gemms" / "example.yaml",
                   "--set", f"mxu.rate.int8={value}", "-o", out, check=False)
    assert proc.returncode == 2
    assert "key 'mxu.rate.int8'" in proc.stderr and "n or 1/n for an integer n in [1, 16]" in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("dataflow", ["ws", "os", "is"])
def test_exact_and_fast_agree_through_the_pipeline_at_rate_two(systolic_bin, tmp_path, dataflow):
    wl = tmp_path / "g.yaml"
    wl.write_text("gemms:\n  - {name: a, m: 9, k: 21, n: 7}\n  - {name: b, m: 3, k: 40, n: 12, repeat: 2}\n")
    tiny = REPO / "configs" / "tiny-4x4.yaml"
    runs = {model: run_report("-c", tiny, "-w", wl, "--set", "mxu.rate.int8=2", "--set", f"mxu.model={model}",
                              "--set", f"mxu.dataflow={dataflow}", outdir=tmp_path / model)
            for model in ("exact", "fast")}
    assert runs["exact"]["totals"] == runs["fast"]["totals"]
    base = run_report("-c", tiny, "-w", wl, "--set", f"mxu.dataflow={dataflow}", outdir=tmp_path / "rate1")
    assert runs["exact"]["totals"]["cycles"] < base["totals"]["cycles"]
    assert runs["exact"]["totals"]["macs_issued"] == base["totals"]["macs_issued"]
