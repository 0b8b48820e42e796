"""HBM capacity, enforced on every path (docs/memory.md, "HBM layout and footprint"): a run,
a compile, a pack or a compiled trace that does not fit the chip's HBM exits 2 with the bytes
it needs and the key, and writes nothing; one that fills the HBM exactly runs. Both memory
modes: the check does not depend on memory.ideal. (Sweep points: test_sweep.py.)"""
import json

import pytest

from conftest import REPO, run_cli

V4I = REPO / "configs" / "tpu-v4i.yaml"
V5E8 = REPO / "configs" / "tpu-v5e-8.yaml"
MODELS = REPO / "traces" / "models"
SMALL = REPO / "tests" / "data" / "models" / "capacity-lm.yaml"
# capacity-lm decoding 4 slots of 512, worked by hand (tests/unit/test_capacity.cpp): weights =
# 1,441,792 parameters x 2 B; KV = 2 x 2 layers x 2 KV heads x 64 x (4 x 512) x 2 B; two
# activation regions of the logits, 4 x 1024 x 2 B each.
SMALL_SPLIT = {"weights": 1441792 * 2, "kv_cache": 2 * 2 * 2 * 64 * 4 * 512 * 2, "activations": 2 * 4 * 1024 * 2}
SMALL_BYTES = sum(SMALL_SPLIT.values())  # 4,997,120
MODES = ["memory.ideal=true", "memory.ideal=false"]


def refused(*args):
    proc = run_cli(*args, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("systolic: error: ") and proc.stdout == ""
    return proc.stderr


@pytest.mark.parametrize("mode", MODES)
def test_llama2_70b_decode_64x4096_on_v4i_is_refused(systolic_bin, tmp_path, mode):
    # 137.4 GB of weights + 85.9 GB of KV cache (2 x 80 x 8 x 128 x 64 x 4096 x 2 B) > 8 GiB.
    err = refused("run", "-c", V4I, "-w", MODELS / "llama2-70b.yaml", "--bucket", "64x4096", "--phase", "decode",
                  "--set", mode, "-o", tmp_path / "o", "--timeline", tmp_path / "t.json")
    assert "workload 'llama2-70b@decode-64x4096' needs 223.33 GB" in err
    assert "weights 137.43 GB, KV cache 85.90 GB" in err
    assert "hbm.capacity_bytes = 8589934592 B (8 GiB)" in err
    assert "--mesh pp=4,tp=8" in err and "int8 weights" in err and '--set "hbm.capacity_bytes=208 GiB"' in err
    assert "fewer decode slots" not in err  # the weights alone do not fit: no bucket would
    assert not (tmp_path / "o").exists() and not (tmp_path / "t.json").exists()
    # compile refuses it before writing the trace
    refused("compile", "-c", V4I, "-w", MODELS / "llama2-70b.yaml", "--bucket", "64x4096", "--phase", "decode",
            "--set", mode, "-o", tmp_path / "70b.trace")
    assert not (tmp_path / "70b.trace").exists()


@pytest.mark.parametrize("mode", MODES)
def test_a_workload_that_fills_the_hbm_exactly_runs(systolic_bin, tmp_path, mode):
    args = ["-c", V4I, "-w", SMALL, "--bucket", "4x512", "--phase", "decode", "--set", mode]
    run_cli("run", *args, "--set", f"hbm.capacity_bytes={SMALL_BYTES}", "-o", tmp_path / "o", "-q")
    hbm = json.loads((tmp_path / "o" / "report.json").read_text())["chips"][0]["memory"]["hbm"]
    assert hbm["footprint"] == SMALL_SPLIT
    assert hbm["footprint_bytes"] == hbm["capacity_bytes"] == SMALL_BYTES and hbm["fits"] is True
    err = refused("run", *args, "--set", f"hbm.capacity_bytes={SMALL_BYTES - 1}", "-o", tmp_path / "short")
    assert f"needs 0.00 GB ({SMALL_BYTES} B) of HBM" in err
    assert f"hbm.capacity_bytes = {SMALL_BYTES - 1} B" in err
    assert not (tmp_path / "short").exists()


def test_each_chip_share_is_checked_after_sharding(systolic_bin, tmp_path):
    # --tp 8 leaves each v5e chip 1/8 of 223 GB: 27.9 GB, more than its 16 GiB.
    err = refused("run", "-c", V5E8, "-w", MODELS / "llama2-70b.yaml", "--bucket", "64x4096", "--phase", "decode",
                  "--tp", "8", "-o", tmp_path / "o")
    assert "(chip 0's share, --tp 8) needs 27.9" in err and "hbm.capacity_bytes = 17179869184 B (16 GiB)" in err
    assert not (tmp_path / "o").exists()


def test_pack_refuses_a_bucket_set_whose_decode_shape_cannot_hold_its_kv_cache(systolic_bin, tmp_path):
    # Llama-2-7B with 16 GiB of HBM (a what-if): the first set fits; in the second, prefill
    # [1, 512] and decode [1, 512] fit (13.5 GB), decode [64, 4096] needs 137.4 GB of KV cache.
    # Every set is checked before anything runs.
    fits = tmp_path / "fits.yaml"
    fits.write_text("prefill: [[1, 512]]\ndecode: [[2, 1024]]\n")
    buckets = tmp_path / "too-long.yaml"
    buckets.write_text("name: too-long\nprefill: [[1, 512]]\ndecode:\n  - [1, 512]\n  - [64, 4096]\n")
    err = refused("pack", "-c", V4I, "--set", "hbm.capacity_bytes=16 GiB", "-m", MODELS / "llama2-7b.yaml",
                  "--requests", REPO / "tests" / "py" / "data" / "tiny-requests.csv",
                  "--buckets", fits, "--buckets", buckets,
                  "-o", tmp_path / "o", "--timeline", tmp_path / "t.json")
    assert err.startswith(f"systolic: error: {buckets}:5: bucket set 'too-long', decode bucket [64, 4096]: ")
    assert "workload 'llama2-7b@decode-64x4096'" in err and "KV cache 137.44 GB" in err
    assert "a smaller bucket: fewer decode slots or prefill lanes, or a shorter length (the KV cache takes 137.44 GB)" in err
    assert not (tmp_path / "o").exists() and not (tmp_path / "t.json").exists()


def test_a_trace_touching_hbm_past_capacity_is_refused(systolic_bin, tmp_path):
    trace = tmp_path / "small.trace"
    real = ["--set", "memory.ideal=false"]
    run_cli("compile", "-c", V4I, *real, "-w", SMALL, "--bucket", "4x512", "--phase", "decode", "-o", trace)
    run_cli("run", "-c", V4I, *real, "-t", trace, "-o", tmp_path / "ok", "-q")
    hbm = json.loads((tmp_path / "ok" / "report.json").read_text())["chips"][0]["memory"]["hbm"]
    # The highest byte its DMA descriptors touch: the end of the last region, the LM head.
    assert hbm["footprint_bytes"] == SMALL_BYTES and hbm["fits"] is True
    err = refused("run", "-c", V4I, *real, "--set", "hbm.capacity_bytes=4 MiB", "-t", trace, "-o", tmp_path / "o")
    assert f"{trace}: the compiled trace needs 0.00 GB ({SMALL_BYTES} B) of HBM" in err
    assert f"up to address {SMALL_BYTES:#x}" in err and "hbm.capacity_bytes = 4194304 B (4 MiB)" in err
    assert not (tmp_path / "o").exists()
