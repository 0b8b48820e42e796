"""Validation against published hardware (docs/validation.md, scripts/validate.py): the six
TPU v1 apps of Jouppi et al. (ISCA 2017) within the ratio bands the page states and never
above their roofline; the roofline inequalities on every preset; the JetStream v5e serving
figures against their bounds; the single-chip v5e preset, Llama-3-8B and its bucket set; GEMM
list vector entries costed by the VPU's closed form."""
import importlib.util
import json
import math

import pytest
import yaml

from conftest import REPO, run_cli, run_report

spec = importlib.util.spec_from_file_location("validate", REPO / "scripts" / "validate.py")
validate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(validate)

V5E = REPO / "configs" / "tpu-v5e.yaml"
LLAMA3 = REPO / "traces" / "models" / "llama3-8b.yaml"
GIB = 1 << 30


@pytest.fixture(scope="module")
def tpu_v1(systolic_bin):
    return {r.app: r for r in validate.tpu_v1_rows()}


def test_tpu_v1_apps_are_built_as_table_1_describes():
    # Weights and MACs per weight byte of each GEMM list against the paper's Table 1.
    for app in validate.TPU_V1_APPS:
        macs, weight_bytes = validate.gemm_list_intensity(validate.TPU_V1_GEMMS / app.file)
        assert weight_bytes == pytest.approx(app.weights, rel=0.01), app.name
        assert macs / weight_bytes == pytest.approx(app.ops_per_weight_byte, rel=0.01), app.name


def test_tpu_v1_apps_never_beat_their_roofline(tpu_v1):
    for r in tpu_v1.values():
        assert r.simulated_tops <= r.layer_roofline_tops <= r.roofline_tops * (1 + 1e-9), r.app
        assert r.simulated_tops <= r.mxu_bound_tops <= 91.75, r.app
        assert r.bound == ("memory" if r.ops_per_weight_byte < r.ridge else "compute")
    # 92 TOPS over 34.1 GB/s of DDR3: the ridge at 1344 MACs per weight byte (the paper: 1350).
    assert tpu_v1["MLP0"].ridge == pytest.approx(65536 * 0.7e9 / 34.128e9, rel=1e-6)


def test_tpu_v1_ratios_in_the_documented_bands(tpu_v1):
    for r in tpu_v1.values():
        assert r.in_band(), f"{r.app}: simulated / measured = {r.ratio:.3f}, band {r.band}"
    # The memory-bound MLPs and LSTM0 land below the paper, LSTM1 above it (docs/validation.md).
    assert max(tpu_v1[a].ratio for a in ("MLP0", "MLP1", "LSTM0")) < 1 < tpu_v1["LSTM1"].ratio


def test_cnn0_mxu_bound_rate_is_the_closed_form_of_its_compiled_matmuls(tpu_v1, tmp_path):
    # The compiled program, as docs/validation.md describes it: per layer two activation blocks
    # of 2221 and 667 rows (a block's 32-bit outputs [m, 236] fill at most half of the 4 MiB
    # accumulators), each multiplied in 4 weight tiles of 512 rows (512 x 236 int8 in one 128 KiB
    # copy of the weight buffer: two folds) and one of 76 rows (one fold).
    trace = tmp_path / "cnn0.trace"
    run_cli("compile", "-c", validate.CONFIGS / "tpu-v1.yaml", "-w", validate.TPU_V1_GEMMS / "cnn0.yaml",
            "-o", trace)
    matmuls = [dict(f.split("=", 1) for f in line.split() if "=" in f)
               for line in trace.read_text().splitlines() if line.strip().startswith("matmul ")]
    layer0 = [(int(i["m"]), int(i["k"]), int(i["n"])) for i in matmuls if i["layer"] == "0"]
    assert layer0 == [(2221, 512, 236)] * 4 + [(2221, 76, 236)] + [(667, 512, 236)] * 4 + [(667, 76, 236)]
    assert len(matmuls) == 16 * len(layer0)
    # Every instruction at the tpu convention's closed form (docs/mxu.md), F folds of M rows on
    # the 256 x 256 array: R + (F - 1) max(M, R) + M + R + C - 2 cycles.
    R = C = 256

    def cycles(m, k, n):
        folds = -(-k // R) * -(-n // C)
        return R + (folds - 1) * max(m, R) + m + R + C - 2

    busy = sum(cycles(int(i["m"]), int(i["k"]), int(i["n"])) for i in matmuls)
    assert busy == 16 * 33652
    macs = 16 * 2888 * 2124 * 236
    assert tpu_v1["CNN0"].mxu_bound_tops == pytest.approx(2 * macs / (busy / 0.7e9) / 1e12, rel=1e-4)
    # The same figure as docs/validation.md explains it: 85 % of the array mapped (236 of 256
    # columns, 2124 of 9 x 256 rows), streaming 9 x 2888 of each layer's 33,652 cycles (each of
    # the 10 instructions pays 2R + C - 2 = 766 cycles of fill and drain): 0.66 of 91.75 TOPS.
    mapping = 236 / 256 * 2124 / (9 * 256)
    assert tpu_v1["CNN0"].mxu_bound_tops == pytest.approx(91.75 * mapping * 9 * 2888 / 33652, rel=0.01)
    assert 9 * 2888 + 10 * (2 * R + C - 2) == 33652


def test_mlp0_gap_is_the_activation_traffic(systolic_bin):
    # The simulated TPU v1 moves every layer's input and output through DDR3 (the real one keeps
    # them in its Unified Buffer): 20 MB of weights + 5 x 2 x 200 x 2000 B of activations.
    report = validate.run(validate.CONFIGS / "tpu-v1.yaml", validate.TPU_V1_GEMMS / "mlp0.yaml")
    moved = report["totals"]["hbm_bytes_read"] + report["totals"]["hbm_bytes_written"]
    assert report["chips"][0]["memory"]["hbm"]["footprint"]["weights"] == pytest.approx(20e6, rel=0.001)
    assert moved == pytest.approx(20e6 + 5 * 2 * 200 * 2000, rel=0.002)
    # Only the weights at the bandwidth the run sustained: within 15 % of the paper's 12.3 TOPS.
    sustained = moved / report["totals"]["seconds"]
    weights_only_tops = 2 * report["totals"]["macs"] / (20e6 / sustained) / 1e12
    assert weights_only_tops == pytest.approx(12.3, rel=0.15)


@pytest.fixture(scope="module")
def roofline(systolic_bin):
    return validate.roofline_rows(full=True)


def test_roofline_on_every_preset(roofline):
    presets = {r.preset for r in roofline}
    assert presets == {"tiny-4x4", "tpu-v1", "tpu-v4i", "tpu-v5e", "tpu-v5e int8", "tpu-v5e-8", "tpu-v5p-64"}
    for r in roofline:
        assert r.physical(), f"{r.preset} {r.case}: {r.seconds} s beats its floor"
        assert r.seconds >= r.floor * (1 - 1e-9), f"{r.preset} {r.case}"
        assert r.over_floor() <= r.margin, f"{r.preset} {r.case}: {r.over_floor():.3f} over, margin {r.margin}"
        assert r.fits, f"{r.preset} {r.case}: does not fit its HBM"
    cases = {(r.preset, r.case.split(" [")[0]) for r in roofline}
    for p in presets:
        assert (p, "compute") in cases and (p, "memory") in cases
    assert sum("decode" in r.case for r in roofline) >= 3 and sum("prefill" in r.case for r in roofline) >= 3


def test_int8_on_v5e_has_half_the_bf16_compute_floor(roofline):
    # Cloud TPU v5e: 394 TOPS int8 against 197 TFLOPS bf16 (mxu.rate.int8 = 2 in the preset).
    row = {(r.preset, r.case.split(" [")[0]): r for r in roofline}
    bf16, int8 = row[("tpu-v5e", "compute")], row[("tpu-v5e int8", "compute")]
    assert int8.compute_floor == pytest.approx(bf16.compute_floor / 2)
    assert int8.array_floor == pytest.approx(bf16.array_floor / 2)
    assert bf16.seconds / int8.seconds > 1.9


def test_roofline_cases_sit_on_their_side(roofline):
    for r in roofline:
        if r.case.startswith("compute") and r.preset != "tpu-v1":
            assert r.array_floor > 4 * r.memory_floor, r.preset
        if r.preset == "tiny-4x4":
            # 16 MACs per cycle at 100 MHz over 34 GB/s of DDR3: the ridge at 0.05 MAC per byte,
            # so no GEMM is memory-bound; one row is bound by loading a fold every R cycles.
            assert r.array_floor > 10 * r.memory_floor
        elif r.case.startswith("memory") or "decode" in r.case:
            assert r.memory_floor > r.array_floor, f"{r.preset} {r.case}"


def test_serving_figures_against_their_bounds(systolic_bin):
    rows = validate.serving_rows()
    assert len(rows) == 2
    for r in rows:
        assert r.fits and r.physical(), r.figure
        # Documented band: the published throughput (prefill included, ShareGPT lengths) is
        # 0.6-1.0 of one full-cache decode step's rate.
        assert 0.6 <= r.published_tokens_per_s / r.simulated_tokens_per_s <= 1.0, r.figure


def test_tpu_v5e_preset_is_one_v5e_chip(systolic_bin, tmp_path):
    assert yaml.safe_load(V5E.read_text())["memory"]["ideal"] is False
    wl = tmp_path / "g.yaml"
    wl.write_text("gemms:\n  - {name: g, m: 128, k: 128, n: 512}\n")
    report = run_report("-c", V5E, "-w", wl, outdir=tmp_path / "o")
    c = report["config"]
    assert report["system"]["chips"] == 1 and report["links"] == []  # one chip, no interconnect
    assert 2 * c["mxu"]["rows"] * c["mxu"]["cols"] * c["mxu"]["count"] * c["clock_mhz"] * 1e6 == \
        pytest.approx(197e12, rel=0.005)
    hbm = report["chips"][0]["memory"]["hbm"]
    assert hbm["peak_gbps"] == pytest.approx(819.2)  # 16 ch x 2 pseudo x 8 B x 3.2 GT/s, [GC] 819
    assert hbm["capacity_bytes"] == 16 * GIB
    assert report["totals"]["hbm_bytes_read"] > 0  # the real memory system ran


def test_llama3_8b_bucket_set_fits_with_int8_weights(systolic_bin, tmp_path):
    buckets = yaml.safe_load((REPO / "traces" / "buckets" / "llama3-8k.yaml").read_text())
    model = yaml.safe_load(LLAMA3.read_text())
    kv_per_token = 2 * model["layers"] * model["kv_heads"] * model["head_dim"] * 2
    assert kv_per_token == 131072
    params = 8.03e9
    for b, length in buckets["decode"] + buckets["prefill"]:
        assert length <= model["max_seq"]
        assert params * 1 + b * length * kv_per_token < 16 * GIB, (b, length)  # int8 weights
    # The simulator's HBM layout agrees with that arithmetic (run in bf16 until int8 lands):
    # bf16 weights leave no room for the pool's KV cache, so the 16 GiB chip refuses the run.
    args = ("-c", V5E, "-w", LLAMA3, "--phase", "decode", "--bucket", "16x2048", "--set", "memory.ideal=false")
    proc = run_cli("run", *args, "-o", tmp_path / "refused", "-q", check=False)
    assert proc.returncode == 2 and "does not fit" in proc.stderr
    assert not (tmp_path / "refused" / "report.json").exists()
    # Its footprint, on a what-if HBM large enough to hold it: the pool's KV cache, and the bf16
    # weights, which with the table left out are the arithmetic's parameters.
    report = run_report(*args, "--set", "hbm.capacity_bytes=24 GiB", outdir=tmp_path / "o")
    fp = report["chips"][0]["memory"]["hbm"]["footprint"]
    assert fp["kv_cache"] == 16 * 2048 * kv_per_token
    embeddings = model["vocab"] * model["d_model"]  # a lookup, not streamed
    assert fp["weights"] / 2 + embeddings == pytest.approx(params, rel=0.001)
    assert fp["weights"] + fp["kv_cache"] + fp["activations"] > 16 * GIB
    assert fp["weights"] / 2 + embeddings + fp["kv_cache"] + fp["activations"] < 16 * GIB


def test_gemm_list_vector_entries_cost_the_vpu_closed_form(systolic_bin, tmp_path):
    # silu over [64, 3072] on the default VPU (128 lanes x 8 sublanes, 2 vreg ops per cycle,
    # T = 4, 8 cycles latency): 8 row groups x 24 vregs x (3 + 2T) ops = 2112 ops, 1056 cycles.
    wl = tmp_path / "v.yaml"
    wl.write_text("gemms:\n  - {name: g, m: 64, k: 256, n: 3072}\n"
                  "  - {name: act, vector: silu, rows: 64, cols: 3072}\n"
                  "  - {name: up, vector: mul, rows: 64, cols: 1024, repeat: 3}\n")
    for mode in ("false", "true"):
        report = run_report("-c", V5E, "-w", wl, "--set", f"memory.ideal={mode}", outdir=tmp_path / mode)
        layers = {l["name"]: l for l in report["chips"][0]["layers"]}
        assert layers["act"]["kind"] == "vector"
        assert layers["act"]["vpu_busy_cycles"] == 8 + math.ceil(8 * 24 * (3 + 2 * 4) / 2)
        assert layers["up"]["vpu_busy_cycles"] == 3 * (8 + math.ceil(8 * 8 * 1 / 2))
        assert report["totals"]["macs"] == 64 * 256 * 3072


def test_gemm_list_vector_entry_errors(systolic_bin, tmp_path):
    wl = tmp_path / "bad.yaml"
    wl.write_text("gemms:\n  - {name: g, m: 4, k: 4, n: 4}\n  - {name: act, vector: sigmoid, rows: 4, cols: 4}\n")
    proc = run_cli("run", "-c", V5E, "-w", wl, "-o", tmp_path / "out", check=False)
    assert proc.returncode == 2
    assert "bad.yaml:3" in proc.stderr and "key 'vector'" in proc.stderr and "silu" in proc.stderr
    assert not (tmp_path / "out" / "report.json").exists()


def test_validate_script_writes_json(systolic_bin, tmp_path):
    out = tmp_path / "v.json"
    assert validate.main(["--only", "tpu-v1", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["tpu_v1"]
    assert [r["app"] for r in rows] == ["MLP0", "MLP1", "LSTM0", "LSTM1", "CNN0", "CNN1"]
