"""systolic capacity: the highest rate one replica sustains and the fewest replicas for a log
(docs/serving.md, "Capacity")."""
import csv
import json

import pytest

from conftest import run_cli
from test_serving_cli import BUCKETS, MODEL, TINY, burst_log


def even_log(tmp_path, n=20):
    """n one-token requests 1 s apart: each is one prefill [1, 8] step under `static`."""
    path = tmp_path / "even.csv"
    path.write_text("arrival_s,prompt_tokens,output_tokens\n" + "".join(f"{i}.0,1,1\n" for i in range(n)))
    return path


def capacity(tmp_path, *args, log=None, check=True):
    return run_cli("capacity", "-c", TINY, "-m", MODEL, "--requests", log or burst_log(tmp_path), "--buckets",
                   BUCKETS, *args, "-o", tmp_path / "out", check=check)


def outputs(tmp_path):
    report = json.loads((tmp_path / "out" / "capacity.json").read_text())
    with open(tmp_path / "out" / "capacity.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return report, rows


def test_deterministic_service_capacity_is_one_over_the_step_time(systolic_bin, tmp_path):
    # The step time t of prefill [1, 8] from pack's work table; with the TTFT SLO t, a request
    # meets it only if it never waits, so one chip sustains exactly 1/t requests/s of this log.
    log = even_log(tmp_path)
    run_cli("pack", "-c", TINY, "-m", MODEL, "--requests", log, "--buckets", BUCKETS, "--scheduler", "static",
            "-o", tmp_path / "pack", "-q")
    (bucket,) = json.loads((tmp_path / "pack" / "report.json").read_text())["buckets"]
    assert bucket["shape"] == [1, 8]
    step = bucket["seconds_per_instance"]
    proc = capacity(tmp_path, "--scheduler", "static", "--slo-ttft", repr(step * (1 + 1e-9)), "--slo-tbt", "1",
                    "--target", "1", "--tolerance", "0.001", log=log)
    report, rows = outputs(tmp_path)
    rate = report["rate"]
    assert rate["highest"]["offered_rps"] <= 1 / step * (1 + 1e-6)
    assert rate["lowest_failed"]["offered_rps"] > 1 / step
    assert rate["lowest_failed"]["rate_factor"] <= rate["highest"]["rate_factor"] * 1.001
    assert rate["monotone"]
    assert report["replicas"]["fewest"]["replicas"] == 1  # the log's own rate (1/s) is far below 1/t
    assert f"wrote: {tmp_path / 'out' / 'capacity.json'}, {tmp_path / 'out' / 'capacity.csv'}" in proc.stdout


def test_curves_in_json_and_csv_agree_and_answers_bracket_the_target(systolic_bin, tmp_path):
    capacity(tmp_path, "--slo-ttft", "1e-4", "--slo-tbt", "1e-5", "--target", "0.9", "-q")
    report, rows = outputs(tmp_path)
    assert report["capacity_schema"] == 1 and report["target"] == 0.9 and report["scheduler"] == "continuous"
    curve = report["rate"]["curve"] + report["replicas"]["curve"]
    assert len(rows) == len(curve)
    for row, point in zip(rows, curve):
        assert float(row["attainment"]) == pytest.approx(point["attainment"])
        assert int(row["replicas"]) == point["replicas"] and (row["sustained"] == "true") == point["sustained"]
        assert point["sustained"] == (point["attainment"] >= 0.9)
    rate = [p["rate_factor"] for p in report["rate"]["curve"]]
    assert rate == sorted(rate)
    replicas = report["replicas"]["curve"]
    fewest = report["replicas"]["fewest"]["replicas"]
    assert all(p["sustained"] == (p["replicas"] >= fewest) for p in replicas)
    # More replicas never serve this burst worse (a larger share of it meets the SLO).
    assert [p["attainment"] for p in replicas] == sorted(p["attainment"] for p in replicas)


def test_search_picks_one_question(systolic_bin, tmp_path):
    capacity(tmp_path, "--slo-ttft", "1e-4", "--slo-tbt", "1e-5", "--search", "replicas", "-q")
    report, rows = outputs(tmp_path)
    assert report["rate"] is None and {r["search"] for r in rows} == {"replicas"}


@pytest.mark.parametrize("args,needle", [
    ([], "--slo-ttft and --slo-tbt: expected both; capacity is the load served within them"),
    (["--slo-ttft", "1", "--slo-tbt", "1", "--target", "0"], "--target 0: expected the SLO attainment"),
    (["--slo-ttft", "1", "--slo-tbt", "1", "--target", "1.5"], "in (0, 1]"),
    (["--slo-ttft", "1", "--slo-tbt", "1", "--tolerance", "0"], "--tolerance 0: expected"),
    (["--slo-ttft", "1", "--slo-tbt", "1", "--max-replicas", "0"], "--max-replicas 0: expected"),
    (["--slo-ttft", "1", "--slo-tbt", "1", "--search", "rates"], "did you mean 'rate'"),
    (["--slo-ttft", "-1", "--slo-tbt", "1"], "--slo-ttft -1: expected a time in seconds > 0"),
    (["--slo-ttft", "1", "--slo-tbt", "1", "--scheduler", "statc"], "did you mean 'static'"),
])
def test_bad_capacity_input_exits_2_without_output(systolic_bin, tmp_path, args, needle):
    proc = capacity(tmp_path, *args, check=False)
    assert proc.returncode == 2 and needle in proc.stderr
    assert not (tmp_path / "out").exists()
