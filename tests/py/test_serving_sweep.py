"""Serving replays as sweep points (docs/sweeps.md, "Serving replays") and systolic.pack's serving
keywords (docs/python.md): hand-checkable columns on a 4-request log, the sweep's numbers equal
to `systolic pack`'s, the Pareto front by the dominance rule, the spec checked before anything
runs."""
import json

import pytest

from conftest import REPO, require_python_module, run_cli

systolic = require_python_module()
import systolic.sweep  # noqa: E402

TINY = REPO / "configs" / "tiny-4x4.yaml"
DATA = REPO / "tests" / "py" / "data"
MODEL = DATA / "tiny-lm.yaml"
LOG = DATA / "tiny-requests.csv"        # 4 requests, arrivals 0, 1 ms, 2 ms, 500 ms
BUCKETS = DATA / "tiny-buckets.yaml"    # prefill [1, 8], [2, 8]; decode [2, 16]


def spec(grid, **pack):
    return {"config": str(TINY), "pack": {"model": str(MODEL), "requests": str(LOG), "buckets": str(BUCKETS),
                                          **pack},
            "grid": grid}


@pytest.fixture(scope="module")
def frame(tmp_path_factory):
    out = tmp_path_factory.mktemp("serving-sweep")
    s = spec({"scheduler": ["continuous", "dynamic"], "rate_scale": [1, 2], "replicas": [1, 2]},
             slo_ttft_s=1.0, slo_tbt_s=1.0)
    return systolic.sweep(s, out / "sweep", jobs=2, progress=False, pareto="goodput_rps:max,chips:min"), out


def test_every_point_runs_and_its_columns_are_hand_checkable(frame):
    df, _ = frame
    assert len(df) == 8 and (df["status"] == "ok").all()
    assert list(df.columns[4:7]) == ["scheduler", "rate_scale", "replicas"]
    assert (df["served"] == 4).all() and (df["rejected"] == 0).all()
    # 3 gaps over 0.5 s: 6 requests/s offered; rate_scale 2 halves the gaps.
    assert df["offered_rps"].tolist() == pytest.approx([6.0 * r for r in df["rate_scale"]])
    assert df["chips"].tolist() == df["replicas"].tolist()  # one chip per replica (tp 1)
    # The dynamic scheduler is the tax's baseline: it pays none against itself.
    assert (df[df["scheduler"] == "dynamic"]["tax_time"] == 0).all()
    assert (df[df["scheduler"] == "continuous"]["tax_time"] > 0).all()
    # 1 s SLOs on a toy model: every request meets them; goodput = served / makespan.
    assert (df["slo_attainment"] == 1).all()
    assert df["goodput_rps"].tolist() == pytest.approx((4 / df["makespan_s"]).tolist())


def test_a_point_equals_systolic_pack_on_the_command_line(frame, tmp_path):
    df, _ = frame
    run_cli("pack", "-c", TINY, "-m", MODEL, "--requests", LOG, "--buckets", BUCKETS, "--scheduler", "continuous",
            "--rate-scale", "2", "--replicas", "2", "--slo-ttft", "1", "--slo-tbt", "1", "-o", tmp_path, "-q")
    serving = json.loads((tmp_path / "report.json").read_text())["serving"]
    row = df[(df["scheduler"] == "continuous") & (df["rate_scale"] == 2) & (df["replicas"] == 2)].iloc[0]
    assert row["ttft_p99_s"] == serving["latency_s"]["ttft"]["p99"]
    assert row["e2e_p50_s"] == serving["latency_s"]["e2e"]["p50"]
    assert row["tokens_per_s"] == serving["throughput"]["tokens_per_s"]
    assert row["goodput_rps"] == serving["slo"]["goodput_rps"]


def test_pareto_fronts_are_per_offered_load_and_follow_the_dominance_rule(frame):
    df, _ = frame
    for _, group in df.groupby("rate_scale"):
        points = list(zip(group["goodput_rps"], group["chips"]))
        for (goodput, chips), on in zip(points, group["pareto"]):
            dominated = any(g >= goodput and c <= chips and (g > goodput or c < chips) for g, c in points)
            assert on == (not dominated)
        assert group["pareto"].any()


def test_resume_skips_every_finished_point(frame):
    _, out = frame
    s = spec({"scheduler": ["continuous", "dynamic"], "rate_scale": [1, 2], "replicas": [1, 2]},
             slo_ttft_s=1.0, slo_tbt_s=1.0)
    again = systolic.sweep(s, out / "sweep", jobs=1, progress=False)
    assert again.attrs["ran"] == 0 and again.attrs["skipped"] == 8


def test_models_and_bucket_sets_are_axes(tmp_path):
    coarse = tmp_path / "coarse.yaml"
    coarse.write_text("name: coarse\nprefill: [[2, 8]]\ndecode: [[4, 16]]\n")
    s = spec({"buckets": [str(BUCKETS), str(coarse)], "packer": ["none", "ffd"]})
    df = systolic.sweep(s, tmp_path / "out", jobs=1, progress=False)
    assert len(df) == 4 and (df["status"] == "ok").all()
    assert df["workload"].nunique() == 1 and df["buckets"].nunique() == 2
    # No SLO given: attainment and goodput do not exist.
    assert df["slo_attainment"].isna().all()


@pytest.mark.parametrize("change,needle", [
    (lambda s: s["grid"].update(bucket=["1x8"]), "'bucket' is a key of run sweeps"),
    (lambda s: s["grid"].update(schedulr=["static"]), "unknown key 'schedulr' (did you mean 'scheduler'?)"),
    (lambda s: s["grid"].update(scheduler=["continous"]), "did you mean 'continuous'"),
    (lambda s: s["grid"].update(scheduler=["static,dynamic"]), "expected one scheduler per point"),
    (lambda s: s["grid"].update(replicas=[0]), "'replicas': expected a positive integer, got 0"),
    (lambda s: s["grid"].update(rate_scale=[-1]), "'rate_scale': expected a factor > 0"),
    (lambda s: s["pack"].update(requests="missing.csv"), "'requests': no such file: missing.csv"),
    (lambda s: s["pack"].pop("buckets"), "missing 'buckets'"),
    (lambda s: s["pack"].update(slo_ttft_s=1), "expected both slo_ttft_s and slo_tbt_s"),
    (lambda s: s["pack"].update(rout="least-loaded"), "pack: unknown key 'rout' (did you mean 'router'?)"),
    (lambda s: s.update(metrics=["goodput"]), "did you mean 'goodput_rps'"),
    (lambda s: s.update(pareto=["goodput_rps:max", "area_mm2:min"]), "area_mm2"),
    (lambda s: s.update(workload=str(MODEL)), "takes no 'workload'"),
])
def test_a_bad_serving_spec_is_refused_before_anything_runs(tmp_path, change, needle):
    s = spec({"scheduler": ["static"]})
    change(s)
    with pytest.raises(systolic.sweep.SpecError) as e:
        systolic.sweep(s, tmp_path / "out", progress=False)
    assert needle in str(e.value)
    assert not (tmp_path / "out").exists()


def test_a_serving_key_in_a_run_sweep_names_its_line(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(f"config: {TINY}\nworkload: {REPO / 'traces' / 'gemms' / 'example.yaml'}\n"
                    f"grid:\n  mxu.rows: [4]\n  scheduler: [static]\n")
    with pytest.raises(systolic.sweep.SpecError) as e:
        systolic.sweep.load_spec(path)
    assert str(e.value).startswith(f"{path}:5: 'scheduler' is a key of serving replays")


def test_python_pack_takes_the_cli_serving_flags(tmp_path):
    config = systolic.load_config(TINY)
    res = systolic.pack(config, MODEL, LOG, BUCKETS, scheduler="chunked", chunk_tokens=8, replicas=2,
                        router="least-loaded", rate_scale=4, slo_ttft_s=0.5, slo_tbt_s=0.5)
    run_cli("pack", "-c", TINY, "-m", MODEL, "--requests", LOG, "--buckets", BUCKETS, "--scheduler", "chunked",
            "--chunk-tokens", "8", "--replicas", "2", "--router", "least-loaded", "--rate-scale", "4",
            "--slo-ttft", "0.5", "--slo-tbt", "0.5", "-o", tmp_path, "-q")
    cli = json.loads((tmp_path / "report.json").read_text())
    assert res.to_dict() == cli
    both = systolic.pack(config, MODEL, LOG, BUCKETS, scheduler=["static", "dynamic"], poisson_qps=100, seed=3)
    assert [r.to_dict()["serving"]["scheduler"] for r in both] == ["static", "dynamic"]
    assert both[0].to_dict()["policy"]["poisson_qps"] == 100
    with pytest.raises(systolic.InputError, match="--replicas 0: expected a number of replicas"):
        systolic.pack(config, MODEL, LOG, BUCKETS, replicas=0)


def test_python_pack_writes_the_cli_files(tmp_path):
    """outdir=, timeline=, lanes=, lanes_html= write what `systolic pack -o ... --timeline ... --lanes ...`
    writes, byte for byte: both front ends format the files through sim/serving/pack_files.hpp."""
    config = systolic.load_config(TINY)
    py_out, cli_out = tmp_path / "py", tmp_path / "cli"
    res = systolic.pack(config, MODEL, LOG, BUCKETS, scheduler="continuous,static", outdir=py_out,
                        timeline=py_out / "tl.json", lanes=py_out / "lanes.json", lanes_html=py_out / "lanes.html")
    assert len(res) == 2
    run_cli("pack", "-c", TINY, "-m", MODEL, "--requests", LOG, "--buckets", BUCKETS, "--scheduler", "continuous,static",
            "-o", cli_out, "--timeline", cli_out / "tl.json", "--lanes", cli_out / "lanes.json",
            "--lanes-html", cli_out / "lanes.html", "-q")
    files = sorted(str(p.relative_to(cli_out)) for p in cli_out.rglob("*") if p.is_file())
    assert files == sorted(str(p.relative_to(py_out)) for p in py_out.rglob("*") if p.is_file())
    assert {"comparison.csv", "continuous/report.json", "continuous/requests.csv", "static/requests.csv",
            "tl-continuous.json", "tl-static.json", "lanes.json", "lanes.html"} <= set(files)
    for f in files:
        assert (py_out / f).read_bytes() == (cli_out / f).read_bytes(), f
    with pytest.raises(systolic.InputError, match="expected with outdir="):
        systolic.pack(config, MODEL, LOG, BUCKETS, lanes=tmp_path / "lanes.json")
    assert not (tmp_path / "lanes.json").exists()


def test_the_shipped_serving_spec_loads_and_expands():
    # traces/sweeps/serving.yaml (docs/sweeps.md): 3 schedulers x 2 rates x 2 replica counts.
    study = systolic.sweep.load_spec(REPO / "traces" / "sweeps" / "serving.yaml")
    points = systolic.sweep.expand(study)
    assert len(points) == 12 and len({p.hash for p in points}) == 12
    assert [o.column for o in study.objectives] == ["goodput_rps", "chips"]
    assert points[0].workload_opts["poisson_requests"] == 300


def test_tp_between_one_and_the_chip_count_carves_slices(tmp_path):
    # A 2x4 system of the toy chip: --tp 2 is four replicas of 2 chips; 3 chips tile no 2x4.
    common = ["pack", "-c", TINY, "--set", "ici.topology=torus2d", "--set", "ici.dims=2x4", "-m", MODEL,
              "--requests", LOG, "--buckets", BUCKETS]
    run_cli(*common, "--tp", "2", "-o", tmp_path / "tp2", "-q")
    serving = json.loads((tmp_path / "tp2" / "report.json").read_text())["serving"]
    assert (serving["tp"], serving["replicas"], serving["chips"]) == (2, 4, 8)
    assert serving["requests"]["served"] == 4
    proc = run_cli(*common, "--tp", "3", "-o", tmp_path / "tp3", check=False)
    assert proc.returncode == 2 and "one of 1, 2, 4, 8" in proc.stderr
    assert not (tmp_path / "tp3").exists()
