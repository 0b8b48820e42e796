"""systolic pack: the Azure code trace replayed through bucket sets on a chip."""
import csv
import json

import pytest

from conftest import REPO, run_cli

V4I = REPO / "configs" / "tpu-v4i.yaml"
MODEL = REPO / "traces" / "models" / "llama2-7b.yaml"
LOG = REPO / "traces" / "requests" / "azure-llm-2023" / "AzureLLMInferenceTrace_code.csv"
SETS = [REPO / "traces" / "buckets" / "llama2-4k.yaml", REPO / "traces" / "buckets" / "llama2-pow2.yaml"]
# A what-if: Llama-2-7B (13.5 GB) and the largest bucket's KV cache (decode [16, 2048]: 30.7 GB
# in all) do not fit the real part's 8 GiB, and pack refuses that (test_capacity.py).
WHAT_IF_HBM = ["--set", "hbm.capacity_bytes=32 GiB"]


def pack(tmp_path, *args, log=LOG, sets=SETS, check=True, name="out"):
    bucket_args = [a for s in sets for a in ("--buckets", s)]
    proc = run_cli("pack", "-c", V4I, *WHAT_IF_HBM, "-m", MODEL, "--requests", log, *bucket_args, *args,
                   "-o", tmp_path / name, check=check)
    return proc


@pytest.fixture(scope="module")
def replay(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pack")
    proc = pack(tmp, "--policy", "ffd", "--window", "50", "--overflow", "split")
    report = json.loads((tmp / "out" / "report.json").read_text())
    report["_outdir"] = str(tmp / "out")
    return proc, report


def csv_rows(rep, report):
    """The requests CSV of one bucket set of the replay fixture."""
    first = rep["bucket_set"] == report["replays"][0]["bucket_set"]
    name = "requests.csv" if first else f"requests-{rep['bucket_set']}.csv"
    with open(f"{report['_outdir']}/{name}", newline="") as f:
        return list(csv.DictReader(f))


def test_prints_a_table_per_bucket_set(systolic_bin, replay):
    proc, _ = replay
    assert sum(line.startswith("bucket set ") for line in proc.stdout.splitlines()) == 2
    assert proc.stdout.count("static-shape tax against dynamic") == 2
    assert proc.stdout.count("serving: scheduler continuous") == 2


def test_report_fields(systolic_bin, replay):
    _, r = replay
    for b in r["buckets"]:
        for key in ["phase", "shape", "instances", "requests", "useful_tokens", "pad_tokens",
                    "padding_waste", "mask_waste", "seconds", "energy_pj"]:
            assert key in b
        assert 0 <= b["padding_waste"] + b["mask_waste"] <= 1
    for key in ["requests", "rejected", "truncated", "useful_tokens", "pad_tokens", "seconds", "energy_pj"]:
        assert key in r["totals"]
    assert len(r["replays"]) == 2
    # One baseline for both sets; a static shape costs more than varlen steps.
    assert r["replays"][0]["tax"]["baseline_busy_s"] == r["replays"][1]["tax"]["baseline_busy_s"]
    assert all(rep["tax"]["time"] > 0 and rep["tax"]["energy"] > 0 for rep in r["replays"])


def test_every_prompt_token_is_counted_once(systolic_bin, replay):
    _, r = replay
    rows = [line.split(",") for line in LOG.read_text().splitlines()[1:]]
    for rep in r["replays"]:
        counts = rep["serving"]["requests"]
        assert rep["totals"]["rejected"] == counts["rejected"] == len(rep["rejected_requests"])
        assert rep["totals"]["truncated"] == counts["truncated"] > 0  # --overflow split truncates
        longest = max(b["shape"][1] for b in rep["buckets"] if b["phase"] == "prefill")
        rejected = {q["request"] for q in rep["rejected_requests"]}
        # Only prompts longer than every prefill S are refused (split truncates contexts, it does
        # not cut prompts); everything else is prefilled exactly once, in the work table's rows.
        assert all(q["reason"] == "prompt-exceeds-prefill" for q in rep["rejected_requests"])
        assert len(rejected) == sum(int(row[1]) > longest for row in rows)
        prefill = [b for b in rep["buckets"] if b["phase"] == "prefill"]
        assert sum(b["useful_tokens"] for b in prefill) == rep["totals"]["useful_tokens"]
        # Each prefill row: instances x B x S token slots = useful + pad.
        for b in prefill:
            assert b["instances"] * b["shape"][0] * b["shape"][1] == b["useful_tokens"] + b["pad_tokens"]


def test_the_work_table_is_the_serving_replay(systolic_bin, replay):
    _, r = replay
    rows = [line.split(",") for line in LOG.read_text().splitlines()[1:]]
    for rep in r["replays"]:
        served = [q for q in csv_rows(rep, r) if q["outcome"] != "rejected"]
        prefill = [b for b in rep["buckets"] if b["phase"] == "prefill"]
        decode = [b for b in rep["buckets"] if b["phase"] == "decode"]
        assert sum(b["useful_tokens"] for b in prefill) == sum(int(q["prompt_tokens"]) for q in served)
        # Decode generates every token after the first (prefill's), and no more.
        assert sum(b["useful_tokens"] for b in decode) == sum(int(q["generated_tokens"]) - 1 for q in served)
        # Busy time per shape sums to the replay's busy time; energy per shape to the total and
        # to the requests' shares.
        assert sum(b["seconds"] for b in rep["buckets"]) == pytest.approx(rep["serving"]["throughput"]["busy_s"])
        assert sum(b["energy_pj"] for b in rep["buckets"]) == pytest.approx(rep["tax"]["energy_pj"])
        assert sum(float(q["energy_pj"]) for q in csv_rows(rep, r)) == pytest.approx(rep["tax"]["energy_pj"], rel=1e-5)
        assert len(rows) == rep["serving"]["requests"]["total"]


def test_one_request_per_lane_has_no_cross_request_cells(systolic_bin, tmp_path):
    pack(tmp_path, "--policy", "none", "--overflow", "split", sets=SETS[:1])
    r = json.loads((tmp_path / "out" / "report.json").read_text())
    assert all(b["mask_waste"] == 0 for b in r["buckets"])


def test_reject_policy_counts_and_lists_shape_mismatches(systolic_bin, tmp_path):
    pack(tmp_path, "--policy", "ffd", sets=SETS[:1])
    r = json.loads((tmp_path / "out" / "report.json").read_text())
    longest = 4096
    too_long = [l for l in LOG.read_text().splitlines()[1:] if int(l.split(",")[1]) > longest]
    assert r["totals"]["rejected"] >= len(too_long) > 0
    assert len(r["replays"][0]["rejected_requests"]) == r["totals"]["rejected"]


@pytest.mark.parametrize("log_text,needle", [
    ("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,12,3\n"
     "2023-11-16 18:17:04.0319600,abc,8\n", ":3:"),
    ("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,0,3\n", ":2:"),
])
def test_bad_logs_exit_2_without_output(systolic_bin, tmp_path, log_text, needle):
    log = tmp_path / "bad.csv"
    log.write_text(log_text)
    proc = pack(tmp_path, log=log, check=False)
    assert proc.returncode == 2 and needle in proc.stderr
    assert not (tmp_path / "out" / "report.json").exists()


def test_bad_buckets_and_policy_exit_2(systolic_bin, tmp_path):
    empty = tmp_path / "empty.yaml"
    empty.write_text("name: e\nprefill: []\ndecode: [[8, 4096]]\n")
    assert pack(tmp_path, sets=[empty], check=False).returncode == 2
    odd = tmp_path / "odd.yaml"
    odd.write_text("prefill: [[1, 1000]]\ndecode: [[8, 4096]]\n")  # not a multiple of 128
    assert pack(tmp_path, sets=[odd], check=False).returncode == 2
    proc = pack(tmp_path, "--policy", "first-fitt", sets=SETS[:1], check=False)
    assert proc.returncode == 2 and "did you mean 'first-fit'" in proc.stderr
    assert not (tmp_path / "out" / "report.json").exists()


FOUR_CHIPS = ["--set", "ici.topology=ring", "--set", "ici.dims=4"]


@pytest.fixture(scope="module")
def four_chips(tmp_path_factory):
    """Six short requests on a 4-chip v4i ring, as 4 one-chip replicas (--tp 1) and as one
    replica of 4 chips (--tp 4): Llama-2-7B at prefill [1, 256] and decode [2, 512]."""
    tmp = tmp_path_factory.mktemp("tp")
    log = tmp / "short.csv"
    log.write_text("arrival_s,prompt_tokens,output_tokens\n" +
                   "".join(f"{i * 0.01:.2f},{100 + 20 * i},{4 + i}\n" for i in range(6)))
    buckets = tmp / "small.yaml"
    buckets.write_text("name: small\nprefill: [[1, 256]]\ndecode: [[2, 512]]\n")
    reports = {}
    for tp in [1, 4]:
        run_cli("pack", "-c", V4I, *WHAT_IF_HBM, *FOUR_CHIPS, "-m", MODEL, "--requests", log, "--buckets", buckets,
                "--tp", tp, "-o", tmp / str(tp), "-q")
        reports[tp] = json.loads((tmp / str(tp) / "report.json").read_text())
    return reports


def test_tp_shards_each_step_over_the_replica_chips(systolic_bin, four_chips):
    steps = {tp: {b["phase"]: b["seconds_per_instance"] for b in r["buckets"]} for tp, r in four_chips.items()}
    # The same shapes, each step's work split over 4 chips: faster per token, and not more than
    # 4x faster (the collectives between the chips cost time).
    for phase in ["prefill", "decode"]:
        assert steps[1][phase] / 4 < steps[4][phase] < steps[1][phase]


def test_replicas_default_to_chips_over_tp(systolic_bin, four_chips):
    for tp, replicas in [(1, 4), (4, 1)]:
        serving = four_chips[tp]["serving"]
        assert (serving["replicas"], serving["tp"], serving["chips"]) == (replicas, tp, 4)
        assert four_chips[tp]["policy"]["tp"] == tp and four_chips[tp]["pack_schema"] == 4
        counts = serving["requests"]
        assert counts["total"] == 6 == counts["served"] + counts["truncated"] + counts["rejected"]


def test_kv_budget_is_the_replicas_after_sharding(systolic_bin, four_chips):
    one, four = four_chips[1]["serving"]["kv"], four_chips[4]["serving"]["kv"]
    # The cache of a token is split over the 4 chips, not multiplied: the same bytes in all.
    assert four["bytes_per_token"] == one["bytes_per_token"]
    # Four chips hold the weights once between them (a quarter each), one chip holds them
    # whole: a 4-chip replica has more than 4 one-chip replicas' room for the cache.
    assert four["capacity_bytes"] > 4 * one["capacity_bytes"]


@pytest.mark.parametrize("args,needle", [
    (FOUR_CHIPS + ["--tp", "3"], "--tp 3: expected a number of chips whose slice tiles the 4 chips of"),
    (FOUR_CHIPS + ["--replicas", "2"], "--replicas 2: " + str(V4I) + " has 4 chips, 1 per replica (--tp 1): "
                                       "expected 4 or no --replicas"),
    (["--tp", "2"], f"--tp 2: {V4I} is a single chip (ici.topology: none): expected --tp 1"),
])
def test_inconsistent_tp_and_replicas_exit_2(systolic_bin, tmp_path, args, needle):
    proc = run_cli("pack", "-c", V4I, *WHAT_IF_HBM, *args, "-m", MODEL, "--requests", LOG, "--buckets", SETS[0],
                   "-o", tmp_path / "out", check=False)
    assert proc.returncode == 2 and needle in proc.stderr
    assert not (tmp_path / "out" / "report.json").exists()


def test_timeline_shows_each_request_decoding_after_its_prefill(systolic_bin, tmp_path):
    timeline = tmp_path / "tl.json"
    pack(tmp_path, "--policy", "ffd", "--overflow", "split", "--timeline", timeline, sets=SETS[:1])
    r = json.loads((tmp_path / "out" / "report.json").read_text())
    slices = [e for e in json.loads(timeline.read_text())["traceEvents"] if e["ph"] == "X"]
    prefill = {e["args"]["request"]: e for e in slices if e["name"].startswith("prefill")}
    decode = {e["args"]["request"]: e for e in slices if e["name"].startswith("decode")}
    served = r["serving"]["requests"]["served"] + r["serving"]["requests"]["truncated"]
    assert len(prefill) == served and decode
    # Whole microseconds (no float rounding such as 0.10199999999999994 s)
    assert all(isinstance(e["ts"], int) and isinstance(e["dur"], int) for e in slices)
    for rid, d in decode.items():  # decode starts when its prefill has produced the first token
        p = prefill[rid]
        assert d["ts"] == p["ts"] + p["dur"]
    # A decode slot holds one request at a time.
    by_slot = {}
    for e in sorted(slices, key=lambda e: e["ts"]):
        by_slot.setdefault(e["tid"], []).append(e)
    for tid, events in by_slot.items():
        if tid == 0:
            continue  # requests that never decoded
        for a, b in zip(events, events[1:]):
            assert a["ts"] + a["dur"] <= b["ts"]


def test_kv_budget_of_llama2_7b(systolic_bin, replay):
    _, r = replay
    # 2 (K, V) x 32 layers x 32 KV heads x 128 x 2 B (bf16) per token of context.
    assert r["serving"]["kv"]["bytes_per_token"] == 2 * 32 * 32 * 128 * 2
