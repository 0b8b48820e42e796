"""Design-space sweeps (docs/sweeps.md).

    systolic sweep SPEC [-j N] [--dask tcp://HOST:PORT] -o OUTDIR
    python3 -m systolic.sweep SPEC [-j N] [--dask tcp://HOST:PORT] -o OUTDIR
    systolic.sweep(SPEC, OUTDIR, jobs=N, dask=ADDR_OR_CLIENT)   # returns a pandas DataFrame

A spec (YAML) names a base config, one or more workloads, a grid and/or a list of config
overrides, and the metrics to keep. Every point runs in a worker process, in a local process
pool or on a Dask cluster; each result is committed to OUTDIR/sweep.sqlite as soon as it
arrives, keyed by a hash of the resolved config and the workload, so a re-run (or a run after
a kill) skips every finished point. OUTDIR/results.csv is exported at the end, with
`feasible` and `pareto` columns when the spec (or --constraint / --pareto) asks for them
(systolic.pareto). The spec, its metrics and those filters are checked before any point runs
(systolic._sweep_metrics).
"""

import argparse
import collections
import concurrent.futures as cf
import csv
import datetime
import difflib
import fcntl
import hashlib
import io
import itertools
import json
import multiprocessing
import os
import signal
import socket
import sqlite3
import sys
import types

import systolic
from systolic import pareto as _pareto
from systolic import _safety
from systolic import serving_sweep as _serving
from systolic._point import file_sha256, run_point
from systolic._sweep_metrics import check_metric, expected_columns, reference_report

__all__ = ["SpecError", "Spec", "Point", "load_spec", "expand", "run_sweep", "main",
           "DB_NAME", "CSV_NAME", "SCHEMA_VERSION", "front_group_columns"]

DB_NAME = "sweep.sqlite"
CSV_NAME = "results.csv"
SCHEMA_VERSION = 1
DEFAULT_METRICS = ["totals.*"]
# Sections of a version-1 report that report schema 2 moved into chips[] (docs/report.md).
_MOVED_TO_CHIPS = ("layers", "engines", "memory", "op_kinds")

# Exit codes of the command: as `systolic` (0 ok, 2 bad input), plus these.
EXIT_POINTS_FAILED = 3
EXIT_INTERRUPTED = 130


class SpecError(systolic.InputError):
    """A sweep spec or sweep argument that cannot be used; the message names file and line."""


# ----------------------------------------------------------------------------- the spec

SPEC_KEYS = {
    "name": "a name for the sweep (default: the spec file's stem)",
    "config": "base chip config YAML",
    "set": "overrides applied to every point",
    "workload": "one workload file",
    "workloads": "a list of workload files",
    "grid": "key: [values]; every combination is a point",
    "list": "a list of {key: value} override sets",
    "metrics": "dotted paths into report.json to keep",
    "keep_reports": "also store each point's whole report.json",
    "bucket": "static shape BxS for transformer model workloads (traces/models/)",
    "phase": "prefill (default) or decode, for transformer model workloads",
    "constraints": "filters on the results, e.g. ['area_mm2 <= 400', 'power_w <= 175']",
    "pareto": "two or three objectives NAME:max|min, e.g. [tokens_per_s:max, area_mm2:min]",
    "pack": "serve a request log at every point, as `systolic pack` (model, requests, buckets, ...)",
}

def _text(value):
    return isinstance(value, str)


def _whole(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _flag(value):
    return isinstance(value, bool)


def _one_of(*choices):
    return lambda value: _text(value) and value in choices


_POSITIVE = (lambda value: _whole(value) and value >= 1, "a positive integer")
_NON_NEGATIVE = (lambda value: _whole(value) and value >= 0, "a non-negative integer")


def _named(key):
    """The test and description of a workload key whose values are names run() parses."""
    names = systolic._systolic.workload_names(key)  # the C++ name table: one list of names
    return _one_of(*names), " or ".join(names)


# Keys of how a workload is instantiated (systolic.run's arguments, `systolic run`'s flags):
# allowed wherever a config key is (set, grid, list), so a model's shape, phase, tensor
# parallelism and dtypes are axes like any config key. Each with the test its values pass and
# what an error says they must be.
WORKLOAD_KEYS = {
    "bucket": (_text, "a shape BxS, e.g. 1x128"),
    "phase": _named("phase"),
    "tp": _POSITIVE,
    "ep": _POSITIVE,
    "mesh": (_text, "a parallelism mesh, e.g. dp=4,tp=8"),
    "micro_batches": _POSITIVE,
    "overlap": (_flag, "true or false"),
    "routing": _named("routing"),
    "skew": (_number, "a number"),
    "routing_seed": _NON_NEGATIVE,
    "weight_dtype": (_text, "a dtype name, e.g. int8"),
    "activation_dtype": (_text, "a dtype name, e.g. bf16"),
    "kv_dtype": (_text, "a dtype name, e.g. fp8_e4m3"),
}


class Spec:
    """A loaded, validated sweep spec. Paths are absolute; `base_dir` is where relative paths
    in the spec were resolved (the spec file's folder)."""

    def __init__(self, **kw):
        self.name = kw["name"]
        self.source = kw["source"]          # spec file, or "<dict>"
        self.base_dir = kw["base_dir"]
        self.config = kw["config"]          # absolute path
        self.set = kw["set"]                # {key: value}
        self.workloads = kw["workloads"]    # [(as written, absolute path)]
        self.grid = kw["grid"]              # {key: [values]}
        self.cases = kw["cases"]            # [{key: value}]
        self.metrics = kw["metrics"]
        self.keep_reports = kw["keep_reports"]
        self.bucket = kw.get("bucket")       # "BxS" or None
        self.phase = kw.get("phase", "prefill")
        self.workload_set = kw.get("workload_set", {})  # workload keys for every point
        self.constraints = kw.get("constraints", [])    # pareto.Constraint
        self.objectives = kw.get("objectives", [])      # pareto.Objective
        self.columns = kw.get("columns", [])            # the results' columns, known up front
        self.pack = kw.get("pack")  # a serving sweep's fixed replay keys ({} or more), else None

    @property
    def point_keys(self):
        """The keys that say how a point's workload runs, beside config keys: a serving
        replay's (serving_sweep.PACK_KEYS) or a model's shape (WORKLOAD_KEYS)."""
        return _serving.PACK_KEYS if self.pack is not None else WORKLOAD_KEYS

    @property
    def swept_keys(self):
        keys = list(self.grid)
        for case in self.cases:
            keys += [k for k in case if k not in keys]
        return keys

    def to_dict(self):
        return {"name": self.name, "source": self.source, "config": self.config,
                "set": {**self.set, **self.workload_set}, "workloads": [w for w, _ in self.workloads],
                "grid": self.grid, "list": self.cases, "metrics": self.metrics,
                "keep_reports": self.keep_reports, "bucket": self.bucket, "phase": self.phase,
                "constraints": [c.text for c in self.constraints],
                "pareto": [o.text for o in self.objectives], "pack": self.pack}


class _Lines:
    """Line numbers of the keys of a YAML document, for messages: file:line: ..."""

    def __init__(self, source, node):
        self.source = source
        self.node = node

    def at(self, *path):
        node, line = self.node, None
        for part in path:
            found = None
            if node is not None and node.tag.endswith(":map"):
                for k, v in node.value:
                    if k.value == part:
                        found, line = v, k.start_mark.line + 1
            elif node is not None and node.tag.endswith(":seq") and isinstance(part, int):
                if part < len(node.value):
                    found = node.value[part]
                    line = found.start_mark.line + 1
            node = found
            if node is None:
                break
        return f"{self.source}:{line}" if line else self.source

    def error(self, message, *path):
        return SpecError(f"{self.at(*path)}: {message}")


def _plain(value):
    """A spec given as Python data, with paths as strings and numpy values as Python ones."""
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return _plain(value.tolist())  # numpy arrays and scalars, pandas series
    return value


def _is_scalar(v):
    return v is None or isinstance(v, (bool, int, float, str))


def _flat_overrides(value, lines, *path):
    """{key: scalar}, flattening nested maps ({mxu: {rows: 64}} -> {'mxu.rows': 64})."""
    if not isinstance(value, dict):
        raise lines.error(f"'{path[-1]}': expected a map of config keys to values", *path)
    out = {}
    for k, v in value.items():
        if not isinstance(k, str):
            raise lines.error(f"'{path[-1]}': keys must be config keys like mxu.rows, got {k!r}",
                              *path)
        if isinstance(v, dict):
            for k2, v2 in _flat_overrides(v, lines, *path, k).items():
                out[f"{k}.{k2}"] = v2
        elif _is_scalar(v) and v is not None:
            out[k] = v
        else:
            raise lines.error(f"'{k}': expected a single value, got {v!r}", *path, k)
    return out


def _flat_keys(d, prefix=""):
    keys = []
    for k, v in d.items():
        keys += _flat_keys(v, f"{prefix}{k}.") if isinstance(v, dict) else [prefix + k]
    return keys


def _check_keys(keys, known, base_config, lines, *path, pack_spec=False):
    for key in keys:
        misplaced = _serving.misplaced_key(key, pack_spec, WORKLOAD_KEYS)
        if misplaced:
            raise lines.error(misplaced, *path, key)
        point_keys = _serving.PACK_KEYS if pack_spec else WORKLOAD_KEYS
        if key in known or key in point_keys:
            continue
        close = difflib.get_close_matches(key, list(point_keys), n=1, cutoff=0.8)
        if close:  # a misspelt workload or replay key (schedulr)
            raise lines.error(f"unknown key '{key}' (did you mean '{close[0]}'?)", *path, key)
        try:  # the simulator's own message, with its "did you mean"
            systolic.load_config(base_config, [f"{key}=0"])
            message = f"unknown config key '{key}'"
        except systolic.InputError as e:
            message = str(e).replace(f"--set '{key}=0': ", "")
        raise lines.error(message, *path, key)


def _check_workload_value(key, value, lines, *path):
    passes, what = WORKLOAD_KEYS[key]
    if not passes(value):
        raise lines.error(f"'{key}': expected {what}, got {value!r}", *path)


def _value_kind(v):
    return "boolean" if isinstance(v, bool) else "number" if isinstance(v, (int, float)) else "string"


def _split(overrides, point_keys=WORKLOAD_KEYS):
    """(config overrides, workload keys) of a {key: value} map."""
    return ({k: v for k, v in overrides.items() if k not in point_keys},
            {k: v for k, v in overrides.items() if k in point_keys})


def _point_value_checker(pack_spec, base_dir):
    """check(key, value, lines, *path) of a workload key's value in this kind of spec."""
    def check(key, value, lines, *path):
        if pack_spec:
            _serving.check_value(key, value, base_dir, lambda message: lines.error(message, *path))
        else:
            _check_workload_value(key, value, lines, *path)
    return check


def size_column(key):
    """The MiB column beside a swept size key (sram.vmem_bytes -> sram.vmem_mib), else None."""
    return key[:-len("_bytes")] + "_mib" if key.endswith("_bytes") else None


def _results_columns(swept, metric_columns):
    cols = []
    for k in swept:
        cols += [k] + ([size_column(k)] if size_column(k) else [])
    return cols + metric_columns


def _check_results_filters(data, lines, columns):
    """The spec's constraints and Pareto objectives, parsed against the results' columns."""
    raw = data.get("constraints") or []
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        raise lines.error("'constraints': expected a list like ['area_mm2 <= 400']", "constraints")
    constraints = []
    for i, text in enumerate(raw):
        try:
            constraints.append(_pareto.parse_constraint(text, columns))
        except _pareto.ParetoError as e:
            raise lines.error(str(e), "constraints", i) from None
    objectives = data.get("pareto") or []
    if not isinstance(objectives, (list, str)):
        raise lines.error("'pareto': expected a list like [tokens_per_s:max, area_mm2:min]", "pareto")
    try:
        objectives = _pareto.parse_objectives(objectives, columns)
    except _pareto.ParetoError as e:
        raise lines.error(str(e), "pareto") from None
    return constraints, objectives


def load_spec(spec, base_dir=None):
    """Reads and validates a sweep spec: a YAML file path, or a dict in the same form.
    Relative paths resolve against the spec file's folder (or base_dir, or the current
    directory for a dict). Raises SpecError naming the file, line and key."""
    import yaml

    if isinstance(spec, Spec):
        return spec
    if isinstance(spec, dict):
        source = "<sweep spec>"
        data = _plain(spec)
        lines = _Lines(source, None)  # no lines to point at
        base_dir = os.path.abspath(base_dir or os.getcwd())
        default_name = "sweep"
    else:
        source = os.fspath(spec)
        try:
            with open(source, "rb") as f:
                raw = f.read()
        except OSError as e:
            raise SpecError(f"{source}: cannot open sweep spec ({e.strerror})") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:  # found by fuzz/sweep_spec_fuzzer.cpp
            line = raw.count(b"\n", 0, e.start) + 1
            raise SpecError(f"{source}:{line}: expected UTF-8 text, got byte {raw[e.start]:#04x}") from None
        try:
            node, data = _safety.strict_compose_load(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f"{source}:{mark.line + 1}" if mark else source
            raise SpecError(f"{where}: malformed YAML: {getattr(e, 'problem', None) or e}") from None
        lines = _Lines(source, node)
        base_dir = os.path.abspath(base_dir or os.path.dirname(source) or ".")
        default_name = os.path.splitext(os.path.basename(source))[0]

    if not isinstance(data, dict):
        raise lines.error("expected a map with keys " + ", ".join(SPEC_KEYS))
    for key in data:
        if key not in SPEC_KEYS:
            close = difflib.get_close_matches(str(key), list(SPEC_KEYS), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise lines.error(f"unknown key '{key}'{hint}; expected one of "
                              + ", ".join(SPEC_KEYS), key)

    def path_of(value, *where):
        if not isinstance(value, str) or not value:
            raise lines.error(f"'{where[-1] if isinstance(where[-1], str) else where[0]}': "
                              f"expected a file path, got {value!r}", *where)
        full = os.path.normpath(os.path.join(base_dir, os.path.expanduser(value)))
        if not os.path.isfile(full):
            raise lines.error(f"'{where[0]}': no such file: {value} (resolved to {full}; "
                              f"relative paths start at the spec's folder)", *where)
        return full

    name = data.get("name", default_name)
    if not isinstance(name, str) or not name:
        raise lines.error("'name': expected a string", "name")
    if _safety.check_name(name):  # it becomes out/sweeps/NAME
        raise lines.error(f"'name': {_safety.check_name(name)}", "name")

    if "config" not in data:
        raise lines.error("missing 'config': the base chip config YAML, e.g. "
                          "config: ../../configs/tpu-v4i.yaml")
    config = path_of(data["config"], "config")
    try:
        base = systolic.load_config(config)
    except systolic.InputError as e:
        raise lines.error(f"'config': {e}", "config") from None
    known = set(_flat_keys(base.to_dict()))
    pack_spec = "pack" in data
    point_keys = _serving.PACK_KEYS if pack_spec else WORKLOAD_KEYS
    check_point_value = _point_value_checker(pack_spec, base_dir)
    pack = _serving.check_section(data["pack"], base_dir, lines) if pack_spec else None

    base_set = _flat_overrides(data.get("set") or {}, lines, "set")
    _check_keys(base_set, known, config, lines, "set", pack_spec=pack_spec)
    for key, value in base_set.items():
        if key in point_keys:
            check_point_value(key, value, lines, "set", key)
    _safety.check_overrides(config, _split(base_set, point_keys)[0], lambda message: lines.error(message, "set"))

    if pack_spec:
        for key in ("workload", "workloads", "bucket", "phase"):
            if key in data:
                raise lines.error(f"'{key}': a serving sweep ('pack:') serves the model of 'pack: model:' "
                                  f"through the shapes of its bucket set; it takes no '{key}'", key)
        workloads = []  # the models: after the grid, which may sweep them
    elif ("workload" in data) == ("workloads" in data):
        raise lines.error("give exactly one of 'workload: FILE' or 'workloads: [FILE, ...]'")
    elif "workload" in data:
        written = [data["workload"]]
        wl_paths = [path_of(data["workload"], "workload")]
    else:
        written = data["workloads"]
        if not isinstance(written, list) or not written:
            raise lines.error("'workloads': expected a non-empty list of files", "workloads")
        wl_paths = [path_of(w, "workloads", i) for i, w in enumerate(written)]
    if not pack_spec:
        workloads = [(os.path.normpath(w), p) for w, p in zip(written, wl_paths)]

    grid = {}
    raw_grid = data.get("grid") or {}
    if not isinstance(raw_grid, dict):
        raise lines.error("'grid': expected a map of config keys to lists of values", "grid")
    for key, values in raw_grid.items():
        if isinstance(values, dict):
            raise lines.error(f"grid '{key}': write nested keys with dots (e.g. mxu.rows)",
                              "grid", key)
        if not isinstance(values, list) or not values:
            raise lines.error(f"grid '{key}': expected a non-empty list of values, got {values!r}",
                              "grid", key)
        for v in values:
            if not _is_scalar(v) or v is None:
                raise lines.error(f"grid '{key}': values must be numbers, strings or booleans, "
                                  f"got {v!r}", "grid", key)
        if len(set(map(json.dumps, values))) != len(values):
            raise lines.error(f"grid '{key}': a value is listed twice", "grid", key)
        kinds = sorted({_value_kind(v) for v in values})
        if len(kinds) > 1:
            raise lines.error(f"grid '{key}': mixed types ({' and '.join(k + 's' for k in kinds)}): write every value "
                              f"the same way, e.g. all sizes as '16 MiB' or all as bytes", "grid", key)
        if key in point_keys:
            for v in values:
                check_point_value(key, v, lines, "grid", key)
        grid[str(key)] = values
    _check_keys(grid, known, config, lines, "grid", pack_spec=pack_spec)

    cases = []
    raw_list = data.get("list", [])
    if not isinstance(raw_list, list) or ("list" in data and not raw_list):
        raise lines.error("'list': expected a non-empty list of {key: value} maps (or no 'list')", "list")
    kinds = {}  # the kind of value each key takes in the list: all entries alike, as in a grid
    for i, case in enumerate(raw_list):
        flat = _flat_overrides(case, lines, "list", i)
        _check_keys(flat, known, config, lines, "list", i, pack_spec=pack_spec)
        for key in flat:
            if key in grid:
                raise lines.error(f"'{key}' is swept by both 'grid' and 'list' entry {i + 1}",
                                  "list", i)
            if key in point_keys:
                check_point_value(key, flat[key], lines, "list", i)
            if key == "model" and pack_spec:
                raise lines.error("'model': sweep models with grid: {model: [A.yaml, B.yaml]} or 'pack: "
                                  "model:'; a list entry cannot change it", "list", i)
            kind = kinds.setdefault(key, (_value_kind(flat[key]), i))
            if kind[0] != _value_kind(flat[key]):
                raise lines.error(f"list '{key}': mixed types (a {kind[0]} in entry {kind[1] + 1}, a "
                                  f"{_value_kind(flat[key])} in entry {i + 1}): write every value the same "
                                  f"way, e.g. all sizes as '16 MiB' or all as bytes", "list", i)
        cases.append(flat)
    if pack_spec:
        _serving.check_required(pack, base_set, grid, cases, lines)
        models = grid.pop("model", None) or [base_set.pop("model", None) or pack.pop("model")]
        pack.pop("model", None)
        workloads = [(os.path.normpath(m), _serving.resolve_path(base_dir, m)) for m in models]

    metrics = data.get("metrics", _serving.PACK_METRICS if pack_spec else DEFAULT_METRICS)
    if isinstance(metrics, str):
        metrics = [metrics]
    if not isinstance(metrics, list) or not metrics or not all(
            isinstance(m, str) and m for m in metrics):
        raise lines.error("'metrics': expected a list of dotted report paths, e.g. "
                          "[totals.cycles, totals.utilization]", "metrics")
    swept = list(dict.fromkeys(list(grid) + [k for case in cases for k in case if k not in grid]))
    config_set, workload_set = _split(base_set, point_keys)
    if pack_spec:
        _serving.check_metrics(metrics, lines)
        columns = _results_columns(swept, list(metrics))
    else:
        columns = _run_metric_columns(metrics, config, config_set, swept, lines)
    constraints, objectives = _check_results_filters(data, lines, columns)

    keep = data.get("keep_reports", False)
    if not isinstance(keep, bool):
        raise lines.error("'keep_reports': expected true or false", "keep_reports")

    bucket = data.get("bucket")
    if bucket is not None and not isinstance(bucket, str):
        raise lines.error("'bucket': expected BxS, e.g. 1x128", "bucket")
    phase = data.get("phase", "prefill")
    if phase not in ("prefill", "decode"):
        raise lines.error(f"'phase': expected prefill or decode, got {phase!r}", "phase")
    for key, value in (("bucket", bucket), ("phase", phase if "phase" in data else None)):
        if value is not None:
            workload_set.setdefault(key, value)
    if pack_spec:  # the `pack:` section's keys, then `set`'s, for every point
        workload_set = {**pack, **workload_set}

    return Spec(name=name, source=source, base_dir=base_dir, config=config, set=config_set,
                workloads=workloads, grid=grid, cases=cases, metrics=list(metrics),
                keep_reports=keep, bucket=bucket, phase=phase, workload_set=workload_set,
                constraints=constraints, objectives=objectives, columns=columns, pack=pack)


def _run_metric_columns(metrics, config, config_set, swept, lines):
    """The results columns of a run sweep: its metrics checked against a reference report."""
    # A typo of a known section stops the sweep now; other names are checked against each
    # point's report (reports gain sections), where a missing one fails the point.
    roots = ("totals", "config", "workload", "system", "chips", "energy_pj", "collectives", "links",
             "memory_timing", "buckets", "generator", "schema_version")
    for i, m in enumerate(metrics):
        root = m.split(".")[0]
        if root in _MOVED_TO_CHIPS:
            raise lines.error(f"metric '{m}': report schema 2 moved '{root}' into each chip: "
                              f"expected 'chips.0.{m}' (docs/report.md)", "metrics", i)
        close = difflib.get_close_matches(root, roots, n=1, cutoff=0.75)
        if root not in roots and close:
            raise lines.error(f"metric '{m}': report.json has no section '{root}' "
                              f"(did you mean '{close[0]}'?)", "metrics", i)

    try:
        reference = reference_report(config, config_set)
    except systolic.InputError as e:
        raise lines.error(f"'set': {e}", "set") from None
    for i, m in enumerate(metrics):
        problem = check_metric(reference, m)
        if problem:
            raise lines.error(problem, "metrics", i)
    return _results_columns(swept, expected_columns(reference, metrics))


# ----------------------------------------------------------------------------- points

def canonical_json(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def point_hash(resolved_config, workload, workload_sha256):
    """sha256 of canonical JSON of the resolved config dict, the workload path as written in
    the spec (normalised) and the workload file's sha256."""
    payload = {"config": resolved_config, "workload": workload, "workload_sha256": workload_sha256}
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


class Point:
    def __init__(self, index, workload, workload_path, workload_sha256, swept, overrides,
                 workload_opts=None):
        self.index = index
        self.workload = workload              # as written in the spec
        self.workload_path = workload_path    # absolute
        self.workload_sha256 = workload_sha256
        self.swept = swept                    # the keys this point varies
        self.overrides = overrides            # set + swept: everything applied to the config
        self.workload_opts = workload_opts or {}  # bucket, phase, tp, dtypes: systolic.run's
        self.config = None                    # resolved config dict, or None
        self.pack_files = {}                  # a serving point's log and bucket set: {key: sha256}
        self.error = None                     # why it could not be resolved
        self.hash = None

    def task(self, spec):
        task = {"hash": self.hash, "config": spec.config,
                "overrides": {k: v for k, v in self.overrides.items()},
                "resolved_config": self.config, "workload": self.workload_path,
                "workload_sha256": self.workload_sha256, "metrics": spec.metrics,
                "keep_report": spec.keep_reports, "workload_opts": dict(self.workload_opts)}
        if spec.pack is not None:  # a serving replay: systolic.pack's keywords, files absolute
            task["pack"] = {k: _serving.resolve_path(spec.base_dir, v) if k in self.pack_files else v
                            for k, v in self.workload_opts.items()}
            task["pack_sha256"] = {k: sha for k, sha in self.pack_files.items()}
        return task


def expand(spec, max_points=_safety.MAX_POINTS):
    """Every point of the spec, resolved: workloads x list entries x grid combinations."""
    spec = load_spec(spec)
    _safety.check_point_count(spec, SpecError, max_points)
    keys = list(spec.grid)
    combos = [dict(zip(keys, values)) for values in itertools.product(*spec.grid.values())]
    cases = spec.cases or [{}]
    points, shas = [], {}
    for written, path in spec.workloads:
        sha = file_sha256(path)
        for case in cases:
            for combo in combos or [{}]:
                swept = {**case, **combo}
                config_swept, workload_swept = _split(swept, spec.point_keys)
                opts = {**spec.workload_set, **workload_swept}
                p = Point(len(points), written, path, sha, swept, {**spec.set, **config_swept}, opts)
                if spec.pack is not None:  # the log and bucket set are part of the point's key
                    for key in ("requests", "buckets"):
                        full = _serving.resolve_path(spec.base_dir, opts[key])
                        if full not in shas:
                            shas[full] = file_sha256(full)
                        p.pack_files[key] = shas[full]
                try:
                    p.config = systolic.load_config(spec.config, p.overrides).to_dict()
                    # A model at a shape (and its tp, dtypes) is another workload than the file;
                    # a serving replay's files count by their content.
                    shape = "@" + canonical_json({**opts, **{f"{k}_sha256": v for k, v in p.pack_files.items()}}) \
                        if opts else ""
                    p.hash = point_hash(p.config, written + shape, sha)
                except systolic.InputError as e:
                    # Unresolvable (e.g. a value out of range): recorded as a failed point, keyed
                    # by what was asked for instead of a resolved config.
                    p.error = str(e)
                    p.hash = hashlib.sha256(canonical_json(
                        {"unresolved": {"config_sha256": file_sha256(spec.config),
                                        "overrides": p.overrides, "workload_opts": opts},
                         "workload": written, "workload_sha256": sha}).encode()).hexdigest()
                points.append(p)
    return points


# ----------------------------------------------------------------------------- database

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
  run_id      INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at  TEXT NOT NULL,
  finished_at TEXT,
  status      TEXT NOT NULL,
  executor    TEXT NOT NULL,
  spec        TEXT NOT NULL,
  points      INTEGER NOT NULL,
  skipped     INTEGER NOT NULL,
  ran         INTEGER NOT NULL DEFAULT 0,
  failed      INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS points (
  hash        TEXT PRIMARY KEY,
  status      TEXT NOT NULL CHECK (status IN ('ok', 'error')),
  error       TEXT,
  workload    TEXT NOT NULL,
  overrides   TEXT NOT NULL,
  config      TEXT,
  metrics     TEXT,
  report      TEXT,
  seconds     REAL,
  worker      TEXT,
  generator   TEXT,
  run_id      INTEGER NOT NULL REFERENCES runs(run_id),
  finished_at TEXT NOT NULL
);
"""


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


class Store:
    """OUTDIR/sweep.sqlite. Only the sweep's own process writes; every point is committed as
    soon as its result arrives (WAL journal), so killing the sweep loses no finished point."""

    def __init__(self, path):
        self.path = path
        self.conn = sqlite3.connect(path, timeout=30)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(_SCHEMA)
        row = self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            self.conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        elif int(row[0]) != SCHEMA_VERSION:
            raise SpecError(f"{path}: database schema version {row[0]}, this systolic writes "
                            f"{SCHEMA_VERSION}; use another OUTDIR")
        self.conn.commit()

    def finished(self):
        """{hash: (status, metric names stored)}"""
        return {h: (status, set(json.loads(metrics)) if metrics else set())
                for h, status, metrics in self.conn.execute(
                    "SELECT hash, status, metrics FROM points")}

    def errors(self):
        """{hash: error message} of the failed points."""
        return dict(self.conn.execute("SELECT hash, error FROM points WHERE status = 'error'"))

    def start_run(self, spec, executor, points, skipped):
        cur = self.conn.execute(
            "INSERT INTO runs (started_at, status, executor, spec, points, skipped) "
            "VALUES (?, 'running', ?, ?, ?, ?)",
            (_now(), executor, json.dumps(spec.to_dict()), points, skipped))
        self.conn.commit()
        return cur.lastrowid

    def end_run(self, run_id, status, ran, failed):
        self.conn.execute("UPDATE runs SET finished_at=?, status=?, ran=?, failed=? WHERE run_id=?",
                          (_now(), status, ran, failed, run_id))
        self.conn.commit()

    def record(self, point, result, run_id):
        metrics = result.get("metrics")
        self.conn.execute(
            "INSERT OR REPLACE INTO points (hash, status, error, workload, overrides, config, "
            "metrics, report, seconds, worker, generator, run_id, finished_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (point.hash, result["status"], result.get("error"), point.workload,
             json.dumps({**point.overrides, **point.workload_opts}),
             json.dumps(point.config) if point.config is not None else None,
             json.dumps(metrics) if metrics is not None else None, result.get("report"),
             result.get("seconds"), result.get("worker"), result.get("generator"), run_id,
             _now()))
        self.conn.commit()

    def rows(self, hashes):
        out = {}
        cur = self.conn.execute("SELECT hash, status, error, metrics, seconds, run_id FROM points")
        wanted = set(hashes)
        for h, status, error, metrics, seconds, run_id in cur:
            if h in wanted:
                out[h] = {"status": status, "error": error,
                          "metrics": json.loads(metrics) if metrics else {},
                          "seconds": seconds, "run_id": run_id}
        return out

    def close(self):
        self.conn.close()


def _resolved(config, key):
    node = config
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def swept_values(point, swept, point_keys=WORKLOAD_KEYS):
    """{column: value} of a point's swept keys: the resolved config value (so '16 MiB' is the
    number 16777216 and axes sort numerically), with a MiB column beside every size; a
    workload key (`point_keys`) as given."""
    out = {}
    for k in swept:
        v = point.swept.get(k)
        if k not in point_keys and point.config is not None and v is not None:
            resolved = _resolved(point.config, k)
            v = resolved if resolved is not None else v
        out[k] = v
        if size_column(k):
            out[size_column(k)] = v / 2**20 if isinstance(v, (int, float)) else None
    return out


def results_table(spec, points, store):
    """(columns, rows) of the spec's points in spec order, one column per swept key and per
    metric: what results.csv holds."""
    done = store.rows([p.hash for p in points])
    metric_cols = []
    for p in points:
        for m in done.get(p.hash, {}).get("metrics", {}):
            if m not in metric_cols:
                metric_cols.append(m)
    swept = spec.swept_keys
    cols = (["point", "hash", "status", "workload"] + _results_columns(swept, []) + metric_cols
            + ["seconds", "run_id", "error"])
    rows = []
    for p in points:
        r = done.get(p.hash)
        row = {"point": p.index, "hash": p.hash, "workload": p.workload}
        row.update(swept_values(p, swept, spec.point_keys))
        if r is None:
            row.update(status="pending")
        else:
            row.update(status=r["status"], seconds=r["seconds"], run_id=r["run_id"],
                       error=r["error"])
            row.update(r["metrics"])
        rows.append([row.get(c) for c in cols])
    return cols, rows


def write_csv(path, cols, rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for row in rows:
        w.writerow(["" if v is None else json.dumps(v) if isinstance(v, (dict, list))
                    else str(v).lower() if isinstance(v, bool) else v for v in row])
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(buf.getvalue())
    os.replace(tmp, path)


# ----------------------------------------------------------------------------- progress

class Progress:
    """The sweep's progress on stderr, formatted by tqdm (Debian python3-tqdm): points done of
    all (those already in the store count as done from the start, shown as `already`),
    failures, elapsed time, rate and ETA. On a terminal tqdm redraws one line; in a log file
    (CI) one line is printed at most every 5 s and at the end, each ending in a newline."""

    LOG_EVERY_S = 5.0

    def __init__(self, name, total, skipped, enabled=True, stream=None):
        from tqdm import tqdm

        self.stream = stream or sys.stderr
        self.enabled, self.failed, self.skipped = enabled, 0, skipped
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        # On a terminal tqdm draws; in a log it only counts, and log_line() prints its meter.
        self.bar = tqdm(total=total, initial=skipped, desc=f"sweep {name}", unit="point",
                        file=self.stream, disable=not enabled, mininterval=0.2,
                        dynamic_ncols=True, postfix=self._postfix(), delay=0 if self.tty else float("inf"))
        self.logged_at = None
        self.log_line()

    def _postfix(self):
        return {"already": self.skipped, "failed": self.failed}

    def update(self, ok):
        self.failed += 0 if ok else 1
        self.bar.set_postfix(self._postfix(), refresh=False)
        self.bar.update(1)
        self.log_line()

    def log_line(self, final=False):
        if not self.enabled or self.tty:
            return
        now = self.bar._time()
        if final or self.logged_at is None or now - self.logged_at >= self.LOG_EVERY_S:
            d = self.bar.format_dict
            d["ncols"] = 0  # no bar width: the counts, times and rate only
            self.stream.write(self.bar.format_meter(**d) + "\n")
            self.stream.flush()
            self.logged_at = now

    def close(self):
        self.log_line(final=True)
        self.bar.close()


# ----------------------------------------------------------------------------- executors

def _failed(point, message):
    return {"hash": point.hash, "status": "error", "error": message, "metrics": None,
            "seconds": None, "worker": None}


def _spawn():
    # Each worker is a fresh interpreter: nothing of the parent's SystemC or Python state.
    return multiprocessing.get_context("spawn")


def _worker_init():
    # Ctrl-C reaches the whole process group; the sweep process handles it (stops the workers
    # and keeps what finished) instead of every worker printing a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _safety.die_with_parent()


def _pool(jobs):
    return cf.ProcessPoolExecutor(jobs, mp_context=_spawn(), initializer=_worker_init)


def _run_local(points, spec, jobs, on_result):
    """A pool of `jobs` worker processes with at most `jobs` points in flight. If a worker dies
    (a crash in the simulator), the points that were in flight are re-run one per fresh
    process, so only the one that crashes is recorded as failed."""
    from concurrent.futures.process import BrokenProcessPool

    queue = collections.deque(points)
    suspects = []
    while queue or suspects:
        if suspects:
            p = suspects.pop(0)
            with _pool(1) as ex:
                try:
                    ex.submit(os.getpid).result()  # the worker starts at all
                except BrokenProcessPool:
                    raise SpecError(
                        "sweep: worker processes die as they start, before running any point "
                        "(a script calling systolic.sweep must keep its work under "
                        "`if __name__ == \"__main__\":`)") from None
                try:
                    on_result(p, ex.submit(run_point, p.task(spec)).result())
                except BrokenProcessPool:
                    on_result(p, _failed(p, "the worker process died while running this point "
                                            "(a crash in the simulator)"))
            continue
        ex = _pool(jobs)
        try:
            inflight = {}
            broken = False

            def collect(fut):
                nonlocal broken
                p = inflight.pop(fut)
                try:
                    result = fut.result()
                except BrokenProcessPool:
                    broken = True
                    suspects.append(p)
                    return
                except Exception as e:
                    result = _failed(p, f"internal error: {type(e).__name__}: {e}")
                on_result(p, result)

            while (queue or inflight) and not broken:
                while queue and len(inflight) < jobs:
                    p = queue.popleft()
                    try:
                        inflight[ex.submit(run_point, p.task(spec))] = p
                    except BrokenProcessPool:  # a worker died since the last wait
                        queue.appendleft(p)
                        broken = True
                        break
                if broken:
                    break
                done, _ = cf.wait(inflight, return_when=cf.FIRST_COMPLETED)
                for fut in done:
                    collect(fut)
            # After a crash every future still in flight completes (with its result if it
            # finished first, else BrokenProcessPool: then it is a suspect).
            for fut in cf.as_completed(list(inflight)):
                collect(fut)
        except BaseException:
            # Interrupted: drop what is queued and stop the workers now rather than after
            # their current point (finished points are already in the database).
            ex.shutdown(wait=False, cancel_futures=True)
            for proc in list((getattr(ex, "_processes", None) or {}).values()):
                proc.terminate()
            raise
        ex.shutdown(wait=True)


def _dask_client(dask):
    """(client, whether we own it) for a scheduler address or a distributed.Client."""
    if hasattr(dask, "submit"):
        return dask, False
    try:
        from distributed import Client
    except ImportError:
        raise SpecError("--dask needs dask.distributed (Debian: python3-distributed)") from None
    try:
        return Client(dask, timeout="20s"), True
    except (OSError, TimeoutError, ValueError) as e:
        raise SpecError(f"--dask {dask}: cannot reach the scheduler: {e}") from None


def _run_dask(points, spec, client, on_result):
    """Every point is one task on a dask.distributed cluster; results stream back as they
    finish. Workers must import systolic (PYTHONPATH) and see the spec's files at the same
    paths."""
    from distributed import as_completed

    futures = {}
    try:
        for p in points:
            fut = client.submit(run_point, p.task(spec), pure=False,
                                key=f"systolic-point-{p.hash[:16]}-{os.getpid()}-{p.index}")
            futures[fut] = p
        for fut in as_completed(list(futures)):
            p = futures.pop(fut)
            try:
                result = fut.result()
            except Exception as e:  # e.g. KilledWorker: the point crashed its workers
                result = _failed(p, f"dask: {type(e).__name__}: {e}")
            on_result(p, result)
    finally:
        for fut in futures:
            fut.cancel()


# ----------------------------------------------------------------------------- the sweep

def _covers(stored, metrics):
    """Whether a point's stored metric names include every requested metric."""
    for m in metrics:
        if m.endswith(".*"):
            if not any(k.startswith(m[:-1]) for k in stored):
                return False
        elif m not in stored:
            return False
    return True


class _OutdirLock:
    def __init__(self, outdir):
        self.path = os.path.join(outdir, ".lock")
        self.f = open(self.path, "a+")
        try:
            fcntl.flock(self.f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.f.close()
            raise SpecError(f"{outdir}: another sweep is running in this directory") from None

    def close(self):
        fcntl.flock(self.f, fcntl.LOCK_UN)
        self.f.close()


class _Terminated(BaseException):
    pass


def _on_sigterm(signum, frame):
    raise _Terminated()


def _with_filters(spec, constraints, pareto):
    """The spec with constraints and Pareto objectives given beside it (the CLI's
    --constraint and --pareto, run_sweep's arguments) added; checked against its columns."""
    if not constraints and not pareto:
        return spec
    if isinstance(constraints, str):
        constraints = [constraints]
    extra = [_pareto.parse_constraint(c, spec.columns) for c in constraints or []]
    spec.constraints = spec.constraints + extra
    if pareto:
        spec.objectives = _pareto.parse_objectives(pareto, spec.columns)
    return spec


def _stale_metric_failure(error):
    # A point that failed only because a metric was missing is re-run once the metrics change.
    return bool(error) and error.startswith("metric '")


def run_sweep(spec, outdir, jobs=None, dask=None, retry_failed=False, progress=True,
              dry_run=False, constraints=None, pareto=None,
              max_points=_safety.MAX_POINTS):
    """Runs every point of `spec` not already in OUTDIR/sweep.sqlite and returns a pandas
    DataFrame of all the spec's points (what OUTDIR/results.csv holds).

    spec: a spec file path, or a dict in the same form (relative paths from the current
    directory). jobs: local worker processes (default: CPU count). dask: a scheduler address
    'tcp://host:port' or a distributed.Client; runs there instead of locally.
    retry_failed: also re-run points recorded as failed. dry_run: plan only, run nothing and
    write nothing (when OUTDIR has no database yet). max_points: refuse a larger spec.

    The DataFrame's .attrs carry the counts: points, skipped, ran, failed, interrupted.
    constraints: filters like 'area_mm2 <= 400'; pareto: 'tokens_per_s:max,area_mm2:min' or a
    list; both add to the spec's and give the frame `feasible` and `pareto` columns.
    Raises SpecError (a systolic.InputError) for a bad spec; a failing point does not raise.
    """
    spec = _with_filters(load_spec(spec), constraints, pareto)
    if jobs is not None and (not isinstance(jobs, int) or jobs < 1):
        raise SpecError(f"jobs: expected a positive integer, got {jobs!r}")
    jobs = jobs or os.cpu_count() or 1
    outdir = os.fspath(outdir)
    # A dry run with no earlier results plans in memory and writes nothing, not even OUTDIR.
    in_memory = dry_run and not os.path.exists(os.path.join(outdir, DB_NAME))
    if not in_memory:
        os.makedirs(outdir, exist_ok=True)
    points = expand(spec, max_points)
    lock = None if in_memory else _OutdirLock(outdir)
    store = Store(":memory:" if in_memory else os.path.join(outdir, DB_NAME))
    try:
        finished = store.finished()
        errors = store.errors()
        todo, seen = [], set()
        for p in points:
            status, stored = finished.get(p.hash, (None, set()))
            if status == "ok" and not _covers(stored, spec.metrics):
                status = None  # finished before these metrics were asked for: run again
            if status == "error" and _stale_metric_failure(errors.get(p.hash)):
                status = None
            if p.hash in seen or status == "ok" or (status == "error" and not retry_failed):
                continue
            seen.add(p.hash)
            todo.append(p)
        distinct = len({p.hash for p in points})
        skipped = distinct - len(todo)
        stats = {"points": len(points), "distinct": distinct, "skipped": skipped, "ran": 0,
                 "failed": 0, "failed_now": 0, "interrupted": False}
        if dry_run:
            if progress:
                sys.stderr.write(f"sweep {spec.name}: {len(points)} points, {skipped} already "
                                 f"done, {len(todo)} to run\n")
            return _frame(spec, points, store, stats)

        client, own_client = _dask_client(dask) if dask and todo else (None, False)
        executor = f"dask:{dask if isinstance(dask, str) else 'client'}" if dask else f"local:{jobs}"
        run_id = store.start_run(spec, executor, len(points), skipped)
        bar = Progress(spec.name, distinct, skipped, enabled=progress)

        def on_result(point, result):
            store.record(point, result, run_id)
            stats["ran"] += 1
            stats["failed_now"] += result["status"] != "ok"
            bar.update(result["status"] == "ok")

        runnable = []
        for p in todo:
            if p.error is not None:  # could not even be resolved: fails without running
                on_result(p, _failed(p, p.error))
            else:
                runnable.append(p)
        old_term = None
        if multiprocessing.current_process().name == "MainProcess":
            try:
                old_term = signal.signal(signal.SIGTERM, _on_sigterm)
            except ValueError:  # not the main thread
                old_term = None
        status = "failed"  # unless it ends one of the ways below
        try:
            if runnable and client is not None:
                _run_dask(runnable, spec, client, on_result)
            elif runnable:
                _run_local(runnable, spec, jobs, on_result)
            status = "done"
        except (KeyboardInterrupt, _Terminated):
            status = "interrupted"
            stats["interrupted"] = True
        finally:
            if old_term is not None:
                signal.signal(signal.SIGTERM, old_term)
            if own_client:
                client.close()
            bar.close()
            store.end_run(run_id, status, stats["ran"], stats["failed_now"])
        frame = _frame(spec, points, store, stats, outdir)
        if progress:
            _summary(spec, frame, stats, outdir)
        return frame
    finally:
        store.close()
        if lock is not None:
            lock.close()


def front_group_columns(swept_keys, serving):
    """The results columns that split a sweep into Pareto fronts: the workload and its swept
    shape keys (a decode step's tokens/s is not a prefill's), or for a serving sweep the model
    and the offered traffic (serving_sweep.FRONT_GROUPS). scripts/plot_sweep.py draws a panel
    per front by the same rule."""
    front_keys = _serving.FRONT_GROUPS if serving else WORKLOAD_KEYS
    return ["workload"] + [k for k in swept_keys if k in front_keys]


def _frame(spec, points, store, stats, outdir=None):
    """The results as a DataFrame (and results.csv). attrs["failed"] counts every failed point
    of the spec, those recorded by earlier runs too; "failed_now" this run's only."""
    import pandas as pd

    cols, rows = results_table(spec, points, store)
    groups = front_group_columns(spec.swept_keys, spec.pack is not None)
    cols, rows = _pareto.annotate(cols, rows, spec.constraints, spec.objectives, groups)
    if outdir is not None:
        write_csv(os.path.join(outdir, CSV_NAME), cols, rows)
    frame = pd.DataFrame(rows, columns=cols)
    frame.attrs.update(stats)
    frame.attrs["failed"] = int((frame["status"] == "error").sum()) if len(frame) else 0
    frame.attrs["failed_earlier"] = frame.attrs["failed"] - stats["failed_now"]
    frame.attrs["database"] = store.path
    return frame


def _summary(spec, frame, stats, outdir):
    what = "interrupted; re-run to resume" if stats["interrupted"] else "done"
    lines = [f"sweep {spec.name}: {what}: {stats['points']} points, {stats['ran']} ran now, "
             f"{stats['skipped']} were already done, {frame.attrs['failed']} failed in all"]
    if frame.attrs["failed_earlier"]:
        lines.append(f"  {frame.attrs['failed_earlier']} of the failures were recorded by an earlier "
                     f"run and not re-run: --retry-failed re-runs them")
    if "feasible" in frame:
        lines.append(f"  {int(frame['feasible'].sum())} of {int((frame['status'] == 'ok').sum())} "
                     f"finished points meet " + " and ".join(c.text for c in spec.constraints))
    if "pareto" in frame:
        cols = list(dict.fromkeys(spec.swept_keys + [o.column for o in spec.objectives]))
        front = frame[frame["pareto"]]
        lines.append(f"  Pareto front ({', '.join(o.text for o in spec.objectives)}): "
                     f"{len(front)} points")
        lines += ["    " + line for line in front[["point", "workload"] + cols].to_string(
            index=False).splitlines()] if len(front) else []
    lines += [f"  {os.path.join(outdir, DB_NAME)}", f"  {os.path.join(outdir, CSV_NAME)}"]
    sys.stderr.write("\n".join(lines) + "\n")


# ----------------------------------------------------------------------------- command line

def main(argv=None):
    prog = os.environ.get("SYSTOLIC_SWEEP_PROG", "python3 -m systolic.sweep")
    parser = argparse.ArgumentParser(
        prog=prog, description="Run a design-space sweep (docs/sweeps.md). Results go to "
        "OUTDIR/sweep.sqlite as each point finishes, and to OUTDIR/results.csv; re-running "
        "skips finished points.",
        epilog="Exit codes: 0 every point ok, 2 bad spec or arguments, 3 some points failed "
        "(recorded), 130 interrupted (finished points are kept).")
    parser.add_argument("spec", metavar="SPEC", help="sweep spec YAML")
    parser.add_argument("-o", "--outdir", help="output directory (default: out/sweeps/NAME)")
    parser.add_argument("-j", "--jobs", type=int, default=None,
                        help="local worker processes (default: CPU count)")
    parser.add_argument("--dask", metavar="ADDRESS",
                        help="run on this dask.distributed scheduler, e.g. tcp://10.0.0.5:8786")
    parser.add_argument("--retry-failed", action="store_true",
                        help="re-run points recorded as failed")
    parser.add_argument("--dry-run", action="store_true",
                        help="print how many points would run; run nothing")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--constraint", action="append", metavar="'NAME OP NUMBER'",
                        help="keep points meeting this, e.g. 'area_mm2 <= 400' (repeatable; adds a "
                        "`feasible` column)")
    parser.add_argument("--pareto", metavar="NAME:DIR,...",
                        help="Pareto front over 2-3 objectives, e.g. tokens_per_s:max,area_mm2:min "
                        "(adds a `pareto` column; the front is printed)")
    parser.add_argument("--max-points", type=int, default=_safety.MAX_POINTS,
                        help=f"refuse a spec of more points (default {_safety.MAX_POINTS})")
    args = parser.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        parser.error("-j/--jobs: expected a positive integer")
    try:
        spec = load_spec(args.spec)
        outdir = args.outdir or os.path.join("out", "sweeps", spec.name)
        frame = run_sweep(spec, outdir, jobs=args.jobs, dask=args.dask,
                          retry_failed=args.retry_failed, progress=not args.quiet,
                          dry_run=args.dry_run, constraints=args.constraint, pareto=args.pareto,
                          max_points=args.max_points)
    except systolic.InputError as e:
        sys.stderr.write(f"systolic: error: {_safety.one_line(e)}\n")
        return 2
    if frame.attrs.get("interrupted"):
        return EXIT_INTERRUPTED
    if not args.dry_run and (frame["status"] == "error").any():
        return EXIT_POINTS_FAILED
    return 0


# systolic.sweep is this module; calling it runs a sweep: systolic.sweep("spec.yaml", "out").
class _CallableModule(types.ModuleType):
    def __call__(self, spec, outdir, **kwargs):
        return run_sweep(spec, outdir, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

if __name__ == "__main__":
    sys.exit(main())
