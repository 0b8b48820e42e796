"""Plots of serving replays (docs/serving.md, "Plots"), from the folders `systolic pack` wrote:
report.json and one requests CSV per bucket set. Needs Debian's matplotlib and pandas. Pure
Python: scripts/plot_serving.py loads this file without the compiled module.

    from systolic.serving_plots import plot_serving
    plot_serving(["out/continuous", "out/static"], "plots")   # -> the three PNG paths

A configuration is one bucket set of one folder, labelled "<folder name>/<bucket set>" (or
by `labels`, one per folder).
"""
import json
import os
import pathlib

FIGURES = ("latency_cdf.png", "over_time.png", "waste_per_bucket.png")
LATENCIES = (("ttft_s", "TTFT (s)"), ("tbt_mean_s", "TBT, mean per request (s)"), ("e2e_s", "end-to-end (s)"))
MAX_BINS = 100  # time bins of the over-time figure: about 10 requests each, at most this many


def _configurations(outdirs, labels):
    """(label, requests DataFrame, replay dict) per bucket set of every folder."""
    import pandas as pd
    out = []
    for i, folder in enumerate(map(pathlib.Path, outdirs)):
        report = json.loads((folder / "report.json").read_text())
        name = labels[i] if labels else folder.name
        for k, replay in enumerate(report["replays"]):
            csv = folder / ("requests.csv" if k == 0 else f"requests-{replay['bucket_set']}.csv")
            out.append((f"{name}/{replay['bucket_set']}", pd.read_csv(csv), replay))
    return out


def _latency_cdfs(configs, plt):
    """Empirical CDF (step, nearest rank) of each latency over the requests that have it."""
    fig, axes = plt.subplots(1, len(LATENCIES), figsize=(15, 4.2))
    for ax, (column, title) in zip(axes, LATENCIES):
        for label, rows, _ in configs:
            values = rows[column].dropna().sort_values().to_numpy()
            if len(values):
                ax.step(values, [(i + 1) / len(values) for i in range(len(values))], where="post", label=label)
        ax.set_xlabel(title)
        ax.set_ylabel("fraction of requests")
        ax.set_xscale("log")  # latencies span orders of magnitude (and are > 0)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("Latency CDFs (requests.csv; served and truncated requests)")
    return fig


def _over_time(configs, plt):
    """Requests waiting for their first step, and requests finished per second, in time bins."""
    import numpy as np
    fig, (queue_ax, rate_ax) = plt.subplots(2, 1, figsize=(11, 6.5), sharex=True)
    for label, rows, _ in configs:
        served = rows.dropna(subset=["e2e_s"])
        start = served["arrival_s"] + served["queue_s"]
        finish = served["arrival_s"] + served["e2e_s"]
        bins = max(5, min(MAX_BINS, len(served) // 10))
        edges = np.linspace(rows["arrival_s"].min(), finish.max(), bins + 1)
        mids = (edges[:-1] + edges[1:]) / 2
        waiting = [int(((served["arrival_s"] <= t) & (start > t)).sum()) for t in mids]
        done, _ = np.histogram(finish, bins=edges)
        queue_ax.plot(mids, waiting, label=label)
        rate_ax.plot(mids, done / np.diff(edges), label=label)
    queue_ax.set_ylabel("requests waiting\n(arrived, no step yet)")
    rate_ax.set_ylabel("requests finished / s")
    rate_ax.set_xlabel("replayed time (s)")
    for ax in (queue_ax, rate_ax):
        ax.grid(alpha=0.3)
    queue_ax.legend(fontsize=8)
    fig.suptitle("Queue length and throughput over time")
    return fig


def _waste(configs, plt):
    """MACs wasted on pad tokens and on masked cells per bucket shape (report.json buckets)."""
    fig, ax = plt.subplots(figsize=(12, 4.5))
    names, pads, masks = [], [], []
    for label, _, replay in configs:
        for b in replay["buckets"]:
            shape = "varlen" if b["shape"] is None else f"{b['shape'][0]}x{b['shape'][1]}"
            names.append(f"{label}\n{b['phase']} {shape}")
            pads.append(100 * b["padding_waste"])
            masks.append(100 * b["mask_waste"])
    x = range(len(names))
    ax.bar(x, pads, label="pad tokens")
    ax.bar(x, masks, bottom=pads, label="masked cells")
    ax.set_xticks(list(x), names, rotation=90, fontsize=7)
    ax.set_ylabel("% of MACs issued")
    ax.legend()
    ax.set_title("Waste per bucket (report.json: padding_waste, mask_waste)")
    fig.tight_layout()
    return fig


def plot_serving(outdirs, plot_dir, labels=None):
    """Writes latency_cdf.png, over_time.png and waste_per_bucket.png into plot_dir for the
    pack output folders `outdirs`; returns their paths. ValueError for labels of another count."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    outdirs = [os.fspath(d) for d in outdirs]
    if labels is not None and len(labels) != len(outdirs):
        raise ValueError(f"labels: expected one per folder ({len(outdirs)}), got {len(labels)}")
    configs = _configurations(outdirs, labels)
    plot_dir = pathlib.Path(plot_dir)
    plot_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, draw in zip(FIGURES, (_latency_cdfs, _over_time, _waste)):
        fig = draw(configs, plt)
        paths.append(plot_dir / name)
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)
    return paths
