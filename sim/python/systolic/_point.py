"""One sweep point, run in a worker process (local pool or Dask worker).

Kept apart from sweep.py so that the function a pool pickles is always
`systolic._point.run_point`, whichever module is __main__ in the parent.
"""

import hashlib
import os
import socket
import time


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class MetricError(LookupError):
    pass


def _child(node, part, metric):
    if isinstance(node, dict):
        if part in node:
            return node[part]
    elif isinstance(node, list):
        for item in node:  # layers.qkv_proj.cycles: a list element by its name ...
            if isinstance(item, dict) and item.get("name") == part:
                return item
        if part.isdigit() and int(part) < len(node):  # ... or layers.0.cycles by index
            return node[int(part)]
    raise MetricError(f"metric '{metric}': the report has no '{part}' there")


def _flatten(prefix, node, out):
    if isinstance(node, dict):
        for k, v in node.items():
            _flatten(f"{prefix}.{k}", v, out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            name = v.get("name") if isinstance(v, dict) else None
            _flatten(f"{prefix}.{name if isinstance(name, str) else i}", v, out)
    else:
        out[prefix] = node


def extract_metrics(report, metrics):
    """{metric: value} for dotted paths into report.json. 'totals.*' takes every scalar under
    totals (recursively); list elements are chosen by their 'name' or by index."""
    out = {}
    for metric in metrics:
        parts = metric.split(".")
        wildcard = parts[-1] == "*"
        if wildcard:
            parts = parts[:-1]
        node = report
        for part in parts:
            node = _child(node, part, metric)
        if wildcard:
            _flatten(".".join(parts), node, out)
        else:
            out[metric] = node
    return out


def run_point(task):
    """Runs one point; never raises for a bad point: returns status 'error' and the message."""
    started = time.time()
    result = {"hash": task["hash"], "status": "error", "error": None, "metrics": None,
              "report": None, "generator": None,
              "worker": f"{socket.gethostname()}:{os.getpid()}"}
    try:
        import systolic

        try:
            if file_sha256(task["workload"]) != task["workload_sha256"]:
                raise systolic.InputError(
                    f"{task['workload']}: workload file differs on this worker from the one "
                    f"the sweep was planned with")
            config = systolic.load_config(task["config"], task["overrides"])
            if config.to_dict() != task["resolved_config"]:
                raise systolic.InputError(
                    f"{task['config']}: config file differs on this worker from the one the "
                    f"sweep was planned with")
            if "pack" in task:  # a serving replay (systolic.serving_sweep)
                from systolic.serving_sweep import run_pack
                res, report, result["metrics"] = run_pack(task, config)
            else:
                res = systolic.run(config, workload=task["workload"], **task.get("workload_opts", {}))
                report = res.to_dict()
                result["metrics"] = extract_metrics(report, task["metrics"])
            result["generator"] = report.get("generator")
            if task.get("keep_report"):
                result["report"] = res.to_json(-1)
            result["status"] = "ok"
        except systolic.InputError as e:
            result["error"] = str(e)
        except MetricError as e:
            result["error"] = str(e)
        except OSError as e:
            result["error"] = f"{e.filename or task['workload']}: {e.strerror or e}"
    except Exception as e:  # anything else is a bug; keep it with the point
        result["error"] = f"internal error: {type(e).__name__}: {e}"
    result["seconds"] = time.time() - started
    return result
