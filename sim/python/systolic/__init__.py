"""Python API of the Systolic simulator (docs/python.md).

    import systolic
    cfg = systolic.load_config("configs/tpu-v4i.yaml", overrides={"mxu.rows": 64})
    res = systolic.run(cfg, workload="traces/gemms/gpt2.yaml")
    print(res.summary())
    res.layers            # pandas DataFrame, one row per layer
    res.to_dict()         # == json.load(open("OUT/report.json")) of `systolic run`

Runs in one process are independent (each builds the chip in a fresh SystemC context) but
serialised; the GIL is released while simulating. For many runs in parallel use
systolic.sweep (docs/sweeps.md), which runs points in worker processes or on a Dask cluster.
Import with PYTHONPATH=<build>/python (or after `cmake --install`) and Debian's /usr/bin/python3;
another interpreter fails at import with one sentence saying which to use.
"""

import importlib.util as _importlib_util
import operator as _operator
import os as _os
import sys as _sys

from ._build_info import BUILT_FOR as _BUILT_FOR


def _require(what):
    """Fails at import, in one sentence, where a later call would (a pyenv or venv python3
    lacks Debian's pandas; another Python version cannot load the extension)."""
    raise ImportError(
        f"systolic was built for {_BUILT_FOR} and needs {what}, which this interpreter "
        f"({_sys.executable}, Python {_sys.version.split()[0]}) does not have: run it with {_BUILT_FOR}")


try:
    from . import _systolic
except ImportError:
    _require("its compiled extension _systolic (built for that interpreter's Python version)")
# Found, not imported: importing pandas costs each sweep worker a third of a second.
for _module in ("numpy", "pandas"):
    if _importlib_util.find_spec(_module) is None:
        _require(f"{_module} (Debian package python3-{_module})")

from ._systolic import Config, InputError, Program  # noqa: E402

__all__ = ["Config", "InputError", "Program", "Result", "load_config", "run", "compile",
           "sweep", "__version__"]

__version__ = _systolic.__version__
REPORT_SCHEMA_VERSION = _systolic.REPORT_SCHEMA_VERSION

def load_config(path, overrides=None):
    """Reads a chip config YAML and applies overrides.

    overrides: {"mxu.rows": 64}, {"mxu": {"rows": 64}} or ["mxu.rows=64"], with the same
    meaning and checks as `systolic run --set`. Raises systolic.InputError (a ValueError) with
    the message the CLI prints after "systolic: error: ".
    """
    return _systolic.load_config(_os.fspath(path), overrides)


def _as_config(config):
    if isinstance(config, Config):
        return config
    if isinstance(config, (str, _os.PathLike)):
        return load_config(config)
    raise TypeError(f"config: expected a systolic.Config or a path, got {type(config).__name__}")


class Result:
    """The report of one run: .to_dict() is report.json, .layers a pandas DataFrame."""

    def __init__(self, native):
        self._native = native
        self._dict = None

    def _report(self):
        if self._dict is None:
            self._dict = self._native.to_dict()
        return self._dict

    def to_dict(self):
        """report.json as json.load gives it (a fresh copy each call; docs/report.md)."""
        return self._native.to_dict()

    def to_json(self, indent=2):
        """The text of report.json as `systolic run` writes it."""
        return self._native.to_json(indent)

    def summary(self):
        """The per-layer table and totals `systolic run` prints."""
        return self._native.summary()

    def write(self, outdir):
        """Writes OUTDIR/report.json; returns its path."""
        return self._native.write(_os.fspath(outdir))

    @property
    def totals(self):
        return dict(self._report()["totals"])

    @property
    def config(self):
        return self._report()["config"]

    @property
    def cycles(self):
        return self._report()["totals"]["cycles"]

    @property
    def layers(self):
        """One row per layer (name, m, k, n, dtype, repeat, folds, cycles, macs, utilization...)
        of each chip (report["chips"][i]["layers"]); a `chip` column first on a multi-chip run."""
        return self._per_chip("layers")

    @property
    def engines(self):
        """One row per engine of each chip (busy, stalled and idle cycles); a `chip` column
        first on a multi-chip run."""
        return self._per_chip("engines")

    def _per_chip(self, section):
        import pandas as pd
        report = self._report()
        if "chips" not in report:
            raise AttributeError(f"{section}: this Result is a request-log replay (systolic.pack), which has "
                                 f"per-bucket rows (.buckets), not per-{section[:-1]} ones; run one bucket "
                                 f"shape for those: systolic.run(config, workload=model, bucket='BxS')")
        chips = report["chips"]
        rows = chips[0][section] if len(chips) == 1 else [{"chip": c["chip"], **row} for c in chips for row in c[section]]
        # Nested fields (a layer's operands) become dotted columns: operands.a.hbm_bytes_read.
        return pd.json_normalize(rows) if rows else pd.DataFrame()

    @property
    def buckets(self):
        """One row per bucket shape of a request-log replay (systolic.pack): its instances,
        padding and masking waste, time and energy (docs/replay.md)."""
        report = self._report()
        if "buckets" not in report:
            raise AttributeError("buckets: this Result is a single run (systolic.run), which has per-layer rows "
                                 "(.layers); per-bucket rows come from replaying a request log: "
                                 "systolic.pack(config, model, requests, buckets)")
        import pandas as pd
        return pd.DataFrame(report["buckets"])

    @property
    def bucket_table(self):
        """pack results: one row per bucket shape per bucket set, numeric columns
        (systolic.serving_tables.bucket_frame)."""
        from .serving_tables import bucket_frame
        return bucket_frame([self.to_dict()])

    def __reduce__(self):
        return (_result_from_json, (self._native.to_json(-1),))

    def __repr__(self):
        r = self._report()
        return (f"<systolic.Result {r['config']['name']} x {r['workload']['name']}: "
                f"{r['totals']['cycles']} cycles, utilization {r['totals']['utilization']:.3f}>")

    def _repr_html_(self):  # notebooks
        return self.layers._repr_html_()


def _result_from_json(text):
    return Result(_systolic.result_from_json(text))


def _bucket(bucket):
    """bucket= as the CLI's --bucket: "BxS", or a (B, S) pair of integers."""
    if bucket is None or isinstance(bucket, str):
        return bucket
    if isinstance(bucket, (tuple, list)) and len(bucket) == 2 and all(isinstance(v, int) for v in bucket):
        return f"{bucket[0]}x{bucket[1]}"
    raise TypeError(f"bucket: expected 'BxS' (e.g. '1x128') or a (B, S) pair of integers, got {bucket!r}")


def run(config, workload=None, trace=None, bucket=None, phase="prefill", tp=1, ep=1, routing="uniform",
        skew=1.0, routing_seed=1, weight_dtype=None, activation_dtype=None, kv_dtype=None, timeline=None,
        vcd=None, mesh=None, micro_batches=1, overlap=True, every_chip=False, timeline_window=None,
        timeline_sample=1, timeline_limit_mib=1024.0):
    """Simulates `workload` (GEMM list YAML, SCALE-Sim CSV, or a transformer model YAML at
    bucket="BxS" or (B, S) and phase="prefill"|"decode") on `config` (a Config or a config path), or a
    compiled trace with trace=PATH (from `systolic compile` or Program.write). Equivalent to
    `systolic run -c CONFIG -w WORKLOAD [--bucket BxS --phase P]` / `-t TRACE`; the GIL is
    released while simulating. On a multi-chip config (ici.topology) every chip runs, a
    transformer sharded tp= / ep= ways (routing="uniform"|"skewed", skew= its Zipf exponent,
    routing_seed= which experts are popular), as `--tp/--ep/--routing/--skew/--routing-seed`, or
    over a parallelism mesh="dp=4,tp=8" (micro_batches= for a pipeline, as `--mesh` and
    `--micro-batches`; docs/interconnect.md); overlap=False keeps every collective whole, as
    `--overlap off`; the report has one entry in `chips` per chip (docs/report.md). weight_dtype=,
    activation_dtype=, kv_dtype= override a transformer file's types, as `--weight-dtype` etc.
    (docs/precision.md). timeline=PATH and vcd=PATH write those files, as `--timeline` and
    `--vcd`; timeline_window="A:B", timeline_sample=N and timeline_limit_mib= are
    `--timeline-window`, `--timeline-sample` and `--timeline-limit` (docs/timelines.md). Chips that provably evolve alike are simulated once per class (report `simulation`);
    every_chip=True simulates each, as `--every-chip`."""
    def path(p):
        return None if p is None else _os.fspath(p)
    return Result(_systolic.run(_as_config(config), path(workload), path(trace), _bucket(bucket), phase, int(tp), int(ep),
                                routing, float(skew), int(routing_seed), weight_dtype, activation_dtype, kv_dtype,
                                path(timeline), path(vcd), mesh, int(micro_batches), bool(overlap),
                                bool(every_chip), timeline_window, int(timeline_sample), float(timeline_limit_mib)))


def pack(config, model, requests, buckets, packer="first-fit-decreasing", window_ms=0.0,
         overflow="reject", compile_new_shapes=False, compile_stall_s=30.0, skip_bad_lines=False,
         scheduler="continuous", chunk_tokens=None, slo_ttft_s=None, slo_tbt_s=None, replicas=None,
         router="round-robin", rate_scale=None, poisson_qps=None, poisson_requests=None, seed=1, tp=1,
         prefill_chips=None, decode_chips=None, outdir=None, timeline=None, lanes=None, lanes_html=None):
    """Replays a request log through one or more bucket sets on `config` and serves it through a
    scheduler, as `systolic pack -m MODEL --requests LOG --buckets B ...` does; every keyword is
    one of its flags (docs/python.md has the table; None: the flag not given). The Result's to_dict() equals the
    CLI's report.json; .buckets is a DataFrame of the first set's per-shape rows.

    scheduler, packer: one name, or several (a list, or names separated by commas, as
    --scheduler and --policy): then a list of Results, one per variant (every scheduler with
    every packer, schedulers outer), as `pack --scheduler a,b` writes <outdir>/<scheduler>/report.json.

    outdir=DIR writes the files `systolic pack -o DIR` writes (report.json, requests.csv, and
    comparison.csv for several schedulers), and with it timeline=, lanes=, lanes_html= those of
    --timeline, --lanes, --lanes-html; the same bytes as the CLI's."""
    if isinstance(buckets, (str, _os.PathLike)):
        buckets = [buckets]
    names = scheduler if isinstance(scheduler, str) else ",".join(scheduler)
    packers = packer if isinstance(packer, str) else ",".join(packer)
    def whole(v):  # an integer (numpy's too); 2.0 is not a count of replicas
        return None if v is None else _operator.index(v)

    def real(v):
        return None if v is None else float(v)

    if whole(seed) < 0:  # --seed is unsigned
        raise InputError(f"--seed {seed}: expected a non-negative integer")
    serving = {"scheduler": names, "chunk_tokens": whole(chunk_tokens), "slo_ttft_s": real(slo_ttft_s),
               "slo_tbt_s": real(slo_tbt_s), "replicas": whole(replicas), "router": router,
               "rate_scale": real(rate_scale), "poisson_qps": real(poisson_qps),
               "poisson_requests": whole(poisson_requests), "seed": whole(seed), "tp": whole(tp),
               "prefill_chips": whole(prefill_chips), "decode_chips": whole(decode_chips)}
    results = [Result(r) for r in _systolic.pack(
        _as_config(config), _os.fspath(model), _os.fspath(requests), [_os.fspath(b) for b in buckets], packers,
        float(window_ms), overflow, bool(compile_new_shapes), float(compile_stall_s), bool(skip_bad_lines),
        serving, None if outdir is None else _os.fspath(outdir),
        *("" if p is None else _os.fspath(p) for p in (timeline, lanes, lanes_html)))]
    one = [isinstance(v, str) and "," not in v for v in (scheduler, packer)]
    return results[0] if all(one) else results


def compile(config, workload, output=None, bucket=None, phase="prefill",  # noqa: A001
            weight_dtype=None, activation_dtype=None, kv_dtype=None):
    """Lowers a workload to a Program (per-engine instruction streams) for this chip, as
    `systolic compile` does; with output=PATH also writes the compiled trace there.
    weight_dtype= etc. override a transformer file's types, as `--weight-dtype` etc."""
    program = _systolic.compile(_as_config(config), _os.fspath(workload), _bucket(bucket), phase,
                                weight_dtype, activation_dtype, kv_dtype)
    if output is not None:
        program.write(_os.fspath(output))
    return program


def __getattr__(name):
    # systolic.sweep is a submodule that is also callable: systolic.sweep(spec, outdir, ...).
    # Imported lazily so that `python3 -m systolic.sweep` does not find it imported already.
    if name == "sweep":
        import importlib
        return importlib.import_module(".sweep", __name__)
    raise AttributeError(f"module 'systolic' has no attribute '{name}'")
