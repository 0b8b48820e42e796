"""Timelines of long runs (docs/timelines.md, "Large runs"): gzip, a window of cycles, the size
limit checked before simulating. The references are the full, uncompressed timeline of the same
run (itself checked against the simulator in test_viz.py and test_memory_system.py)."""
import gzip
import json

import pytest

from conftest import REPO, run_cli

V4I = REPO / "configs" / "tpu-v4i.yaml"
GPT2 = REPO / "traces" / "gemms" / "gpt2.yaml"


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    out = tmp_path_factory.mktemp("full")
    run_cli("run", "-c", V4I, "-w", GPT2, "-o", out, "-q", "--timeline", out / "t.json")
    return (out / "t.json").read_bytes()


def test_json_gz_is_the_same_timeline_gzip_compressed(systolic_bin, full, tmp_path):
    paths = [tmp_path / "a" / "t.json.gz", tmp_path / "b" / "t.json.gz"]
    for p in paths:
        run_cli("run", "-c", V4I, "-w", GPT2, "-o", p.parent, "-q", "--timeline", p)
    data = paths[0].read_bytes()
    assert data[:2] == b"\x1f\x8b"  # a gzip member, as Perfetto's loader expects of .gz
    assert gzip.decompress(data) == full
    assert len(data) < len(full) / 5
    assert paths[1].read_bytes() == data  # same run, same bytes


def counter_value_at(events, name, cycle):
    # In file order (a later point at the same cycle replaces an earlier one).
    points = sorted(((e["ts"], e["args"]["value"]) for e in events if e["ph"] == "C" and e["name"] == name),
                    key=lambda p: p[0])
    before = [v for ts, v in points if ts <= cycle]
    return before[-1] if before else None


def test_window_keeps_what_overlaps_it_and_the_counters_at_its_start(systolic_bin, full, tmp_path):
    a, b = 20000, 30000
    run_cli("run", "-c", V4I, "-w", GPT2, "-o", tmp_path, "-q", "--timeline", tmp_path / "w.json",
            "--timeline-window", f"{a}:{b}")
    cut = json.loads((tmp_path / "w.json").read_text())
    whole = json.loads(full)["traceEvents"]
    events = cut["traceEvents"]
    assert cut["otherData"]["window_cycles"] == [a, b]
    key = lambda e: json.dumps(e, sort_keys=True)  # noqa: E731
    # Slices: exactly those of the whole timeline that overlap [a, b).
    want = {key(e) for e in whole if e["ph"] == "X" and e["ts"] < b and e["ts"] + e["dur"] >= a}
    assert {key(e) for e in events if e["ph"] == "X"} == want and want
    # Every track's name is kept; counters hold the value they had at the window's start.
    assert [e for e in events if e["ph"] == "M"] == [e for e in whole if e["ph"] == "M"]
    for name in {e["name"] for e in whole if e["ph"] == "C"}:
        assert counter_value_at(events, name, a) == counter_value_at(whole, name, a), name
        assert all(a <= e["ts"] < b for e in events if e["ph"] == "C" and e["name"] == name)


def test_a_timeline_over_the_limit_is_refused_before_simulating(systolic_bin, tmp_path):
    proc = run_cli("run", "-c", V4I, "-w", GPT2, "-o", tmp_path / "out", "--timeline", tmp_path / "t.json",
                   "--timeline-limit", "0.1", check=False)
    assert proc.returncode == 2
    assert "--timeline" in proc.stderr and "more than --timeline-limit, 0.1 MiB" in proc.stderr
    assert "--timeline-window A:B" in proc.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "t.json").exists()
    for args, needle in [(["--timeline-window", "5:3"], "B must be greater than A"),
                         (["--timeline-window", "x"], "expected A:B"),
                         (["--timeline-limit", "0"], "timeline-limit")]:
        proc = run_cli("run", "-c", V4I, "-w", GPT2, "-o", tmp_path / "out", "--timeline", tmp_path / "t.json",
                       *args, check=False)
        assert proc.returncode == 2 and needle in proc.stderr, proc.stderr
        assert not (tmp_path / "out").exists()


def test_sample_keeps_every_nth_slice_with_its_stall_and_each_counters_area(systolic_bin, full, tmp_path):
    n = 7
    run_cli("run", "-c", V4I, "-w", GPT2, "-o", tmp_path, "-q", "--timeline", tmp_path / "s.json",
            "--timeline-sample", str(n))
    sampled = json.loads((tmp_path / "s.json").read_text())
    whole = json.loads(full)["traceEvents"]
    events = sampled["traceEvents"]
    key = lambda e: json.dumps(e, sort_keys=True)  # noqa: E731
    # The reference, worked from the whole timeline: on each track, instruction slices in file
    # order; keep the 0th, nth, 2nth...; a stall goes with the instruction it precedes.
    want, dropped = set(), 0
    tracks = {(e["pid"], e["tid"]) for e in whole if e["ph"] == "X"}
    for track in tracks:
        slices = [e for e in whole if e["ph"] == "X" and (e["pid"], e["tid"]) == track]
        ordinal = 0
        for e in slices:
            if e["cat"] == "stall":
                if ordinal % n == 0:
                    want.add(key(e))
                continue
            if ordinal % n == 0:
                want.add(key(e))
            else:
                dropped += 1
            ordinal += 1
    assert {key(e) for e in events if e["ph"] == "X"} == want
    assert sampled["otherData"]["sample_every"] == n and sampled["otherData"]["slices_dropped"] == dropped > 0
    # Names are whole; every arrow kept has both ends.
    assert [e for e in events if e["ph"] == "M"] == [e for e in whole if e["ph"] == "M"]
    starts = {e["id"] for e in events if e["ph"] == "s"}
    assert starts == {e["id"] for e in events if e["ph"] == "f"}
    # Each counter: n points merged into one, the area under it (bytes moved, engine-cycles busy)
    # the same from its first point to its last, the last point as it was.
    for name in {e["name"] for e in whole if e["ph"] == "C"}:
        a = [(e["ts"], e["args"]["value"]) for e in whole if e["ph"] == "C" and e["name"] == name]
        b = [(e["ts"], e["args"]["value"]) for e in events if e["ph"] == "C" and e["name"] == name]
        area = lambda pts: sum((t1 - t0) * v for (t0, v), (t1, _) in zip(pts, pts[1:]))  # noqa: E731
        assert area(b) == pytest.approx(area(a), rel=1e-9), name
        assert b[-1] == a[-1] and b[0][0] == a[0][0], name
        assert len(b) == (len(a) - 1 + n - 1) // n + 1 or len(b) == (len(a) + n - 1) // n + 1, name
    assert (tmp_path / "s.json").stat().st_size < len(full) / 2


def test_sample_is_checked_and_needs_a_timeline(systolic_bin, tmp_path):
    for args, needle in [(["--timeline", tmp_path / "t.json", "--timeline-sample", "0"], "--timeline-sample"),
                         (["--timeline", tmp_path / "t.json", "--timeline-sample", "x"], "--timeline-sample"),
                         (["--timeline-sample", "4"], "give --timeline PATH too")]:
        proc = run_cli("run", "-c", V4I, "-w", GPT2, "-o", tmp_path / "out", *args, check=False)
        assert proc.returncode == 2 and needle in proc.stderr, proc.stderr
        assert not (tmp_path / "out").exists() and not (tmp_path / "t.json").exists()
