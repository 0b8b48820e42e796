"""pack --scheduler a,b,c: several schedulers side by side in one run, and the tidy tables of
systolic.serving_tables (docs/serving.md, "Side by side")."""
import csv
import json

import pytest

from conftest import require_python_module, run_cli
from test_serving_cli import BUCKETS, MODEL, TINY, burst_log, coarse_buckets

SCHEDULERS = ["continuous", "static", "dynamic"]


@pytest.fixture(scope="module")
def compared(systolic_bin, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare")
    coarse = coarse_buckets(tmp)
    args = ["-c", TINY, "-m", MODEL, "--requests", burst_log(tmp), "--buckets", BUCKETS, "--buckets", coarse,
            "--slo-ttft", "2e-4", "--slo-tbt", "1e-5"]
    proc = run_cli("pack", *args, "--scheduler", ",".join(SCHEDULERS), "-o", tmp / "all")
    alone = {}
    for s in SCHEDULERS:  # each scheduler in a run of its own, for reference
        run_cli("pack", *args, "--scheduler", s, "-o", tmp / s, "-q")
        alone[s] = json.loads((tmp / s / "report.json").read_text())
    return tmp, proc, alone


def test_one_report_per_scheduler_equal_to_its_own_run(compared):
    tmp, _, alone = compared
    for s in SCHEDULERS:
        report = json.loads((tmp / "all" / s / "report.json").read_text())
        # Sharing the simulated shapes changes only how many the run simulated in all.
        report.pop("shapes_simulated"), alone[s].pop("shapes_simulated")
        assert report == alone[s]
        assert (tmp / "all" / s / "requests.csv").read_text() == (tmp / s / "requests.csv").read_text()
        assert (tmp / "all" / s / "requests-coarse.csv").exists()


def test_comparison_csv_has_a_row_per_scheduler_and_set(compared):
    tmp, proc, alone = compared
    with open(tmp / "all" / "comparison.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["scheduler"], r["bucket_set"]) for r in rows] == [(s, b) for s in SCHEDULERS for b in ["tiny", "coarse"]]
    for r in rows:
        replay = next(x for x in alone[r["scheduler"]]["replays"] if x["bucket_set"] == r["bucket_set"])
        assert int(r["served"]) == replay["serving"]["requests"]["served"]
        assert float(r["busy_s"]) == pytest.approx(replay["tax"]["busy_s"])
        assert float(r["ttft_p99_s"]) == pytest.approx(replay["serving"]["latency_s"]["ttft"]["p99"])
        assert float(r["slo_attainment"]) == pytest.approx(replay["serving"]["slo"]["attainment"])
    assert "comparison.csv" in proc.stdout and proc.stdout.count("\ncontinuous ") == 2


@pytest.mark.parametrize("value,needle", [
    ("static,static", "each once"),
    ("static,,dynamic", "each once"),
    ("static,statc", "did you mean 'static'"),
])
def test_bad_scheduler_lists_exit_2_without_output(systolic_bin, tmp_path, value, needle):
    proc = run_cli("pack", "-c", TINY, "-m", MODEL, "--requests", burst_log(tmp_path), "--buckets", BUCKETS,
                   "--scheduler", value, "-o", tmp_path / "out", check=False)
    assert proc.returncode == 2 and needle in proc.stderr
    assert not (tmp_path / "out").exists()


def test_tidy_frames_have_numeric_columns(compared):
    systolic = require_python_module()
    from systolic.serving_tables import bucket_frame, serving_frame
    tmp, _, _ = compared
    paths = [tmp / "all" / s / "report.json" for s in SCHEDULERS]
    buckets = bucket_frame(paths, labels=SCHEDULERS)
    # One row per phase and shape each replay ran, two sets per report.
    rows = sum(len(rep["buckets"]) for p in paths for rep in json.loads(p.read_text())["replays"])
    assert len(buckets) == rows and list(buckets["scheduler"].unique()) == SCHEDULERS
    for column in ["batch", "length", "instances", "pad_tokens", "fill", "utilization", "seconds", "energy_pj"]:
        assert buckets[column].dtype.kind in "if", column
    assert set(buckets["bucket_set"]) == {"tiny", "coarse"}
    # dynamic's steps are varlen: no shape, no utilization of one.
    varlen = buckets[buckets["scheduler"] == "dynamic"]
    assert varlen["varlen"].all() and varlen["batch"].isna().all() and varlen["utilization"].isna().all()
    assert not buckets[buckets["scheduler"] != "dynamic"]["varlen"].any()
    serving = serving_frame(paths)
    assert len(serving) == 6 and serving["ttft_p99_s"].dtype.kind == "f"
    assert (serving[serving["scheduler"] == "dynamic"]["pad_fraction"] == 0).all()
    result = systolic.pack(TINY, MODEL, burst_log(tmp), [BUCKETS])
    table = result.to_dict()["buckets"]
    assert result.bucket_table["batch"].tolist() == [b["shape"][0] for b in table]


def test_packers_side_by_side(systolic_bin, tmp_path):
    """--policy none,ffd: one report per packer, each equal to its own run, and comparison.csv
    ranking them: on test_serving_cli's five prompts ffd runs [3, 20] where none runs [5, 20]."""
    log = tmp_path / "five.csv"
    log.write_text("arrival_s,prompt_tokens,output_tokens\n" + "".join(f"0,{p},1\n" for p in [8, 14, 6, 10, 12]))
    buckets = tmp_path / "lanes20.yaml"
    buckets.write_text("name: lanes20\nprefill: [[1, 20], [2, 20], [3, 20], [4, 20], [5, 20]]\ndecode: [[1, 24]]\n")
    args = ["-c", TINY, "-m", MODEL, "--requests", log, "--buckets", buckets, "--scheduler", "static"]
    proc = run_cli("pack", *args, "--policy", "none,ffd", "-o", tmp_path / "all")
    with open(tmp_path / "all" / "comparison.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["scheduler"], r["packer"]) for r in rows] == [("static", "none"), ("static", "ffd")]
    assert float(rows[1]["tax_time"]) < float(rows[0]["tax_time"])
    assert float(rows[1]["pad_fraction"]) < float(rows[0]["pad_fraction"])
    for packer in ["none", "ffd"]:
        run_cli("pack", *args, "--policy", packer, "-o", tmp_path / packer, "-q")
        alone = json.loads((tmp_path / packer / "report.json").read_text())
        both = json.loads((tmp_path / "all" / packer / "report.json").read_text())
        alone.pop("shapes_simulated"), both.pop("shapes_simulated")
        assert both == alone
    assert "comparison.csv" in proc.stdout
    bad = run_cli("pack", *args, "--policy", "ffd,ffd", "-o", tmp_path / "bad", check=False)
    assert bad.returncode == 2 and "--policy 'ffd,ffd': expected names separated by commas, each once" in bad.stderr
    assert not (tmp_path / "bad").exists()
