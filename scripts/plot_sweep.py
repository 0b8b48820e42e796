#!/usr/bin/python3
"""Plots for sweeps and runs (docs/sweeps.md, docs/python.md). Needs Debian's matplotlib.

  plot_sweep.py heatmap OUTDIR [--x KEY --y KEY] [--metric M ...] [--where KEY=VALUE ...]
      Utilization and time heatmaps over two swept keys, from OUTDIR/sweep.sqlite. With more
      than two swept keys, one figure per combination of the others (or pin them with --where).
  plot_sweep.py roofline REPORT_JSON [--bandwidth GB/s]
      Roofline of a run's layers: achieved FLOP/s against arithmetic intensity (FLOPs per byte
      of A, B and C moved once), under the chip's compute roof and, when a bandwidth is known,
      its memory roof.
  plot_sweep.py energy REPORT_JSON | OUTDIR
      Energy breakdown bars from energy_pj per component (one bar for a report, one
      stacked bar per point for a sweep). Reports without energy_pj: skipped with a message.

  `plot_sweep.py OUTDIR` alone means `heatmap OUTDIR`. Figures go to -o DIR (default: the
  OUTDIR, or the report's folder) as PNG; each written path is printed.
"""
import argparse
import itertools
import json
import math
import os
import sqlite3
import sys

DTYPE_BYTES = {"int8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "bf16": 2, "fp16": 2, "fp32": 4}
ACC_BYTES = {"int8": 4}  # outputs: int32 accumulators for int8, fp32 otherwise
LABELS = {"totals.utilization": "utilization", "totals.seconds": "time (s)",
          "totals.cycles": "cycles", "totals.mapping_efficiency": "mapping efficiency"}


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _slug(text):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(text)).strip("_")


def _value(text):
    try:
        return json.loads(text)
    except ValueError:
        return text


# ----------------------------------------------------------------------------- heatmaps

def load_points(outdir):
    """[(overrides dict, metrics dict)] of every ok point in OUTDIR/sweep.sqlite."""
    db = outdir if outdir.endswith(".sqlite") else os.path.join(outdir, "sweep.sqlite")
    if not os.path.isfile(db):
        raise SystemExit(f"plot_sweep: error: {db}: no sweep database (run `systolic sweep` first)")
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = conn.execute("SELECT workload, overrides, metrics FROM points WHERE status='ok'")
    points = []
    for workload, overrides, metrics in rows:
        o = json.loads(overrides)
        o["workload"] = workload
        points.append((o, json.loads(metrics)))
    conn.close()
    return points


def swept_keys(points):
    keys = []
    for o, _ in points:
        keys += [k for k in o if k not in keys]
    return [k for k in keys if len({json.dumps(o.get(k)) for o, _ in points}) > 1]


def _sorted_values(values):
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=str)


def heatmap(args):
    plt = _plt()
    points = load_points(args.outdir)
    for cond in args.where or []:
        key, _, text = cond.partition("=")
        want = _value(text)
        points = [(o, m) for o, m in points if o.get(key) == want or str(o.get(key)) == text]
    if not points:
        raise SystemExit("plot_sweep: error: no finished points to plot (after --where)")
    keys = swept_keys(points)
    x, y = args.x, args.y
    if not x or not y:
        free = [k for k in keys if k not in (x, y)]
        x = x or (free.pop(0) if free else None)
        y = y or (free.pop(0) if free else None)
    if not x or not y:
        raise SystemExit(f"plot_sweep: error: need two swept keys for a heatmap; the points vary "
                         f"only in {keys or 'nothing'} (give --x and --y)")
    for k in (x, y):
        if not any(k in o for o, _ in points):
            raise SystemExit(f"plot_sweep: error: no point sets '{k}'; swept keys: {keys}")
    metrics = args.metric or [m for m in ("totals.utilization", "totals.seconds")
                              if any(m in pm for _, pm in points)]
    others = [k for k in keys if k not in (x, y)]
    groups = {}
    for o, m in points:
        groups.setdefault(tuple(json.dumps(o.get(k)) for k in others), []).append((o, m))
    if len(groups) > args.max_figures:
        raise SystemExit(f"plot_sweep: error: {len(groups)} combinations of {others}; "
                         f"pin some with --where KEY=VALUE")
    outdir = args.output or (args.outdir if os.path.isdir(args.outdir) else
                             os.path.dirname(args.outdir))
    os.makedirs(outdir, exist_ok=True)
    written = []
    for group_key, pts in sorted(groups.items()):
        xs = _sorted_values({o.get(x) for o, _ in pts})
        ys = _sorted_values({o.get(y) for o, _ in pts})
        fixed = ", ".join(f"{k}={json.loads(v)}" for k, v in zip(others, group_key))
        for metric in metrics:
            grid = [[math.nan] * len(xs) for _ in ys]
            for o, m in pts:
                if metric in m and isinstance(m[metric], (int, float)):
                    grid[ys.index(o.get(y))][xs.index(o.get(x))] = m[metric]
            fig, ax = plt.subplots(figsize=(1.2 * len(xs) + 3, 0.8 * len(ys) + 2.2))
            im = ax.imshow(grid, origin="lower", aspect="auto",
                           cmap="viridis" if "util" in metric or "eff" in metric else "magma_r")
            ax.set_xticks(range(len(xs)), [str(v) for v in xs])
            ax.set_yticks(range(len(ys)), [str(v) for v in ys])
            ax.set_xlabel(x)
            ax.set_ylabel(y)
            finite = [v for row in grid for v in row if not math.isnan(v)]
            mid = (min(finite) + max(finite)) / 2 if finite else 0
            for (i, j) in itertools.product(range(len(ys)), range(len(xs))):
                v = grid[i][j]
                if not math.isnan(v):
                    ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize=8,
                            color="white" if (v < mid) == ("util" in metric) else "black")
            fig.colorbar(im, ax=ax, label=LABELS.get(metric, metric))
            ax.set_title(f"{LABELS.get(metric, metric)}" + (f"\n{fixed}" if fixed else ""),
                         fontsize=10)
            fig.tight_layout()
            name = "heatmap_" + _slug(metric) + (f"__{_slug(fixed)}" if fixed else "") + ".png"
            path = os.path.join(outdir, name)
            fig.savefig(path, dpi=110)
            plt.close(fig)
            written.append(path)
    return written


# ----------------------------------------------------------------------------- roofline

def _find_bandwidth(config):
    """(where it came from, GB/s): the HBM's peak from its hbm.* keys (channels x
    pseudo-channels x bus width x data rate), or a config leaf named like a bandwidth."""
    hbm = config.get("hbm", {})
    keys = ("channels", "pseudo_channels", "bus_bits", "data_rate_gbps")
    if all(isinstance(hbm.get(k), (int, float)) for k in keys):
        gbps = hbm["channels"] * hbm["pseudo_channels"] * hbm["bus_bits"] * hbm["data_rate_gbps"] / 8
        return "hbm.*", gbps
    stack = [("", config)]
    while stack:
        prefix, node = stack.pop()
        for k, v in node.items():
            if isinstance(v, dict):
                stack.append((f"{prefix}{k}.", v))
            elif "bandwidth" in k and isinstance(v, (int, float)) and not isinstance(v, bool):
                return f"{prefix}{k}", float(v)
    return None, None


def roofline(args):
    plt = _plt()
    with open(args.report, encoding="utf-8") as f:
        report = json.load(f)
    cfg = report["config"]
    clock_hz = cfg["clock_mhz"] * 1e6
    mxu = cfg["mxu"]
    peak = 2.0 * mxu["rows"] * mxu["cols"] * mxu["count"] * clock_hz  # FLOP/s
    bw_key, bw = (None, args.bandwidth) if args.bandwidth else _find_bandwidth(cfg)
    xs, ys, names = [], [], []
    for layer in report["chips"][0]["layers"]:
        if not layer.get("cycles"):
            continue
        b = DTYPE_BYTES.get(layer["dtype"], 2)
        out_b = ACC_BYTES.get(layer["dtype"], 4)
        m, k, n = layer["m"], layer["k"], layer["n"]
        flops = 2.0 * layer["macs"]
        bytes_moved = layer.get("repeat", 1) * ((m * k + k * n) * b + m * n * out_b)
        xs.append(flops / bytes_moved)
        ys.append(flops / (layer["cycles"] / clock_hz))
        names.append(layer["name"])
    if not xs:
        raise SystemExit("plot_sweep: error: the report has no layer with cycles")
    fig, ax = plt.subplots(figsize=(7, 4.8))
    lo, hi = min(xs) / 4, max(xs) * 4
    if bw:
        ridge = peak / (bw * 1e9)
        lo, hi = min(lo, ridge / 4), max(hi, ridge * 4)
        ax.plot([lo, ridge, hi], [lo * bw * 1e9, peak, peak], "k-", lw=1.5,
                label=f"roof: {peak / 1e12:.1f} TFLOP/s, {bw:g} GB/s"
                      + (f" ({bw_key})" if bw_key else ""))
    else:
        ax.plot([lo, hi], [peak, peak], "k-", lw=1.5,
                label=f"compute roof {peak / 1e12:.1f} TFLOP/s (no memory bandwidth known: "
                      f"--bandwidth GBPS)")
    ax.scatter(xs, ys, zorder=3)
    for x, y, name in zip(xs, ys, names):
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP / byte of A, B, C moved once)")
    ax.set_ylabel("achieved FLOP/s")
    ideal = cfg.get("memory", {}).get("ideal")
    ax.set_title(f"{cfg['name']} x {report['workload']['name']}"
                 + ("\n(memory.ideal: stall-free operand supply, so layers may sit above the "
                    "memory roof)" if ideal and bw else ""), fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    outdir = args.output or os.path.dirname(os.path.abspath(args.report))
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, "roofline.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]


# ----------------------------------------------------------------------------- energy

def _components(e):
    """{component: pJ} of an energy_pj value: a number (one 'total' bar), a map of components,
    or {"total": .., "by_component": {..}, ...} as the energy model writes it."""
    if isinstance(e, (int, float)) and not isinstance(e, bool):
        return {"total": e}
    if not isinstance(e, dict):
        return None
    if isinstance(e.get("by_component"), dict):
        e = e["by_component"]
    comp = {k: v for k, v in e.items()
            if k != "total" and isinstance(v, (int, float)) and not isinstance(v, bool)}
    return comp or ({"total": e["total"]} if isinstance(e.get("total"), (int, float)) else None)


def _energy_of(source, flat):
    """{component: pJ} from a report (energy_pj: the run's, every chip's added up) or from a
    sweep point's flat metrics ('energy_pj.by_component.mxu': ...); None when there is none."""
    if not flat:
        return _components(source.get("energy_pj"))
    nested = {}
    for key, value in source.items():
        if key == "energy_pj":
            nested = value
            break
        if key.startswith("energy_pj."):
            node = nested
            parts = key[len("energy_pj."):].split(".")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = value
    return _components(nested) if nested != {} else None


def energy(args):
    target = args.source
    bars = []  # (label, {component: pJ})
    if os.path.isdir(target) or target.endswith(".sqlite"):
        for o, m in load_points(target):
            e = _energy_of(m, flat=True)
            if e:
                label = ", ".join(f"{k}={v}" for k, v in o.items() if k != "workload")
                bars.append((label or o["workload"], e))
        outdir = args.output or (target if os.path.isdir(target) else os.path.dirname(target))
    else:
        with open(target, encoding="utf-8") as f:
            report = json.load(f)
        e = _energy_of(report, flat=False)
        if e:
            bars.append((f"{report['config']['name']} x {report['workload']['name']}", e))
        outdir = args.output or os.path.dirname(os.path.abspath(target))
    if not bars:
        print(f"plot_sweep: energy: skipped: {target} carries no energy_pj per component "
              f"(a sweep keeps it with metrics: [energy_pj.*])")
        return []
    plt = _plt()
    components = []
    for _, e in bars:
        components += [c for c in e if c not in components and c != "total"]
    components = components or ["total"]
    fig, ax = plt.subplots(figsize=(max(5, 0.5 * len(bars) + 3), 4.5))
    bottom = [0.0] * len(bars)
    for c in components:
        vals = [e.get(c, 0.0) / 1e6 for _, e in bars]  # pJ -> uJ
        ax.bar(range(len(bars)), vals, bottom=bottom, label=c)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(range(len(bars)), [label for label, _ in bars], rotation=45, ha="right",
                  fontsize=7)
    ax.set_ylabel("energy (uJ)")
    ax.set_title("energy by component")
    ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, "energy.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in ("heatmap", "roofline", "energy", "-h", "--help"):
        argv.insert(0, "heatmap")
    parser = argparse.ArgumentParser(prog="plot_sweep.py", description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n", 2)[2])
    sub = parser.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("heatmap", help="utilization/time heatmaps over two swept keys")
    h.add_argument("outdir", help="sweep OUTDIR (or its sweep.sqlite)")
    h.add_argument("--x", help="swept key on the x axis (default: the first swept key)")
    h.add_argument("--y", help="swept key on the y axis (default: the second swept key)")
    h.add_argument("--metric", action="append",
                   help="metric to plot (repeatable; default totals.utilization, totals.seconds)")
    h.add_argument("--where", action="append", metavar="KEY=VALUE",
                   help="keep only points with this override (repeatable)")
    h.add_argument("--max-figures", type=int, default=24)
    h.add_argument("-o", "--output", help="folder for the PNGs (default: OUTDIR)")
    r = sub.add_parser("roofline", help="roofline of a run's layers")
    r.add_argument("report", help="report.json of `systolic run` or Result.write()")
    r.add_argument("--bandwidth", type=float, help="memory bandwidth in GB/s for the memory roof")
    r.add_argument("-o", "--output", help="folder for roofline.png (default: the report's)")
    e = sub.add_parser("energy", help="energy breakdown bars")
    e.add_argument("source", help="report.json, or a sweep OUTDIR")
    e.add_argument("-o", "--output", help="folder for energy.png")
    args = parser.parse_args(argv)
    written = {"heatmap": heatmap, "roofline": roofline, "energy": energy}[args.cmd](args)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
