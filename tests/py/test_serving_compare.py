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
    # Two sets of one prefill and one decode shape each, per report.
    assert len(buckets) == 3 * 4 and list(buckets["scheduler"].unique()) == SCHEDULERS
    for column in ["batch", "length", "instances", "pad_tokens", "fill", "seconds", "energy_pj"]:
        assert buckets[column].dtype.kind in "if", column
    assert set(buckets["bucket_set"]) == {"tiny", "coarse"}
    serving = serving_frame(paths)
    assert len(serving) == 6 and serving["ttft_p99_s"].dtype.kind == "f"
    assert (serving[serving["scheduler"] == "dynamic"]["pad_fraction"] == 0).all()
    result = systolic.pack(TINY, MODEL, burst_log(tmp), [BUCKETS])
    assert len(result.bucket_table) == 2 and result.bucket_table["batch"].tolist() == [1, 2]
