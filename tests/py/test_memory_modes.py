"""One lowering, two ways to time it (issue: numbers you can trust). memory.ideal changes how the
chip times the compiled program, never the program, so for every workload

    compute floor  <=  ideal memory  <=  real memory

where the compute floor is the MACs the MXUs issue over their peak (R x C x mxu.rate.<type> MACs
per MXU per cycle, the rate of each layer's compute type), and both modes move the same bytes. Checked on randomized GEMM lists, a convolutional
topology, every shipped transformer at prefill and decode buckets, and a sharded multi-chip run.
"""
import random
import re

import pytest

from conftest import REPO, run_report

CONFIGS = REPO / "configs"
MODELS = REPO / "traces" / "models"


def floor_cycles(report, chip_config):
    mxu = chip_config["mxu"]
    pes = mxu["rows"] * mxu["cols"] * mxu["count"]
    # Vector layers issue no MACs (and may be typed int4, which has no rate).
    return sum(l["macs_issued"] / (pes * mxu["rate"].get(l["dtype"], 1.0)) for l in report["layers"])


def both_modes(tmp_path, name, *args):
    ideal = run_report(*args, "--set", "memory.ideal=true", outdir=tmp_path / f"{name}-ideal")
    real = run_report(*args, "--set", "memory.ideal=false", outdir=tmp_path / f"{name}-real")
    return ideal, real


def check_ordered(ideal, real):
    chips_i = ideal.get("chips", [ideal])
    chips_r = real.get("chips", [real])
    assert len(chips_i) == len(chips_r)
    for ci, cr in zip(chips_i, chips_r):
        floor = floor_cycles(ci, ideal["config"])
        assert floor <= ci["totals"]["cycles"] <= cr["totals"]["cycles"], (floor, ci["totals"], cr["totals"])
        for chip in (ci, cr):  # each type against its own peak: never above 1
            for row in [chip["totals"], *chip["layers"]]:
                assert row["utilization"] <= 1 + 1e-12 and row["mapping_efficiency"] <= 1 + 1e-12, row
        for key in ("macs", "macs_issued", "hbm_bytes_read", "hbm_bytes_written"):
            assert ci["totals"][key] == cr["totals"][key], key
    assert ideal["totals"]["cycles"] <= real["totals"]["cycles"]


def random_gemms(seed):
    rng = random.Random(seed)
    lines = ["gemms:"]
    for i in range(rng.randint(1, 4)):
        m, k, n = (rng.choice([1, 3, 17, 64, 200, 513, 1024]) for _ in range(3))
        repeat = rng.choice([1, 1, 2, 5])
        lines.append(f"  - {{name: g{i}, m: {m}, k: {k * 4}, n: {n * 2}, repeat: {repeat}}}")
    return "\n".join(lines) + "\n"


# The tiny array with the fast model: its exact model (the preset's) would step the PE grid for
# up to 10^8 cycles a GEMM here, seconds each, and the exact grid's cycles equal the closed form
# the fast model uses (tests/unit/test_dataflow.cpp, "exact grid == reference GEMM and == closed
# form, randomized"), so the memory modes' ordering is the same under either.
@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("preset,sets", [("tiny-4x4", ["--set", "mxu.model=fast"]), ("tpu-v4i", [])],
                         ids=["tiny-4x4", "tpu-v4i"])
def test_random_gemms(systolic_bin, tmp_path, preset, sets, seed):
    wl = tmp_path / "g.yaml"
    wl.write_text(random_gemms(seed))
    check_ordered(*both_modes(tmp_path, "g", "-c", CONFIGS / f"{preset}.yaml", "-w", wl, *sets))


# Arrays that pack several products per PE (tpu-v5e: int8 at 2, its preset) or take several
# cycles per product: the floor moves with the rate and still holds. (The fast model on the tiny
# array, for time: test_mac_rate.cpp holds exact == fast at these rates.)
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("preset,sets", [
    ("tiny-4x4", ["mxu.rate.int8=2", "mxu.model=fast"]),
    ("tiny-4x4", ["mxu.rate.int8=0.5", "mxu.dataflow=os", "mxu.model=fast"]),
    ("tpu-v5e", ["mxu.dtype=int8"]),
], ids=["tiny-rate2", "tiny-rate-half-os", "v5e-int8"])
def test_random_gemms_at_other_rates(systolic_bin, tmp_path, preset, sets, seed):
    wl = tmp_path / "g.yaml"
    wl.write_text(random_gemms(100 + seed))
    args = [a for s in sets for a in ("--set", s)]
    check_ordered(*both_modes(tmp_path, "g", "-c", CONFIGS / f"{preset}.yaml", "-w", wl, *args))


def test_convolutions(systolic_bin, tmp_path):
    topology = REPO / "traces" / "topologies" / "resnet18.csv"
    check_ordered(*both_modes(tmp_path, "conv", "-c", CONFIGS / "tpu-v4i.yaml", "-w", topology))


def fewer_layers(tmp_path, preset, layers):
    text = (MODELS / preset).read_text()
    text, n = re.subn(r"^(layers:\s*)\S+", rf"\g<1>{layers}", text, flags=re.M)
    assert n == 1
    path = tmp_path / preset
    path.write_text(text)
    return path


MODEL_CASES = [  # (model, layers kept, preset, bucket, phase)
    ("gpt2.yaml", 2, "tpu-v4i", "1x256", "prefill"),
    ("gpt2.yaml", 2, "tpu-v4i", "8x512", "decode"),
    ("bert-base.yaml", 2, "tpu-v4i", "2x128", "prefill"),
    ("llama2-7b.yaml", 2, "tpu-v4i", "1x512", "prefill"),
    ("llama2-7b.yaml", 2, "tpu-v4i", "4x1024", "decode"),
    ("llama3-8b.yaml", 2, "tpu-v5e", "1x512", "prefill"),
    ("llama3-8b.yaml", 2, "tpu-v5e", "16x2048", "decode"),
    ("llama3-8b-w8a16.yaml", 2, "tpu-v5e", "1x1024", "prefill"),
    ("llama2-7b-w8a16.yaml", 2, "tpu-v4i", "4x1024", "decode"),
    ("llama2-7b-fp8kv.yaml", 2, "tpu-v4i", "4x1024", "decode"),
]


@pytest.mark.parametrize("model,layers,preset,bucket,phase", MODEL_CASES,
                         ids=[f"{m[:-5]}-{b}-{p}" for m, _, _, b, p in MODEL_CASES])
def test_shipped_models(systolic_bin, tmp_path, model, layers, preset, bucket, phase):
    wl = fewer_layers(tmp_path, model, layers)
    check_ordered(*both_modes(tmp_path, "m", "-c", CONFIGS / f"{preset}.yaml", "-w", wl,
                              "--bucket", bucket, "--phase", phase))


@pytest.mark.parametrize("model,layers,extra", [
    ("llama2-70b.yaml", 1, ["--tp", "8"]),
    ("deepseek-v3-moe.yaml", 4, ["--tp", "8", "--ep", "8"]),  # three dense layers, one MoE
], ids=["llama2-70b-tp8", "deepseek-tp8-ep8"])
def test_sharded_over_eight_chips(systolic_bin, tmp_path, model, layers, extra):
    wl = fewer_layers(tmp_path, model, layers)
    ideal, real = both_modes(tmp_path, "tp", "-c", CONFIGS / "tpu-v5e-8.yaml", "-w", wl,
                             "--bucket", "1x256", *extra)
    check_ordered(ideal, real)
