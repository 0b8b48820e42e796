"""Parallelism meshes and overlapped collectives through the command line (docs/interconnect.md,
"Parallelism meshes" and "Overlap"): a mesh of tp alone is --tp; dp x pp x tp splits every MAC
once over groups the report names; a pipeline's bubble against GPipe's closed form;
decomposed collectives hide under their matmuls while every link carries the same bytes;
bad meshes exit 2 naming the flag, writing nothing."""

import pytest

from conftest import REPO, model_with, require_python_module, run_cli, run_report

V5E = REPO / "configs" / "tpu-v5e-8.yaml"
MODELS = REPO / "traces" / "models"
RING4 = ["--set", "ici.topology=ring", "--set", "ici.dims=4", "--set", "ici.ports=2", "--set", "ici.wraparound=true"]

# Llama-2-70B (traces/models/llama2-70b.yaml): d 8192, 64 heads of 128, 8 KV heads, FFN 28672.
D, H, KV, HD, FF, VOCAB = 8192, 64, 8, 128, 28672, 32000



def prefill_macs(layers, batch, seq):
    t = batch * seq
    per_layer = t * D * (H + 2 * KV) * HD + t * D * D + 3 * t * D * FF + batch * 2 * H * seq * seq * HD
    return layers * per_layer + batch * D * VOCAB  # the LM head: each sequence's last token


def test_a_mesh_of_tp_alone_is_tp(systolic_bin, tmp_path):
    model = model_with(tmp_path, "llama2-70b.yaml", layers=2)
    tp = run_report("-c", V5E, "-w", model, "--bucket", "1x256", "--tp", 8, outdir=tmp_path / "tp")
    mesh = run_report("-c", V5E, "-w", model, "--bucket", "1x256", "--mesh", "tp=8", outdir=tmp_path / "mesh")
    for key in ("cycles", "macs", "ici_link_bytes", "comm_cycles", "exposed_comm_cycles"):
        assert mesh["totals"][key] == tp["totals"][key], key
    assert mesh["collectives"] == tp["collectives"]
    assert "mesh" not in tp
    # The group is the whole 2x4 mesh, its ring the comb of single hops bidir_ring goes round.
    (axis,) = [a for a in mesh["mesh"]["axes"] if a["degree"] > 1]
    assert axis == {"name": "tp", "degree": 8, "dims": "2x4", "torus_axes": "xy", "wraps": False,
                    "ring_of_chip0": {"chips": axis["ring_of_chip0"]["chips"], "max_hops": 1}}
    assert sorted(axis["ring_of_chip0"]["chips"]) == list(range(8))


def test_a_mesh_of_tp_and_ep_over_the_same_chips_is_tp_ep(systolic_bin, tmp_path):
    # The DeepSeek-V3-like MoE cut to 4 layers (3 dense, 1 MoE), ideal memory: experts folded over
    # the 8 chips of tp=8 are --ep 8's experts, chip for chip.
    model = model_with(tmp_path, "deepseek-v3-moe.yaml", layers=4)
    args = ["-c", V5E, "-w", model, "--bucket", "1x64", "--set", "memory.ideal=true", "--set", "hbm.capacity_bytes=64 GiB"]
    legacy = run_report(*args, "--tp", 8, "--ep", 8, outdir=tmp_path / "legacy")
    mesh = run_report(*args, "--mesh", "tp=8,ep=8", outdir=tmp_path / "mesh")
    assert mesh["totals"] == legacy["totals"]
    assert mesh["collectives"] == legacy["collectives"]
    ep = [a for a in mesh["mesh"]["axes"] if a["name"] == "ep"]
    assert ep == [{"name": "ep", "degree": 8, "ring_of_chip0": {"chips": list(range(8)), "max_hops": 4}}]


def test_dp_pp_tp_split_every_mac_once_over_the_groups_the_report_names(systolic_bin, tmp_path):
    # [4, 128] on 8 chips as dp=2 x pp=2 x tp=2, 2 micro-batches: each chip runs micro-batches
    # of [1, 128] through its stage's 2 of the 4 layers, on its tp pair.
    layers = 4
    model = model_with(tmp_path, "llama2-70b.yaml", layers=layers)
    r = run_report("-c", V5E, "-w", model, "--bucket", "4x128", "--mesh", "dp=2,pp=2,tp=2", "--micro-batches", 2,
                   "--set", "memory.ideal=true", outdir=tmp_path / "o")
    assert r["totals"]["macs"] == prefill_macs(layers, 4, 128)
    axes = {a["name"]: a for a in r["mesh"]["axes"]}
    # tp takes y's first two chips (tiling_slice from the last axis), dp the rest of y, pp x.
    assert (axes["tp"]["dims"], axes["dp"]["dims"], axes["pp"]["dims"]) == ("1x2", "1x2", "2x1")
    assert axes["tp"]["ring_of_chip0"]["chips"] == [0, 2]
    assert axes["pp"]["ring_of_chip0"] == {"chips": [0, 1], "max_hops": 1}
    rows = {c["name"]: c for c in r["collectives"]}
    t = 128  # one micro-batch's tokens
    assert rows["layer.attn_norm.all_gather"]["bytes"] == t * D * 2
    # 2 layers x 2 micro-batches on each stage; the stage boundary once per micro-batch, each
    # chip passing on the t / tp tokens it holds.
    assert rows["layer.attn_norm.all_gather"]["occurrences"] == 4
    assert rows["pipeline.send"]["kind"] == "permute" and rows["pipeline.send"]["occurrences"] == 2
    assert rows["pipeline.send"]["bytes"] == t // 2 * D * 2
    stage_of = {c: s["stage"] for s in r["pipeline"]["per_stage"] for c in s["chips"]}
    # Each chip holds its stage's 2 layers, split over tp, once whatever the micro-batches
    # (they run the same weights); the last stage also the LM head's half.
    layer = (D * (H + 2 * KV) * HD + D * D + 3 * D * FF) * 2
    for c in r["chips"]:
        head = VOCAB // 2 * D * 2 if stage_of[c["chip"]] == 1 else 0
        assert c["memory"]["hbm"]["footprint"]["weights"] == pytest.approx(2 * layer // 2 + head, rel=1e-3)
    assert sorted(stage_of) == list(range(8)) and stage_of[0] == 0 and stage_of[1] == 1
    # Every chip sends half of each tp all-gather and reduce-scatter it takes part in (2 chips);
    # the first stage also sends its activations on, the last stage nothing more.
    tp_sent = 2 * 2 * 4 * (t * D * 2 // 2)  # micro-batches x layers x (2 AG + 2 RS) x half of each
    for c in r["chips"]:
        if stage_of[c["chip"]] == 1:  # the head's all-gather of each micro-batch's last token
            expected = tp_sent + 2 * (D * 2 // 2)
        else:  # the first stage passes its t / tp tokens on, per micro-batch
            expected = tp_sent + 2 * (t // 2) * D * 2
        assert c["ici_bytes_sent"] == expected, c["chip"]


def test_pipeline_bubble_matches_gpipe(systolic_bin, tmp_path):
    # 4 stages of one Llama-2-70B layer each on a ring of 4, micro-batches of [1, 128] tokens,
    # ideal memory. GPipe: the run takes (m + p - 1) stage times, each stage works m of them, so
    # it idles (p - 1)/(m + p - 1) of the run. The stages must be alike: a vocabulary of 512
    # keeps the last stage's LM head small (with 32000 entries its one row per sequence streams
    # 16000 weight folds, 30 % of a layer at these shapes, and that stage paces the rest).
    # Passing 2 MiB on (71,406 cycles, 4 % of a stage) at each of the p - 1 boundaries
    # stretches the run a little: within 0.015.
    model = model_with(tmp_path, "llama2-70b.yaml", layers=4, vocab=512)
    for m in (1, 4, 8):
        r = run_report("-c", V5E, *RING4, "--set", "memory.ideal=true", "-w", model, "--bucket", f"{m}x128",
                       "--mesh", "pp=4", "--micro-batches", m, outdir=tmp_path / f"m{m}")
        p = r["pipeline"]
        assert (p["stages"], p["micro_batches"]) == (4, m)
        assert p["gpipe_bubble_fraction"] == pytest.approx(3 / (m + 3))
        assert p["bubble_fraction"] == pytest.approx(3 / (m + 3), abs=0.015), m


def test_the_default_placement_is_whole_torus_lines_where_the_degrees_allow(systolic_bin, tmp_path):
    # pp=4,tp=2 on the 2x4: tp takes the x pair and pp the y line (docs/interconnect.md, section
    # 11), the report of tp=2@x,pp=4@y but for the mesh's text; each stage one hop from the next.
    model = model_with(tmp_path, "llama2-70b.yaml", layers=4, vocab=512)
    args = ["-c", V5E, "--set", "memory.ideal=true", "-w", model, "--bucket", "4x64", "--micro-batches", 4]
    default = run_report(*args, "--mesh", "pp=4,tp=2", outdir=tmp_path / "default")
    lines = run_report(*args, "--mesh", "tp=2@x,pp=4@y", outdir=tmp_path / "lines")
    axes = {a["name"]: a for a in default["mesh"]["axes"]}
    assert (axes["tp"]["torus_axes"], axes["pp"]["torus_axes"]) == ("x", "y")
    assert axes["pp"]["ring_of_chip0"] == {"chips": [0, 2, 4, 6], "max_hops": 1}
    assert default["mesh"].pop("text") == "pp=4,tp=2" and lines["mesh"].pop("text") == "tp=2@x,pp=4@y"
    assert default == lines


def test_overlap_hides_tp_collectives_and_moves_the_same_bytes(systolic_bin, tmp_path):
    # Llama-2-70B TP8 on the v5e mesh, 1 x 2048 tokens, int8 weights: every all-gather before a
    # matmul and reduce-scatter after one is decomposed into 7 steps of the bidirectional ring.
    model = model_with(tmp_path, "llama2-70b.yaml", layers=2)
    args = ["-c", V5E, "-w", model, "--bucket", "1x2048", "--tp", 8, "--weight-dtype", "int8"]
    on = run_report(*args, outdir=tmp_path / "on")
    off = run_report(*args, "--overlap", "off", outdir=tmp_path / "off")
    assert [l["bytes"] for l in on["links"]] == [l["bytes"] for l in off["links"]]
    for key in ("macs", "ici_bytes_sent", "ici_link_bytes"):
        assert on["totals"][key] == off["totals"][key], key
    assert on["totals"]["cycles"] < off["totals"]["cycles"]
    assert on["totals"]["exposed_comm_cycles"] < off["totals"]["exposed_comm_cycles"] / 2
    rows = {c["name"]: c for c in on["collectives"]}
    for name in ("layer.attn_norm.all_gather", "layer.out_proj.reduce_scatter", "layer.ffn_norm.all_gather",
                 "layer.ffn_down.reduce_scatter"):
        assert rows[name]["overlap"]["decomposed"] and rows[name]["overlap"]["steps"] == 7, name
        assert rows[name]["hidden_cycles"] == rows[name]["cycles"] - rows[name]["exposed_cycles"] > 0
    # One token's row over 8 chips: nothing to cut into blocks.
    assert not rows["head.final_norm.all_gather"]["overlap"]["decomposed"]
    assert on["totals"]["overlapped_comm_cycles"] == on["totals"]["comm_cycles"] - on["totals"]["exposed_comm_cycles"]
    # --overlap off leaves the report as it was before overlap existed: no overlap fields.
    assert all("overlap" not in c and "hidden_cycles" not in c for c in off["collectives"])


def test_python_run_takes_mesh_and_overlap(systolic_bin, tmp_path):
    systolic = require_python_module()
    model = model_with(tmp_path, "llama2-70b.yaml", layers=2)
    r = systolic.run(str(V5E), str(model), bucket="2x128", mesh="dp=2,tp=4", overlap=False).to_dict()
    cli = run_report("-c", V5E, "-w", model, "--bucket", "2x128", "--mesh", "dp=2,tp=4", "--overlap", "off",
                     outdir=tmp_path / "cli")
    assert r["totals"] == cli["totals"] and r["mesh"] == cli["mesh"]


def test_mesh_on_a_gemm_list_or_single_chip_is_refused(systolic_bin, tmp_path):
    proc = run_cli("run", "-c", V5E, "-w", REPO / "traces" / "gemms" / "gpt2.yaml", "--mesh", "tp=8",
                   "-o", tmp_path / "o", check=False)
    assert proc.returncode == 2 and "--mesh shards transformer model files" in proc.stderr
    proc = run_cli("run", "-w", MODELS / "gpt2.yaml", "--bucket", "1x128", "--mesh", "tp=1", "-o", tmp_path / "o",
                   check=False)
    assert proc.returncode == 2 and "a parallelism mesh needs a multi-chip system" in proc.stderr


@pytest.mark.parametrize("case", ["product", "heads", "layers", "experts"])
def test_a_mesh_the_system_or_model_does_not_divide_exits_2_writing_nothing(systolic_bin, tmp_path, case):
    # The degrees must multiply to the chip count (8) and divide what they split: gpt2's 12
    # heads and 12 layers; a MoE's routed experts (12 here) over ep=8.
    model, mesh, needle = {
        "product": ("gpt2.yaml", "dp=2,tp=2", "--mesh 'dp=2,tp=2': tp x dp x pp = 4, expected the system's chip "
                                              "count 8 (ici.dims 2x4)"),
        "heads": ("gpt2.yaml", "dp=1,tp=8", "gpt2: --mesh tp=8 does not divide heads = 12 (expected a degree that "
                                            "divides it)"),
        "layers": ("gpt2.yaml", "pp=8", "gpt2: --mesh pp=8 does not divide layers = 12"),
        "experts": (model_with(tmp_path, "deepseek-v3-moe.yaml", experts=12), "tp=8,ep=8",
                    "--mesh ep=8 does not divide moe.experts = 12"),
    }[case]
    out, timeline = tmp_path / "out", tmp_path / "t.json"
    proc = run_cli("run", "-c", V5E, "-w", MODELS / model, "--bucket", "1x128", "--mesh", mesh, "-o", out,
                   "--timeline", timeline, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("systolic: error: ") and needle in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stdout == ""
    assert not out.exists() and not timeline.exists()


def test_a_mesh_sweep_runs_the_same_locally_and_on_dask(systolic_bin, tmp_path):
    # tests/py/data/meshes-tiny.yaml has the shape of traces/sweeps/meshes-*.yaml (mesh, overlap
    # as workload axes) at toy size. The same spec on a local Dask cluster gives the same points,
    # each the report `systolic run` writes with those flags.
    systolic = require_python_module()
    distributed = pytest.importorskip("distributed")
    spec = REPO / "tests" / "py" / "data" / "meshes-tiny.yaml"
    local = systolic.sweep(str(spec), str(tmp_path / "local"), jobs=2, progress=False)
    assert local.attrs["ran"] == 4 and set(local["status"]) == {"ok"}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, silence_logs=40) as cluster:
        dask = systolic.sweep(str(spec), str(tmp_path / "dask"), dask=cluster.scheduler_address, progress=False)
    cols = ["hash", "mesh", "overlap", "totals.cycles", "totals.comm_cycles", "totals.exposed_comm_cycles"]
    assert dask[cols].sort_values("hash").reset_index(drop=True).equals(
        local[cols].sort_values("hash").reset_index(drop=True))
    row = local[(local["mesh"] == "tp=2") & (local["overlap"] == False)].iloc[0]  # noqa: E712
    r = run_report("-c", V5E, "--set", "ici.topology=ring", "--set", "ici.dims=2", "--set", "ici.ports=2", "-w",
                   REPO / "tests" / "py" / "data" / "tiny-lm.yaml", "--bucket", "2x8", "--mesh", "tp=2",
                   "--overlap", "off", outdir=tmp_path / "run")
    assert row["totals.cycles"] == r["totals"]["cycles"] and row["totals.comm_cycles"] == r["totals"]["comm_cycles"]
