"""Serving replays as sweep points (docs/sweeps.md, "Serving replays").

A spec with a `pack:` section is a serving sweep: each point is one `systolic pack` run (one
bucket set, one scheduler) instead of one `systolic run`, its axes the replay's keys (model,
bucket set, packer, scheduler, request log, rate scale, replicas, ...) beside any config key,
and its results the serving summary (throughput, TTFT/TBT/E2E percentiles, SLO attainment,
goodput, the static-shape tax, chips), so constraints and Pareto fronts work on them
(goodput_rps:max vs chips:min). sweep.py calls these for a spec of this kind; every value is
checked here, with the spec line, before any point runs.
"""

import difflib
import numbers
import os

import systolic
from systolic._point import file_sha256
from systolic.serving_tables import SERVING_NUMBERS, TAX_NUMBERS, serving_numbers

# The keys of a serving replay: systolic.pack's keywords (the `systolic pack` flags), each with
# how its value is checked and what it must be. `model` is the point's workload.
PACK_KEYS = {
    "model": ("path", "a transformer model YAML (traces/models/)"),
    "requests": ("path", "a request log CSV (arrival_s,prompt_tokens,output_tokens or Azure)"),
    "buckets": ("path", "one bucket-set YAML (traces/buckets/)"),
    "packer": ("packer", "a packer name, e.g. first-fit-decreasing"),
    "window_ms": ("number>=0", "a time in ms >= 0"),
    "overflow": ("overflow", "reject or split"),
    "scheduler": ("scheduler", "one scheduler name, e.g. continuous"),
    "chunk_tokens": ("count", "a positive integer"),
    "slo_ttft_s": ("number>0", "a time in seconds > 0"),
    "slo_tbt_s": ("number>0", "a time in seconds > 0"),
    "replicas": ("count", "a positive integer"),
    "router": ("router", "a router name, e.g. least-loaded"),
    "rate_scale": ("number>0", "a factor > 0"),
    "poisson_qps": ("number>0", "an arrival rate in requests/s > 0"),
    "poisson_requests": ("count", "a positive integer"),
    "seed": ("natural", "a non-negative integer"),
    "tp": ("count", "a positive integer"),
    "prefill_chips": ("count", "a positive integer"),
    "decode_chips": ("count", "a positive integer"),
}
# Every point needs these, from `pack:`, `set`, the grid or every list entry.
REQUIRED = ("model", "requests", "buckets")
# The results columns of a serving point, in order (docs/sweeps.md lists their meaning).
PACK_METRICS = list(SERVING_NUMBERS) + list(TAX_NUMBERS)
# Points that differ in these serve different traffic or answer to another SLO: each such
# group has a Pareto front of its own (the model is the `workload` column).
FRONT_GROUPS = ("requests", "rate_scale", "poisson_qps", "poisson_requests", "seed", "slo_ttft_s", "slo_tbt_s")


def check_value(key, value, base_dir, error):
    """`value` of pack key `key` if it is one (a path must name a file; a name must be
    registered), else `error(message)` is raised."""
    kind, what = PACK_KEYS[key]
    bad = error(f"'{key}': expected {what}, got {value!r}")
    if kind == "path":
        if not isinstance(value, str) or not value:
            raise bad
        full = resolve_path(base_dir, value)
        if not os.path.isfile(full):
            raise error(f"'{key}': no such file: {value} (resolved to {full}; relative paths start at "
                        f"the spec's folder)")
        return value
    if kind in ("scheduler", "router", "packer", "overflow"):
        if not isinstance(value, str):
            raise bad
        if kind == "scheduler" and "," in value:
            raise error(f"'scheduler': expected one scheduler per point, got {value!r}; sweep several "
                        f"with grid: {{scheduler: [{value.replace(',', ', ')}]}}")
        try:
            systolic._systolic.check_pack_name(kind, value, key)
        except systolic.InputError as e:
            raise error(str(e)) from None
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise bad
    whole = isinstance(value, numbers.Integral)
    ok = {"count": whole and value >= 1, "natural": whole and value >= 0,
          "number>0": value > 0, "number>=0": value >= 0}[kind]
    if not ok:
        raise bad
    return value


def resolve_path(base_dir, value):
    return os.path.normpath(os.path.join(base_dir, os.path.expanduser(value)))


def misplaced_key(key, pack_spec, run_keys):
    """Why `key` cannot be used in this kind of spec, or None: a replay key in a run sweep, a
    run key (`run_keys`: a model at one shape) in a serving sweep."""
    if not pack_spec and key in PACK_KEYS and key not in run_keys:
        return (f"'{key}' is a key of serving replays: a spec with a 'pack:' section sweeps them "
                f"(docs/sweeps.md, \"Serving replays\")")
    if pack_spec and key in run_keys and key not in PACK_KEYS:
        return (f"'{key}' is a key of run sweeps (a model at one shape); a serving sweep runs the "
                f"shapes of its bucket set ('buckets')")
    return None


def check_section(section, base_dir, lines):
    """The `pack:` section: {key: value} of fixed replay keys, each checked."""
    if not isinstance(section, dict):
        raise lines.error("'pack': expected a map of replay keys, e.g. {model: M.yaml, requests: log.csv, "
                          "buckets: set.yaml}", "pack")
    out = {}
    for key, value in section.items():
        if key not in PACK_KEYS:
            close = difflib.get_close_matches(str(key), list(PACK_KEYS), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise lines.error(f"pack: unknown key '{key}'{hint}; expected one of " + ", ".join(PACK_KEYS),
                              "pack", key)
        out[key] = check_value(key, value, base_dir, lambda m, k=key: lines.error(m, "pack", k))
    return out


def check_required(section, base_set, grid, cases, lines):
    """Every point has a model, a log and a bucket set, and both SLOs or neither."""
    for key in REQUIRED:
        if key not in section and key not in base_set and key not in grid and not (
                cases and all(key in c for c in cases)):
            raise lines.error(f"'pack': missing '{key}': {PACK_KEYS[key][1]}, for every point "
                              f"(under 'pack:', or as an axis)", "pack")
    for case in cases or [{}]:
        given = [k for k in ("slo_ttft_s", "slo_tbt_s")
                 if k in section or k in base_set or k in grid or k in case]
        if len(given) == 1:
            raise lines.error(f"'{given[0]}': expected both slo_ttft_s and slo_tbt_s, or neither "
                              f"(as --slo-ttft and --slo-tbt)", "pack")


def check_metrics(metrics, lines):
    for i, m in enumerate(metrics):
        if m not in PACK_METRICS:
            close = difflib.get_close_matches(m, PACK_METRICS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise lines.error(f"metric '{m}': a serving sweep's results are {', '.join(PACK_METRICS)}"
                              f"{hint}", "metrics", i)


def run_pack(task, config):
    """(Result, report dict, {metric: value}) of one serving point on `config`
    (systolic._point.run_point)."""
    opts = dict(task["pack"])
    for key, sha in task["pack_sha256"].items():
        if file_sha256(opts[key]) != sha:
            raise systolic.InputError(f"{opts[key]}: '{key}' file differs on this worker from the one the "
                                      f"sweep was planned with")
    res = systolic.pack(config, task["workload"], opts.pop("requests"), [opts.pop("buckets")], **opts)
    report = res.to_dict()
    values = serving_numbers(report["replays"][0])
    return res, report, {m: values[m] for m in task["metrics"]}
