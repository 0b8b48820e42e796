"""Symmetry: simulating one chip per class of chips that provably run alike (the default) gives,
byte for byte, the report simulating every chip (--every-chip) gives, but for `simulation`
(how it was simulated), on the shipped multi-chip examples small enough to run both ways
(docs/interconnect.md, "Scale"). tests/unit/test_symmetry.cpp checks every instruction record
of smaller systems and the programs compile_system shares."""
import json
import re


from conftest import REPO, model_with, require_python_module, run_cli

CONFIGS = REPO / "configs"
TINY_LM = REPO / "tests" / "py" / "data" / "tiny-lm.yaml"
AR = "gemms:\n  - {name: up, m: 256, k: 1024, n: 512}\n  - {name: grads, collective: all_reduce, bytes: 8 MiB}\n" \
     "  - {name: down, m: 256, k: 512, n: 1024}\n"



def both_ways(tmp_path, name, args):
    """The two reports without `simulation`, as text, and the per-class run's `simulation`."""
    texts, simulation = [], None
    for mode in ("per_class", "every_chip"):
        out = tmp_path / f"{name}-{mode}"
        run_cli("run", *args, *(["--every-chip"] if mode == "every_chip" else []), "-o", out, "-q")
        report = json.loads((out / "report.json").read_text())
        how = report.pop("simulation")
        assert how["every_chip"] == (mode == "every_chip")
        if mode == "per_class":
            simulation = how
        else:
            assert how["chips_simulated"] == len(report["chips"])
        texts.append(json.dumps(report))
    return texts, simulation


def cases(tmp_path):
    ar = tmp_path / "ar.yaml"
    ar.write_text(AR)
    v5e, v5p = CONFIGS / "tpu-v5e-8.yaml", CONFIGS / "tpu-v5p-64.yaml"
    ideal = ["--set", "memory.ideal=true"]
    ring2 = ["--set", "ici.topology=ring", "--set", "ici.dims=2", "--set", "ici.algorithm=ring"]
    # Two layers: the second's weight streams tie on the DMA engines, which a chip must wake in
    # an order of its own (models/engine/wake_order.hpp) for its class to be exact.
    llama = model_with(tmp_path, "llama2-70b.yaml", layers=2)
    moe = model_with(tmp_path, "deepseek-v3-moe.yaml", layers=2, dense_layers=1)
    tp8 = ["--bucket", "1x64", "--tp", "8", "--weight-dtype", "int8"]
    ep8 = ["--bucket", "1x32", "--tp", "8", "--ep", "8", "--set", "hbm.capacity_bytes=163 GiB"]
    # name, arguments, chips simulated per class
    return [
        ("ar-v5e-8-ideal", ["-c", v5e, "-w", ar, *ideal], 1),
        ("ar-v5e-8", ["-c", v5e, "-w", ar], 1),
        ("ar-v5e-8-torus", ["-c", v5e, "-w", ar, "--set", "ici.wraparound=true", "--set", "ici.algorithm=torus"], 1),
        ("ar-v5e-8-bidir", ["-c", v5e, "-w", ar, "--set", "ici.algorithm=bidir_ring"], 1),
        ("ar-v5p-64", ["-c", v5p, "-w", ar], 1),
        ("ar-v5e-8-torus-ideal", ["-c", v5e, "-w", ar, "--set", "ici.wraparound=true", "--set", "ici.algorithm=torus",
                                  *ideal], 1),
        ("ar-v5p-64-ideal", ["-c", v5p, "-w", ar, *ideal], 1),
        ("ar-v5p-256-ideal", ["-c", CONFIGS / "tpu-v5p-256.yaml", "-w", ar, *ideal], 1),
        ("gpt2-v5e-8", ["-c", v5e, "-w", REPO / "traces" / "gemms" / "gpt2.yaml"], 1),
        ("tiny-lm-tp2-ideal", ["-c", CONFIGS / "tiny-4x4.yaml", *ring2, "-w", TINY_LM, "--bucket", "1x8", "--tp", "2",
                               *ideal], 1),
        ("tiny-lm-tp2", ["-c", CONFIGS / "tiny-4x4.yaml", *ring2, "-w", TINY_LM, "--bucket", "1x8", "--tp", "2"], 1),
        ("llama70b-tp8-ideal", ["-c", v5e, "-w", llama, *tp8, *ideal], 1),
        ("llama70b-tp8", ["-c", v5e, "-w", llama, *tp8], 1),
        ("llama70b-replicas-v5p-64", ["-c", v5p, "-w", llama, "--bucket", "1x64", "--weight-dtype", "int8"], 1),
        # All-to-all crosses several links: on the 2x4 mesh every chip (no translations); on
        # tori the chips of each parity of coordinate sums (their ties), two classes.
        ("deepseek-ep8-ideal", ["-c", v5e, "-w", moe, *ep8, *ideal], 8),
        ("deepseek-ep8-skewed", ["-c", v5e, "-w", moe, *ep8, "--routing", "skewed"], 8),
        ("deepseek-ep8-torus", ["-c", v5e, "-w", moe, *ep8, "--set", "ici.wraparound=true"], 2),
        ("deepseek-ep64-v5p-64", ["-c", v5p, "-w", moe, "--bucket", "1x512", "--tp", "64", "--ep", "64"], 2),
        # Pipeline sends between the two stages cross two links: four classes of sixteen chips
        # (the translations along y and z).
        ("llama70b-pp2-dp8-tp4-v5p-64", ["-c", v5p, "-w", llama, "--bucket", "16x128", "--mesh", "pp=2,dp=8,tp=4",
                                         "--micro-batches", "2", "--weight-dtype", "int8"], 4),
    ]


def test_one_chip_per_class_gives_the_report_of_every_chip(systolic_bin, tmp_path):
    for name, args, simulated in cases(tmp_path):
        (per_class, every_chip), how = both_ways(tmp_path, name, args)
        assert per_class == every_chip, name
        assert how["chips_simulated"] == simulated, (name, how["limit"])
        chips = sorted(c for k in how["classes"] for c in k["chips"])
        assert chips == list(range(len(chips))), name  # every chip in one class
        assert all(k["simulated"] == min(k["chips"]) for k in how["classes"])
        # A run that simulates every chip says what kept them apart.
        assert (how["limit"] is None) == (simulated == 1), (name, how["limit"])


def test_why_chips_are_not_merged_is_reported(systolic_bin, tmp_path):
    moe = model_with(tmp_path, "deepseek-v3-moe.yaml", layers=2, dense_layers=1)
    _, a2a = both_ways(tmp_path, "a2a", ["-c", CONFIGS / "tpu-v5e-8.yaml", "-w", moe, "--bucket", "1x32", "--tp", "8",
                                         "--ep", "8", "--set", "hbm.capacity_bytes=163 GiB",
                                         "--set", "memory.ideal=true"])
    assert re.search(r"chip \d+ sends to chip \d+ over \d+ links", a2a["limit"])


def test_python_run_takes_every_chip(systolic_bin, tmp_path):
    systolic = require_python_module()
    ar = tmp_path / "ar.yaml"
    ar.write_text(AR)
    one = systolic.run(CONFIGS / "tpu-v5e-8.yaml", workload=ar).to_dict()
    every = systolic.run(CONFIGS / "tpu-v5e-8.yaml", workload=ar, every_chip=True).to_dict()
    assert one.pop("simulation")["every_chip"] is False
    assert every.pop("simulation")["chips_simulated"] == 8
    assert json.dumps(one) == json.dumps(every)
