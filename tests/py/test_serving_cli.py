"""systolic pack --scheduler: the serving engine on the chip (docs/serving.md, "systolic pack")."""
import csv
import json
import math

import pytest

from conftest import REPO, run_cli

TINY = REPO / "configs" / "tiny-4x4.yaml"
MODEL = REPO / "tests" / "py" / "data" / "tiny-lm.yaml"
BUCKETS = REPO / "tests" / "py" / "data" / "tiny-buckets.yaml"  # prefill [1, 8], [2, 8]; decode [2, 16]
SCHEDULERS = ["static", "continuous", "chunked", "dynamic", "disaggregated"]


def burst_log(tmp_path, n=40):
    """n requests 1 us apart, prompts 1..8 tokens, outputs 1..6: more than one chip keeps up with."""
    path = tmp_path / "burst.csv"
    rows = [f"{i * 1e-6:.6f},{1 + i % 8},{1 + (i * 5) % 6}" for i in range(n)]
    path.write_text("arrival_s,prompt_tokens,output_tokens\n" + "\n".join(rows) + "\n")
    return path


def coarse_buckets(tmp_path):
    """A second bucket set: prefill [2, 8], decode [4, 16]."""
    path = tmp_path / "coarse.yaml"
    path.write_text("name: coarse\nprefill: [[2, 8]]\ndecode: [[4, 16]]\n")
    return path


def pack(tmp_path, *args, log=None, check=True):
    return run_cli("pack", "-c", TINY, "-m", MODEL, "--requests", log or burst_log(tmp_path), "--buckets", BUCKETS,
                   "--chunk-tokens", "8", *args, "-o", tmp_path / "out", check=check)


def nearest_rank(values, q):
    """The textbook nearest-rank percentile, written independently of the C++ one."""
    values = sorted(values)
    return values[max(1, math.ceil(q * len(values) - 1e-9)) - 1]


def outputs(tmp_path):
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    with open(tmp_path / "out" / "requests.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return report, rows


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_every_request_has_one_row_and_one_outcome(systolic_bin, tmp_path, scheduler):
    pack(tmp_path, "--scheduler", scheduler)
    report, rows = outputs(tmp_path)
    assert [int(r["id"]) for r in rows] == list(range(40))
    counts = report["serving"]["requests"]
    assert counts["total"] == 40 == counts["served"] + counts["truncated"] + counts["rejected"]
    assert sum(r["outcome"] == "served" for r in rows) == counts["served"]
    assert report["serving"]["scheduler"] == scheduler


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_no_request_decodes_before_its_prefill_finished(systolic_bin, tmp_path, scheduler):
    pack(tmp_path, "--scheduler", scheduler)
    _, rows = outputs(tmp_path)
    for r in rows:
        queue, ttft, e2e = float(r["queue_s"]), float(r["ttft_s"]), float(r["e2e_s"])
        assert 0 <= queue < ttft <= e2e
        generated = int(r["generated_tokens"])
        if generated > 1:  # every token after the first is one more step after the first token
            assert e2e - ttft == pytest.approx(float(r["tbt_mean_s"]) * (generated - 1))
            assert float(r["tbt_mean_s"]) > 0


def test_percentiles_are_nearest_rank_and_slo_counts_requests(systolic_bin, tmp_path):
    pack(tmp_path, "--scheduler", "continuous", "--slo-ttft", "2e-4", "--slo-tbt", "6e-6")
    report, rows = outputs(tmp_path)
    ttft = [float(r["ttft_s"]) for r in rows]
    latency = report["serving"]["latency_s"]["ttft"]
    for q, key in [(0.5, "p50"), (0.9, "p90"), (0.99, "p99")]:
        assert latency[key] == pytest.approx(nearest_rank(ttft, q), rel=1e-6)
    meets = [float(r["ttft_s"]) <= 2e-4 and (r["tbt_mean_s"] == "" or float(r["tbt_mean_s"]) <= 6e-6) for r in rows]
    slo = report["serving"]["slo"]
    assert 0 < sum(meets) < len(rows)  # the SLOs split this log
    assert slo["attainment"] == pytest.approx(sum(meets) / len(rows))
    assert slo["goodput_rps"] == pytest.approx(sum(meets) / report["serving"]["throughput"]["makespan_s"])


def test_terminal_summary_prints_latency_slo_and_overload(systolic_bin, tmp_path):
    out = pack(tmp_path, "--slo-ttft", "1", "--slo-tbt", "1").stdout
    for needle in ["serving: scheduler continuous", "TTFT", "TBT (mean)", "end-to-end", "p90",
                   "SLO TTFT <= 1 s, TBT <= 1 s: attainment 100.0 %", "load: offered"]:
        assert needle in out
    # 40 requests in 39 us are far more than one tiny chip serves in that time.
    assert "replicas would keep up" in out


def test_kv_budget_comes_from_the_model_and_the_chip(systolic_bin, tmp_path):
    pack(tmp_path)
    report, _ = outputs(tmp_path)
    kv = report["serving"]["kv"]
    # tiny-lm: 1 layer, K and V of d_model 8 (2 heads x 4), int8: 2 x 1 x 8 x 1 B per token, but
    # every region of the HBM layout starts at a multiple of 4 KiB, so this toy's cache takes more
    # (a real model's is exact: test_pack.py, Llama-2-7B).
    assert kv["bytes_per_token"] >= 16
    assert 0 < kv["capacity_bytes"] < report["config"]["hbm"]["capacity_bytes"]


@pytest.mark.parametrize("args,needle", [
    (["--scheduler", "continous"], "did you mean 'continuous'"),
    (["--slo-ttft", "0", "--slo-tbt", "1"], "--slo-ttft 0: expected a time in seconds > 0"),
    (["--slo-ttft", "1", "--slo-tbt", "-2"], "--slo-tbt -2: expected a time in seconds > 0"),
    (["--slo-ttft", "1"], "--slo-ttft and --slo-tbt: expected both"),
    (["--prefill-chips", "2"], "--prefill-chips 2: expected only with --scheduler disaggregated"),
    (["--scheduler", "disaggregated", "--decode-chips", "0"], "--decode-chips 0: expected chips in [1, 4096]"),
    # Capacity: replicas, the offered load.
    (["--replicas", "0"], "--replicas 0: expected a number of replicas in [1, 4096]"),
    (["--rate-scale", "0"], "--rate-scale 0: expected a factor > 0"),
    (["--rate-scale", "-1"], "--rate-scale -1: expected a factor > 0"),
    (["--poisson", "0"], "--poisson 0: expected an arrival rate in requests/s > 0"),
    (["--router", "round-robbin"], "did you mean 'round-robin'"),
    (["--rate-scale", "2", "--poisson", "3"], "--rate-scale and --poisson: expected at most one"),
    (["--poisson-requests", "5"], "--poisson-requests 5: expected with --poisson"),
    (["--poisson", "3", "--poisson-requests", "0"], "--poisson-requests 0: expected a number of requests >= 1"),
])
def test_bad_serving_flags_exit_2_without_output(systolic_bin, tmp_path, args, needle):
    proc = pack(tmp_path, *args, check=False)
    assert proc.returncode == 2 and needle in proc.stderr
    assert not (tmp_path / "out").exists()


def test_empty_log_exits_2(systolic_bin, tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("arrival_s,prompt_tokens,output_tokens\n")
    proc = pack(tmp_path, log=empty, check=False)
    assert proc.returncode == 2 and "empty.csv" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_the_tax_baseline_does_not_move_with_packer_or_bucket_set(systolic_bin, tmp_path):
    coarse = coarse_buckets(tmp_path)
    log = burst_log(tmp_path)
    baselines = set()
    for packer in ["none", "ffd"]:
        run_cli("pack", "-c", TINY, "-m", MODEL, "--requests", log, "--buckets", BUCKETS, "--buckets", coarse,
                "--policy", packer, "-o", tmp_path / packer)
        report = json.loads((tmp_path / packer / "report.json").read_text())
        for rep in report["replays"]:
            tax = rep["tax"]
            assert tax["baseline"] == "dynamic" and tax["baseline_bucket_set"] == "tiny"
            assert tax["time"] == pytest.approx(tax["busy_s"] / tax["baseline_busy_s"] - 1)
            assert tax["energy"] == pytest.approx(tax["energy_pj"] / tax["baseline_energy_pj"] - 1)
            assert tax["time"] > 0  # static shapes compute pads the varlen steps do not
            baselines.add((tax["baseline_busy_s"], tax["baseline_energy_pj"]))
    assert len(baselines) == 1


def test_a_tighter_packer_pays_less_tax(systolic_bin, tmp_path):
    """docs/packing.md's packer example at a fifth of its size: prompts 8, 14, 6, 10, 12 arriving
    together, lanes of 20. none needs 5 lanes, first-fit 4 ({8 6}{14}{10}{12}), first-fit-decreasing
    3 ({14 6}{12 8}{10}): one static step of [5, 20], [4, 20] or [3, 20]."""
    log = tmp_path / "five.csv"
    log.write_text("arrival_s,prompt_tokens,output_tokens\n" + "".join(f"0,{p},1\n" for p in [8, 14, 6, 10, 12]))
    buckets = tmp_path / "lanes20.yaml"
    buckets.write_text("name: lanes20\nprefill: [[1, 20], [2, 20], [3, 20], [4, 20], [5, 20]]\ndecode: [[1, 24]]\n")
    taxes, baselines = {}, set()
    for packer, lanes in [("none", 5), ("first-fit", 4), ("ffd", 3)]:
        run_cli("pack", "-c", TINY, "-m", MODEL, "--requests", log, "--buckets", buckets, "--scheduler", "static",
                "--policy", packer, "-o", tmp_path / packer, "-q")
        report = json.loads((tmp_path / packer / "report.json").read_text())
        [prefill] = report["buckets"]
        assert prefill["shape"] == [lanes, 20] and prefill["pad_tokens"] == 20 * lanes - 50
        assert prefill["seconds"] == pytest.approx(report["serving"]["throughput"]["busy_s"])
        taxes[packer] = report["tax"]["time"], report["tax"]["energy"]
        baselines.add((report["tax"]["baseline_busy_s"], report["tax"]["baseline_energy_pj"]))
    assert len(baselines) == 1  # the dynamic baseline does not move with the packer
    assert taxes["none"][0] > taxes["first-fit"][0] > taxes["ffd"][0] > 0
    assert taxes["none"][1] > taxes["first-fit"][1] > taxes["ffd"][1] > 0


def test_dynamic_pays_no_tax_against_itself(systolic_bin, tmp_path):
    pack(tmp_path, "--scheduler", "dynamic")
    report, _ = outputs(tmp_path)
    assert report["tax"]["time"] == 0 and report["tax"]["energy"] == 0


def test_replicas_share_the_log_and_cut_the_wait(systolic_bin, tmp_path):
    waits = {}
    for n in ["1", "4"]:
        out = tmp_path / n
        run_cli("pack", "-c", TINY, "-m", MODEL, "--requests", burst_log(tmp_path), "--buckets", BUCKETS,
                "--replicas", n, "--router", "least-loaded", "-o", out)
        report = json.loads((out / "report.json").read_text())
        assert report["serving"]["replicas"] == int(n) and report["serving"]["requests"]["served"] == 40
        waits[n] = report["serving"]["latency_s"]["queue"]["mean"]
    assert waits["4"] < waits["1"]


def test_rate_scale_and_poisson_change_the_offered_load(systolic_bin, tmp_path):
    pack(tmp_path, "--rate-scale", "0.5")
    slow, _ = outputs(tmp_path)
    pack(tmp_path, "--poisson", "1000", "--seed", "3")
    poisson, rows = outputs(tmp_path)
    base = tmp_path / "base"
    run_cli("pack", "-c", TINY, "-m", MODEL, "--requests", burst_log(tmp_path), "--buckets", BUCKETS, "-o", base)
    offered = json.loads((base / "report.json").read_text())["serving"]["load"]["offered_rps"]
    assert slow["serving"]["load"]["offered_rps"] == pytest.approx(offered / 2)
    assert len(rows) == 40 and float(rows[0]["arrival_s"]) == 0
    # 39 exponential gaps at 1000/s: about 39 ms (loose: a seeded draw, not an average of many).
    assert 0.015 < float(rows[-1]["arrival_s"]) < 0.08
    # --poisson-requests draws more requests than the log has, the same first ones for a seed.
    pack(tmp_path, "--poisson", "1000", "--seed", "3", "--poisson-requests", "300")
    more, more_rows = outputs(tmp_path)
    assert more["requests"]["count"] == 300 == len(more_rows)
    assert more["policy"]["poisson_requests"] == 300
    assert [r["arrival_s"] for r in more_rows[:40]] == [r["arrival_s"] for r in rows]


@pytest.mark.parametrize("args,needle", [
    (["--chunk-tokens", "0"], "--chunk-tokens 0: expected prompt tokens per step >= 1"),
    # The [1, C] step is checked as a bucket is: a multiple of the 4x4 array's tile, a length tiny-lm takes.
    (["--chunk-tokens", "6"], "--chunk-tokens 6: expected a multiple of the array tile, 4 tokens (lcm of mxu.rows 4 "
                              "and mxu.cols 4): 4 or 8"),
    (["--chunk-tokens", "100"], "sequence length S = 100 is more than the model's max_seq = 64"),
    (["--chunk-tokens", "8", "--window", "-1"], "--window -1: expected a batching window in milliseconds >= 0"),
    (["--chunk-tokens", "8", "--compile-stall", "-5"], "--compile-stall -5: expected the seconds one compilation takes"),
])
def test_bad_chunk_and_window_exit_2(systolic_bin, tmp_path, args, needle):
    proc = run_cli("pack", "-c", TINY, "-m", MODEL, "--requests", burst_log(tmp_path), "--buckets", BUCKETS,
                   "--scheduler", "chunked", *args, "-o", tmp_path / "out", check=False)
    assert proc.returncode == 2 and needle in proc.stderr
    assert not (tmp_path / "out").exists()


def test_disaggregated_pool_sizes_are_parameters(systolic_bin, tmp_path):
    results = {}
    for pools in [("1", "1"), ("2", "3")]:
        out = tmp_path / "-".join(pools)
        run_cli("pack", "-c", TINY, "-m", MODEL, "--requests", burst_log(tmp_path), "--buckets", BUCKETS,
                "--scheduler", "disaggregated", "--prefill-chips", pools[0], "--decode-chips", pools[1], "-o", out)
        report = json.loads((out / "report.json").read_text())
        with open(out / "requests.csv", newline="") as f:
            slots = {int(r["slot"]) for r in csv.DictReader(f)} - {-1}
        results[pools] = report["serving"], slots
    small, small_slots = results[("1", "1")]
    large, large_slots = results[("2", "3")]
    assert small["pools"] == {"prefill_chips": 1, "decode_chips": 1} and small["chips"] == 2
    assert large["pools"] == {"prefill_chips": 2, "decode_chips": 3} and large["chips"] == 5
    # Slots are decode chip x B + slot, B = 2: one decode chip has slots 0-1, three have 0-5,
    # and the burst fills more than one.
    assert small_slots <= {0, 1} and large_slots <= set(range(6)) and max(large_slots) >= 2
    assert large["requests"]["served"] == small["requests"]["served"] == 40
    # Two prefill chips take the burst's prompts two at a time: the first tokens come sooner.
    assert large["latency_s"]["ttft"]["mean"] < small["latency_s"]["ttft"]["mean"]


def test_disaggregated_pools_fill_a_multi_chip_config(systolic_bin, tmp_path):
    ring = ["--set", "ici.topology=ring", "--set", "ici.dims=4"]
    run_cli("pack", "-c", TINY, *ring, "-m", MODEL, "--requests", burst_log(tmp_path), "--buckets", BUCKETS,
            "--scheduler", "disaggregated", "-o", tmp_path / "out", "-q")
    serving = json.loads((tmp_path / "out" / "report.json").read_text())["serving"]
    assert (serving["replicas"], serving["chips"]) == (2, 4)  # two replicas of 1 prefill + 1 decode chip
    proc = run_cli("pack", "-c", TINY, *ring, "-m", MODEL, "--requests", burst_log(tmp_path), "--buckets", BUCKETS,
                   "--scheduler", "disaggregated", "--prefill-chips", "2", "-o", tmp_path / "bad", check=False)
    assert proc.returncode == 2 and "has 4 chips: expected a multiple of the 3 chips of a replica" in proc.stderr
    assert not (tmp_path / "bad").exists()


def test_lane_view_lists_every_prefill_instance_with_segment_ids(systolic_bin, tmp_path):
    lanes, page = tmp_path / "lanes.json", tmp_path / "lanes.html"
    pack(tmp_path, "--lanes", lanes, "--lanes-html", page)
    report, _ = outputs(tmp_path)
    view = json.loads(lanes.read_text())
    assert view["lanes_schema"] == 2 and view["bucket_set"] == "tiny"
    instances = view["instances"]
    prefill = [b for b in report["buckets"] if b["phase"] == "prefill"]
    assert len(instances) == sum(b["instances"] for b in prefill)
    seen = []
    for inst in instances:
        batch, length = inst["shape"]
        assert len(inst["lanes"]) == batch
        for lane in inst["lanes"]:
            assert [s["segment_id"] for s in lane["segments"]] == list(range(1, len(lane["segments"]) + 1))
            assert lane["cu_seqlens"] == [0] + [s["offset"] + s["tokens"] for s in lane["segments"]]
            assert lane["used"] + lane["pad_tokens"] == length
            seen += [s["request"] for s in lane["segments"]]
    assert sorted(seen) == list(range(40))  # every request's prompt in exactly one lane (none split)
    assert sum(i["pad_tokens"] for i in instances) == sum(b["pad_tokens"] for b in prefill)
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and '"lanes_schema":2' in text


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_shapes_simulated_ahead_in_workers_change_no_byte(systolic_bin, tmp_path, scheduler):
    """-j N simulates the scheduler's shapes in N - 1 worker processes besides the replay's own
    (docs/serving.md, "Speed"): report.json and requests.csv are the bytes of -j 1, which
    simulates each shape in the replay's process when a step first needs it."""
    log = burst_log(tmp_path)
    files = {}
    for jobs in ("1", "3"):
        run_cli("pack", "-c", TINY, "-m", MODEL, "--requests", log, "--buckets", BUCKETS, "--chunk-tokens", "8",
                "--scheduler", scheduler, "-j", jobs, "-o", tmp_path / jobs, "-q")
        files[jobs] = [(tmp_path / jobs / name).read_bytes() for name in ("report.json", "requests.csv")]
    assert files["1"] == files["3"]


def test_capacity_with_workers_changes_no_byte(systolic_bin, tmp_path):
    log = burst_log(tmp_path, n=20)
    files = {}
    for jobs in ("1", "2"):
        run_cli("capacity", "-c", TINY, "-m", MODEL, "--requests", log, "--buckets", BUCKETS, "--slo-ttft", "0.01",
                "--slo-tbt", "0.01", "-j", jobs, "-o", tmp_path / jobs, "-q")
        files[jobs] = [(tmp_path / jobs / name).read_bytes() for name in ("capacity.json", "capacity.csv")]
    assert files["1"] == files["2"]


def test_jobs_below_one_exits_2(systolic_bin, tmp_path):
    proc = pack(tmp_path, "-j", "0", check=False)
    assert proc.returncode == 2 and "--jobs" in proc.stderr
    assert not (tmp_path / "out").exists()
