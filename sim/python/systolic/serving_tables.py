"""Tidy tables of `systolic pack` reports (docs/python.md, "Serving tables"), for comparing
packers, schedulers and bucket sets in pandas. Pure Python.

    from systolic.serving_tables import bucket_frame
    df = bucket_frame(["out/continuous/report.json", "out/static/report.json"])
    df.groupby(["scheduler", "bucket_set"])["seconds"].sum()
"""
import json
import os
from math import nan

# The numeric columns of a work-table row (report.json replays[i].buckets[j]), in order.
BUCKET_NUMBERS = ("instances", "requests", "useful_tokens", "pad_tokens", "fill", "utilization", "padding_waste",
                  "mask_waste", "seconds_per_instance", "seconds", "energy_pj", "energy_pj_per_useful_token")


def _report(source):
    """A report as a dict: a dict, a systolic.Result, or a report.json path."""
    if isinstance(source, dict):
        return source
    if hasattr(source, "to_dict"):
        return source.to_dict()
    with open(os.fspath(source)) as f:
        return json.load(f)


def bucket_frame(reports, labels=None):
    """One row per bucket shape per bucket set of each pack report: label (the report's
    position, or `labels`), packer, scheduler, bucket_set, phase (identifiers), then batch and
    length (the shape; NaN for the varlen rows of `dynamic`) and BUCKET_NUMBERS, all numeric
    (NaN where a value does not exist: the utilization of a varlen row), plus runtime_shape and
    varlen (bool)."""
    import pandas as pd
    reports = list(reports) if isinstance(reports, (list, tuple)) else [reports]
    if labels is not None and len(labels) != len(reports):
        raise ValueError(f"labels: expected one per report ({len(reports)}), got {len(labels)}")
    rows = []
    for i, source in enumerate(reports):
        report = _report(source)
        if "replays" not in report:
            raise ValueError(f"report {i}: expected a report of systolic pack (with 'replays')")
        for replay in report["replays"]:
            for b in replay["buckets"]:
                shape = b["shape"] or [nan, nan]  # varlen steps (dynamic) have no shape
                row = {"label": labels[i] if labels else i, "packer": report["policy"]["packer"],
                       "scheduler": replay["serving"]["scheduler"], "bucket_set": replay["bucket_set"],
                       "phase": b["phase"], "batch": shape[0], "length": shape[1]}
                row.update({k: nan if b[k] is None else b[k] for k in BUCKET_NUMBERS})
                row["runtime_shape"] = bool(b["runtime_shape"])
                row["varlen"] = bool(b.get("varlen", False))
                rows.append(row)
    columns = ["label", "packer", "scheduler", "bucket_set", "phase", "batch", "length", *BUCKET_NUMBERS,
               "runtime_shape", "varlen"]
    return pd.DataFrame(rows, columns=columns)


# The serving summary of a replay (report.json replays[i].serving), as comparison.csv has it,
# and what a serving sweep's results columns are (systolic.serving_sweep).
SERVING_NUMBERS = {"chips": ("chips",), "served": ("requests", "served"), "truncated": ("requests", "truncated"),
                   "rejected": ("requests", "rejected"), "offered_rps": ("load", "offered_rps"),
                   "ttft_p50_s": ("latency_s", "ttft", "p50"), "ttft_p99_s": ("latency_s", "ttft", "p99"),
                   "tbt_p50_s": ("latency_s", "tbt_mean", "p50"), "tbt_p99_s": ("latency_s", "tbt_mean", "p99"),
                   "e2e_p50_s": ("latency_s", "e2e", "p50"), "e2e_p99_s": ("latency_s", "e2e", "p99"),
                   "makespan_s": ("throughput", "makespan_s"), "busy_s": ("throughput", "busy_s"),
                   "tokens_per_s": ("throughput", "tokens_per_s"), "pad_fraction": ("throughput", "pad_fraction"),
                   "slo_attainment": ("slo", "attainment"), "goodput_rps": ("slo", "goodput_rps")}
# The static-shape tax of a replay (report.json replays[i].tax) against the dynamic baseline.
TAX_NUMBERS = {"tax_time": "time", "tax_energy": "energy"}


def serving_numbers(replay):
    """{name: value} of SERVING_NUMBERS and TAX_NUMBERS of one replay; None where a value does
    not exist (no SLO given, no TBT)."""
    row = {}
    for name, path in SERVING_NUMBERS.items():
        value = replay["serving"]
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        row[name] = value
    for name, key in TAX_NUMBERS.items():
        row[name] = replay["tax"][key]
    return row


def serving_frame(reports, labels=None):
    """One row per bucket set of each pack report: label, scheduler, bucket_set, then
    SERVING_NUMBERS and the static-shape tax (tax_time, tax_energy); NaN where a value does not
    exist (no SLO given, no TBT)."""
    import pandas as pd
    reports = list(reports) if isinstance(reports, (list, tuple)) else [reports]
    if labels is not None and len(labels) != len(reports):
        raise ValueError(f"labels: expected one per report ({len(reports)}), got {len(labels)}")
    rows = []
    for i, source in enumerate(reports):
        for replay in _report(source)["replays"]:
            row = {"label": labels[i] if labels else i, "scheduler": replay["serving"]["scheduler"],
                   "bucket_set": replay["bucket_set"]}
            row.update({k: float("nan") if v is None else v for k, v in serving_numbers(replay).items()})
            rows.append(row)
    return pd.DataFrame(rows)
