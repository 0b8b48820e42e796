"""The energy model: the blocks' own counts times the config's per-event energies, checked
against the report's independent counts; both breakdowns add up to the total; halving the
operand width halves HBM bytes and energy."""
import pytest

from conftest import REPO, run_report

V4I = REPO / "configs" / "tpu-v4i.yaml"


def weight_stream(tmp_path, dtype):
    wl = tmp_path / f"{dtype}.yaml"
    wl.write_text(f"gemms:\n  - {{name: ws, m: 8, k: 4096, n: 4096, dtype: {dtype}}}\n")
    # At 45 nm, the node of the per-event energies (Horowitz), so they apply unscaled.
    return run_report("-c", V4I, "-w", wl, "--set", "memory.ideal=false", "--set", "area.node=45nm",
                      outdir=tmp_path / dtype)


def test_components_from_the_reports_own_counts(systolic_bin, tmp_path):
    # Recomputed here from counts the report gives elsewhere (totals, op_kinds) and the config's
    # per-event energies, not from the energy model's own terms; then the total.
    r = weight_stream(tmp_path, "bf16")
    e, cfg, t = r["energy_pj"], r["config"]["energy"], r["totals"]
    c = e["by_component"]
    assert c["hbm"] == pytest.approx(cfg["hbm_read_pj_per_byte"] * t["hbm_bytes_read"]
                                     + cfg["hbm_write_pj_per_byte"] * t["hbm_bytes_written"], rel=1e-12)
    assert c["dma"] == pytest.approx(cfg["dma_pj_per_byte"] * r["chips"][0]["op_kinds"]["dma"]["bytes"], rel=1e-12)
    mxus = r["config"]["mxu"]["count"]
    # Leakage by hand: four 128x128 MXUs at 2 W each; 16 + 128 + 4 MiB of scratchpads at 1/24 W
    # per MiB; the HBM's 3 W (docs/energy.md).
    static_w = 4 * 2.0 + (16 + 128 + 4) / 24 + 3.0
    assert c["static"] == pytest.approx(static_w * t["seconds"] * 1e12, rel=1e-12)
    pe_cycles = mxus * r["config"]["mxu"]["rows"] * r["config"]["mxu"]["cols"] * t["cycles"]
    assert c["mxu"] == pytest.approx(t["macs_issued"] * cfg["mac_bf16_pj"]
                                     + (pe_cycles - t["macs_issued"]) * cfg["pe_idle_pj"], rel=1e-12)
    assert c["hbm"] > 0 and c["dma"] > 0 and c["weights"] > 0
    assert e["total"] == pytest.approx(sum(c.values()), rel=1e-12)
    assert sum(e["by_op_kind"].values()) == pytest.approx(e["total"], rel=1e-12)


def test_mxu_energy_is_macs_times_mac_energy_plus_idle_pes(systolic_bin, tmp_path):
    r = weight_stream(tmp_path, "bf16")
    macs = 8 * 4096 * 4096
    pe_cycles = 4 * 128 * 128 * r["totals"]["cycles"]
    # bf16 MAC 1.48 pJ, idle PE-cycle 0.02 pJ (docs/energy.md), tech_scale 1.
    assert r["energy_pj"]["by_component"]["mxu"] == pytest.approx(macs * 1.48 + (pe_cycles - macs) * 0.02)


def test_halving_the_operand_width_halves_hbm_bytes_and_energy(systolic_bin, tmp_path):
    wide, narrow = weight_stream(tmp_path, "bf16"), weight_stream(tmp_path, "fp8_e4m3")
    for key in ["hbm_bytes_read", "hbm_bytes_written"]:
        assert narrow["totals"][key] * 2 == wide["totals"][key]
    assert narrow["energy_pj"]["by_component"]["hbm"] * 2 == pytest.approx(
        wide["energy_pj"]["by_component"]["hbm"], rel=1e-12)


def test_tech_scale_scales_dynamic_energy_only(systolic_bin, tmp_path):
    wl = tmp_path / "g.yaml"
    wl.write_text("gemms:\n  - {name: g, m: 256, k: 1024, n: 1024}\n")
    base = run_report("-c", V4I, "-w", wl, outdir=tmp_path / "a")["energy_pj"]["by_component"]
    scaled = run_report("-c", V4I, "-w", wl, "--set", "energy.tech_scale=0.25",
                        outdir=tmp_path / "b")["energy_pj"]["by_component"]
    assert scaled["mxu"] == pytest.approx(base["mxu"] / 4)
    assert scaled["static"] == base["static"]


def gemm_energy(tmp_path, name, *sets):
    wl = tmp_path / "g.yaml"
    wl.write_text("gemms:\n  - {name: g, m: 256, k: 1024, n: 1024}\n")
    args = [a for s in sets for a in ("--set", s)]
    return run_report("-c", V4I, "-w", wl, "--set", "memory.ideal=false", *args, outdir=tmp_path / name)


def test_sram_energy_per_byte_grows_with_the_bank_size(systolic_bin, tmp_path):
    # A 64-bit access from an 8 KiB bank costs 10 pJ (Horowitz), 1.25 pJ a byte, and grows as the
    # square root of the bank: 32 banks of 16 MiB are 512 KiB each, 8x the root of 8 KiB: 10 pJ/B;
    # 64 MiB over 32 banks, 2 MiB each: 20 pJ/B. Each byte costs twice as much.
    small = gemm_energy(tmp_path, "small", "area.node=45nm", "sram.vmem_bytes=16 MiB")
    large = gemm_energy(tmp_path, "large", "area.node=45nm", "sram.vmem_bytes=64 MiB")
    def vmem_bytes(r):
        pad = r["chips"][0]["memory"]["scratchpads"]["vmem"]
        return pad["bytes_read"] + pad["bytes_written"]

    assert vmem_bytes(small) > 0
    assert small["energy_pj"]["by_component"]["vmem"] == pytest.approx(10.0 * vmem_bytes(small), rel=1e-12)
    assert large["energy_pj"]["by_component"]["vmem"] == pytest.approx(20.0 * vmem_bytes(large), rel=1e-12)


def test_sram_leakage_grows_with_capacity(systolic_bin, tmp_path):
    small = gemm_energy(tmp_path, "small", "sram.vmem_bytes=16 MiB")
    large = gemm_energy(tmp_path, "large", "sram.vmem_bytes=64 MiB")
    # 48 MiB more at 1/24 W per MiB: 2 W more static power.
    assert large["power_w"]["static"] - small["power_w"]["static"] == pytest.approx(2.0, rel=1e-9)


def test_the_node_scales_on_chip_dynamic_energy_not_hbm_or_leakage(systolic_bin, tmp_path):
    at45 = gemm_energy(tmp_path, "n45", "area.node=45nm")["energy_pj"]["by_component"]
    at7 = gemm_energy(tmp_path, "n7", "area.node=7nm")["energy_pj"]["by_component"]
    for on_chip in ["mxu", "vmem", "weights", "accumulators", "dma"]:
        assert at7[on_chip] == pytest.approx(0.3 * at45[on_chip], rel=1e-12)  # docs/area.md: 7 nm 0.3
    assert at7["hbm"] == at45["hbm"] and at7["static"] == at45["static"]


def test_area_power_and_efficiency_fields_add_up(systolic_bin, tmp_path):
    # docs/report.md: the blocks add up to the chip, the system is chips x chip; power is the
    # energy over the time, static + dynamic; TOPS from the useful MACs.
    V5E8 = REPO / "configs" / "tpu-v5e-8.yaml"
    wl = tmp_path / "g.yaml"
    wl.write_text("gemms:\n  - {name: g, m: 256, k: 1024, n: 1024}\n")
    r = run_report("-c", V5E8, "-w", wl, outdir=tmp_path / "sys")
    a, p, e, t = r["area_mm2"], r["power_w"], r["efficiency"], r["totals"]
    assert sum(a["by_block"].values()) == pytest.approx(a["chip"], rel=1e-12)
    assert a["total"] == pytest.approx(8 * a["chip"], rel=1e-12) and a["by_block"]["ici"] > 0
    assert p["total"] == pytest.approx(r["energy_pj"]["total"] * 1e-12 / t["seconds"], rel=1e-12)
    assert p["static"] + p["dynamic"] == pytest.approx(p["total"], rel=1e-12)
    assert e["tops"] == pytest.approx(2 * t["macs"] / t["seconds"] / 1e12, rel=1e-12)
    assert e["tops_per_mm2"] == pytest.approx(e["tops"] / a["total"], rel=1e-12)
    assert e["tokens"] is None and e["usd_per_million_tokens"] is None  # a GEMM list has no tokens


def test_per_token_fields_of_a_decode_step(systolic_bin, tmp_path):
    # GPT-2 decode at 2x64: one step makes B = 2 tokens.
    r = run_report("-c", V4I, "-w", REPO / "traces" / "models" / "gpt2.yaml", "--bucket", "2x64",
                   "--phase", "decode", outdir=tmp_path / "d")
    e, seconds, joules = r["efficiency"], r["totals"]["seconds"], r["energy_pj"]["total"] * 1e-12
    assert e["tokens"] == 2
    assert e["tokens_per_s"] == pytest.approx(2 / seconds, rel=1e-12)
    assert e["energy_per_token_j"] == pytest.approx(joules / 2, rel=1e-12)
    assert e["tokens_per_s_per_w"] == pytest.approx(e["tokens_per_s"] / r["power_w"]["total"], rel=1e-12)
    # The cost proxy: the die over 4 years of seconds plus the power at 0.10 USD/kWh (docs/area.md).
    usd_per_s = e["die_cost_usd"] / (4 * 365.25 * 86400) + r["power_w"]["total"] * 0.10 / 3.6e6
    assert e["usd_per_million_tokens"] == pytest.approx(usd_per_s * seconds / 2 * 1e6, rel=1e-9)
