"""Checks a sweep's metrics before any point runs (docs/sweeps.md, "The spec").

A report's shape does not depend on the point: the sections, the totals, the energy, area and
power fields are the same for every config and workload; only list entries named by the
workload (layers, engines) differ. So one tiny run of the spec's base config (a single 8x8x8
GEMM, milliseconds) gives a reference report, and every metric path is walked through it:
a typo stops the sweep with the spec line and a did-you-mean, instead of failing every point.
The same reference expands wildcards (`totals.*`) into the columns the results will have, so
constraints and Pareto objectives can be checked against them up front too.
"""

import difflib
import os
import tempfile

import systolic
from systolic._point import _flatten

_TINY_GEMM = "gemms:\n  - {name: probe, m: 8, k: 8, n: 8}\n"


def reference_report(config_path, overrides):
    """The report of one tiny GEMM on the spec's base config (its `set` applied)."""
    with tempfile.TemporaryDirectory(prefix="systolic-sweep-probe-") as d:
        path = os.path.join(d, "probe.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(_TINY_GEMM)
        config = systolic.load_config(config_path, overrides)
        return systolic.run(config, workload=path).to_dict()


def _hint(word, choices):
    close = difflib.get_close_matches(word, [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def check_metric(report, metric):
    """None if `metric` is a path the reference report has (list entries by any name or by
    index), else the message saying where it goes wrong."""
    parts = metric.split(".")
    if parts[-1] == "*":
        parts = parts[:-1]
    node, walked = report, []
    for part in parts:
        if isinstance(node, dict):
            if part not in node:
                where = ".".join(walked) or "report.json"
                return (f"metric '{metric}': {where} has no '{part}'{_hint(part, node)}; "
                        f"it has " + ", ".join(map(str, node)))
            node = node[part]
        elif isinstance(node, list):
            # By name (layers.ffn_up) or index: names come from the workload, so any name is
            # accepted here; the entry's fields are checked against the first entry's.
            if not node:
                return None
            node = node[int(part)] if part.isdigit() and int(part) < len(node) else node[0]
        else:
            return (f"metric '{metric}': '{'.'.join(walked)}' is a single value; "
                    f"it has no '{part}'")
        walked.append(part)
    return None


def expected_columns(report, metrics):
    """The metric columns a point's results will have, wildcards expanded on the reference
    report (entries named by the workload are left out: they are not known yet)."""
    cols = []
    for m in metrics:
        if m.endswith(".*"):
            node = report
            for part in m[:-2].split("."):
                node = node.get(part) if isinstance(node, dict) else None
            found = {}
            if isinstance(node, dict):
                _flatten(m[:-2], node, found)
            cols += [c for c in found if c not in cols]
        elif m not in cols:
            cols.append(m)
    return cols
