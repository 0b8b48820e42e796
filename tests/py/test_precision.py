"""Mixed precision end to end (docs/precision.md): W8A16 and an fp8 KV cache move exactly the
bytes their widths say and no MAC more or less; a trace with dequantise ops and fp8 scales
replays to the same report; impossible type combinations exit 2 naming the key."""
import pytest

from conftest import REPO, require_python_module, run_cli, run_report

V4I = REPO / "configs" / "tpu-v4i.yaml"
MODELS = REPO / "traces" / "models"
REAL_MEMORY = ["--set", "memory.ideal=false", "--set", "hbm.capacity_bytes=32 GiB"]
# Llama-2-7B's streamed weights (32 layers x 202.4 M + the 32000 x 4096 LM head), in values.
LLAMA_WEIGHTS = 32 * 202375168 + 32000 * 4096


def decode(model, tmp_path, bucket="1x128"):
    return run_report("-c", V4I, "-w", MODELS / model, "--bucket", bucket, "--phase", "decode", *REAL_MEMORY,
                      outdir=tmp_path / model)


def test_w8a16_reads_half_the_weight_bytes_and_the_same_macs(systolic_bin, tmp_path):
    bf16, w8 = decode("llama2-7b.yaml", tmp_path), decode("llama2-7b-w8a16.yaml", tmp_path)
    # Everything else (activations, KV cache) is bf16 in both: the difference is one byte a weight.
    assert bf16["totals"]["hbm_bytes_read"] - w8["totals"]["hbm_bytes_read"] == LLAMA_WEIGHTS
    assert w8["totals"]["macs"] == bf16["totals"]["macs"]
    assert w8["totals"]["seconds"] < bf16["totals"]["seconds"]
    # The matmuls run in bf16 after the VPU dequantised every weight (one multiply each).
    assert {l["dtype"] for l in w8["chips"][0]["layers"] if l["kind"] in ("matmul", "attention")} == {"bf16"}
    assert w8["energy_pj"]["by_component"]["hbm"] < bf16["energy_pj"]["by_component"]["hbm"]
    # The dequantise ops are the matmul layers' own VPU time (bf16 matmuls have none).
    assert w8["chips"][0]["op_kinds"]["matmul"]["vpu_busy_cycles"] > 0 == bf16["chips"][0]["op_kinds"]["matmul"]["vpu_busy_cycles"]


def test_fp8_kv_cache_reads_half_the_kv_bytes(systolic_bin, tmp_path):
    bf16, fp8 = decode("llama2-7b.yaml", tmp_path, "2x256"), decode("llama2-7b-fp8kv.yaml", tmp_path, "2x256")
    kv_values = 2 * 32 * 32 * 128 * 256 * 2  # K and V, 32 layers x 32 heads x 128, L = 256, 2 slots
    assert bf16["totals"]["hbm_bytes_read"] - fp8["totals"]["hbm_bytes_read"] == kv_values
    assert fp8["totals"]["macs"] == bf16["totals"]["macs"]


def test_trace_with_dequantise_and_fp8_scale_replays_to_the_same_report(systolic_bin, tmp_path):
    model = tmp_path / "tiny.yaml"
    model.write_text("name: tiny\nlayers: 2\nd_model: 256\nheads: 2\nd_ff: 512\nvocab: 512\nnorm: rmsnorm\n"
                     "activation: silu\ngated_ffn: true\npositional: rope\nweight_dtype: int4\n"
                     "kv_dtype: fp8_e5m2\nfp8_scale: 0.25\n")
    args = ["-c", V4I, "-w", model, "--bucket", "2x64", "--phase", "decode", *REAL_MEMORY]
    trace = tmp_path / "tiny.trace"
    run_cli("compile", *args, "-o", trace)
    text = trace.read_text()
    assert "kind=dequantize" in text and "dtype=int4 to=bf16" in text
    assert "b=fp8_e5m2 b_scale=0.25" in text
    a = run_report("-c", V4I, "-t", trace, *REAL_MEMORY, outdir=tmp_path / "a")
    b = run_report(*args, outdir=tmp_path / "b")
    assert a["chips"][0]["layers"] == b["chips"][0]["layers"] and a["totals"] == b["totals"]


@pytest.mark.parametrize("extra,needle", [
    ("kv_dtype: int4\n", "key 'kv_dtype': int4 with activation_dtype bf16; expected one of fp8_e4m3, fp8_e5m2, "
                         "bf16, fp32"),
    ("activation_dtype: int4\n", "key 'activation_dtype': int4 is a weight storage type"),
    ("dtype: int8\nweight_dtype: fp8_e4m3\n", "key 'weight_dtype': int8 activations multiply int8 or int4 weights"),
    ("kv_dtype: int8\n", "key 'kv_dtype': int8 with activation_dtype bf16"),
])
def test_impossible_model_precision_exits_2_naming_the_key(systolic_bin, tmp_path, extra, needle):
    model = tmp_path / "m.yaml"
    model.write_text((MODELS / "llama2-7b.yaml").read_text().replace("dtype: bf16\n", "") + extra)
    proc = run_cli("run", "-c", V4I, "-w", model, "--bucket", "1x16", "-o", tmp_path / "o", check=False)
    assert proc.returncode == 2
    assert f"{model}:" in proc.stderr and needle in proc.stderr
    assert not (tmp_path / "o" / "report.json").exists()


@pytest.mark.parametrize("entry,needle", [
    ("a_dtype: int4, b_dtype: int4", "w.yaml:2: GEMM 'g': key 'a_dtype': int4 is a weight storage type"),
    ("a_dtype: int8, b_dtype: fp8_e4m3", "w.yaml:2: GEMM 'g': key 'b_dtype': int8 activations multiply int8 or "
                                         "int4 weights (int32 accumulation), not fp8_e4m3; with a_dtype int8 "
                                         "expected b_dtype one of int8, int4"),
    ("b_dtype: bf17", "w.yaml:2: key 'b_dtype': expected one of int8, fp8_e4m3"),
])
def test_impossible_gemm_operands_exit_2_naming_the_key(systolic_bin, tmp_path, entry, needle):
    w = tmp_path / "w.yaml"
    w.write_text("gemms:\n  - {name: g, m: 8, k: 128, n: 128, " + entry + "}\n")
    proc = run_cli("run", "-c", V4I, "-w", w, "-o", tmp_path / "o", check=False)
    assert proc.returncode == 2
    assert needle in proc.stderr
    assert not (tmp_path / "o" / "report.json").exists()


def test_operand_left_to_the_chip_is_checked_at_compile_time(systolic_bin, tmp_path):
    # b_dtype int8 with A from mxu.dtype = fp8_e4m3: no float type to dequantise into.
    w = tmp_path / "w.yaml"
    w.write_text("gemms:\n  - {name: g, m: 8, k: 128, n: 128, b_dtype: int8}\n")
    proc = run_cli("run", "-c", V4I, "-w", w, "--set", "mxu.dtype=fp8_e4m3", "-o", tmp_path / "o", check=False)
    assert proc.returncode == 2
    assert "GEMM 'g': operands fp8_e4m3 x int8" in proc.stderr and "mxu.dtype = fp8_e4m3" in proc.stderr


def test_cli_and_python_overrides_match_the_preset(systolic_bin, tmp_path):
    # --weight-dtype int8 over the bf16 file is the W8A16 preset, to the byte and the cycle.
    preset = decode("llama2-7b-w8a16.yaml", tmp_path)
    flag = run_report("-c", V4I, "-w", MODELS / "llama2-7b.yaml", "--bucket", "1x128", "--phase", "decode",
                      "--weight-dtype", "int8", *REAL_MEMORY, outdir=tmp_path / "flag")
    assert flag["totals"] == preset["totals"]
    systolic = require_python_module()  # skips only this test when the module is not built
    config = systolic.load_config(V4I, ["memory.ideal=false", "hbm.capacity_bytes=32 GiB"])
    py = systolic.run(config, MODELS / "llama2-7b.yaml", bucket="1x128", phase="decode", weight_dtype="int8")
    assert py.totals["hbm_bytes_read"] == preset["totals"]["hbm_bytes_read"]


@pytest.mark.parametrize("args,needle", [
    (["--kv-dtype", "int4"], "key 'kv_dtype': int4 with activation_dtype bf16"),
    (["--weight-dtype", "int3"], "--weight-dtype 'int3': expected one of int8, fp8_e4m3, fp8_e5m2, bf16, fp16, "
                                 "fp32, int4 (did you mean 'int8'?)"),
])
def test_bad_override_exits_2(systolic_bin, tmp_path, args, needle):
    proc = run_cli("run", "-c", V4I, "-w", MODELS / "llama2-7b.yaml", "--bucket", "1x16", *args,
                   "-o", tmp_path / "o", check=False)
    assert proc.returncode == 2 and needle in proc.stderr
    assert not (tmp_path / "o" / "report.json").exists()


def test_override_on_a_gemm_list_is_an_error(systolic_bin, tmp_path):
    proc = run_cli("run", "-c", V4I, "-w", REPO / "traces" / "gemms" / "example.yaml", "--weight-dtype", "int8",
                   "-o", tmp_path / "o", check=False)
    assert proc.returncode == 2 and "a GEMM list gives a_dtype and b_dtype per entry" in proc.stderr
