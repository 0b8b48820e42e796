#!/usr/bin/python3
"""Plots for sweeps and runs (docs/sweeps.md, docs/python.md). Needs Debian's matplotlib.

  plot_sweep.py heatmap OUTDIR [--x KEY --y KEY] [--metric M ...] [--where KEY=VALUE ...]
      Utilization and time heatmaps over two swept keys, from OUTDIR/sweep.sqlite. With more
      than two swept keys, one faceted figure per metric: a panel per combination of the
      others (or pin them with --where).
  plot_sweep.py pareto OUTDIR [--x COLUMN --y COLUMN]
      The sweep's Pareto front (OUTDIR/results.csv of a sweep run with --pareto): front points
      coloured and labelled with their swept values, dominated ones grey, infeasible ones x.
  plot_sweep.py roofline REPORT_JSON [--bandwidth GB/s]
      Roofline of a run's layers: achieved FLOP/s against arithmetic intensity (FLOPs per HBM
      byte the layer moved, its output at the type it was written in), under the chip's
      compute roof and, when a bandwidth is known, its memory roof.
  plot_sweep.py energy REPORT_JSON | OUTDIR
      Energy breakdown bars from energy_pj.by_component (one bar for a report, one stacked bar
      per point for a sweep with energy_pj.* metrics). Without energy_pj: an error saying so.

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
import textwrap

# Label and scale of a metric on an axis: units in every label.
UNITS = {"totals.utilization": ("utilization (%)", 100.0),
         "totals.mapping_efficiency": ("mapping efficiency (%)", 100.0),
         "totals.seconds": ("time (ms)", 1e3), "totals.cycles": ("cycles", 1.0),
         "area_mm2.total": ("area (mm²)", 1.0), "power_w.total": ("power (W)", 1.0),
         "efficiency.tokens_per_s": ("throughput (tokens/s)", 1.0),
         "efficiency.energy_per_token_j": ("energy per token (mJ)", 1e3),
         "efficiency.tops_per_w": ("TOPS/W", 1.0), "efficiency.tops_per_mm2": ("TOPS/mm²", 1.0),
         "efficiency.usd_per_million_tokens": ("cost proxy (USD per 1M tokens)", 1.0)}


def unit(metric):
    """(axis label, scale) of a metric: the table's, else the name (with mm², W, pJ from it)."""
    if metric in UNITS:
        return UNITS[metric]
    for tail, label in (("_mm2", " (mm²)"), ("_mib", " (MiB)"), ("_bytes", " (B)"), ("_pj", " (pJ)")):
        if metric.endswith(tail) or f"{tail[1:]}." in metric:
            return metric + label, 1.0
    return metric, 1.0


def fail(message):
    """Bad input: the message on stderr, exit code 2, nothing written."""
    sys.stderr.write(f"plot_sweep: error: {message}\n")
    sys.exit(2)


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _slug(text):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(text)).strip("_")


_SIZES = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def _value(text):
    """A --where value as the points hold it: JSON (64, true), a size ('16 MiB' is the number of
    bytes it resolved to), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        number, _, suffix = text.strip().partition(" ")
        if suffix in _SIZES:
            try:
                return int(float(number) * _SIZES[suffix])
            except ValueError:
                pass
        return text


def _save(fig, outdir, name):
    """Writes `fig` as OUTDIR/NAME (the folder made if need be), closes it; returns the path."""
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, name)
    fig.savefig(path, dpi=110)
    _plt().close(fig)
    return path


# ----------------------------------------------------------------------------- heatmaps

def load_points(outdir):
    """[(overrides dict, metrics dict)] of every ok point in OUTDIR/sweep.sqlite."""
    db = outdir if outdir.endswith(".sqlite") else os.path.join(outdir, "sweep.sqlite")
    if not os.path.isfile(db):
        fail(f"{db}: no sweep database (run `systolic sweep` first)")
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = conn.execute("SELECT workload, overrides, config, metrics FROM points WHERE status='ok'")
    points = []
    for workload, overrides, config, metrics in rows:
        o = json.loads(overrides)
        resolved = json.loads(config) if config else {}
        for key in o:  # '16 MiB' as the number it resolved to, so axes sort numerically
            node = resolved
            for part in key.split("."):
                node = node.get(part) if isinstance(node, dict) else None
            if node is not None and not isinstance(node, (dict, list)):
                o[key] = node
        o["workload"] = os.path.basename(workload)
        points.append((o, json.loads(metrics)))
    conn.close()
    return points


def spec_of(outdir):
    """The spec of the sweep's latest run (runs.spec), for titles: its set, bucket, phase."""
    db = outdir if outdir.endswith(".sqlite") else os.path.join(outdir, "sweep.sqlite")
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    row = conn.execute("SELECT spec FROM runs ORDER BY run_id DESC LIMIT 1").fetchone()
    conn.close()
    return json.loads(row[0]) if row else {}


def fixed_settings(spec, workloads):
    """'gpt2.yaml; mxu.count=4, bucket=1x128': what every point of the figure shares."""
    fixed = dict(spec.get("set") or {})
    names = ", ".join(sorted({os.path.basename(w) for w in workloads}))
    return names + ("; " + ", ".join(f"{k}={v}" for k, v in fixed.items()) if fixed else "")


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
        fail("no finished points to plot (after --where)")
    keys = swept_keys(points)
    x, y = args.x, args.y
    if not x or not y:
        free = [k for k in keys if k not in (x, y)]
        x = x or (free.pop(0) if free else None)
        y = y or (free.pop(0) if free else None)
    if not x or not y:
        fail(f"need two swept keys for a heatmap; the points vary "
                         f"only in {keys or 'nothing'} (give --x and --y)")
    for k in (x, y):
        if not any(k in o for o, _ in points):
            fail(f"no point sets '{k}'; swept keys: {keys}")
    metrics = args.metric or [m for m in ("totals.utilization", "totals.seconds")
                              if any(m in pm for _, pm in points)]
    others = [k for k in keys if k not in (x, y)]
    groups = {}
    for o, m in points:
        groups.setdefault(tuple(json.dumps(o.get(k)) for k in others), []).append((o, m))
    if len(groups) > args.max_figures:
        fail(f"{len(groups)} combinations of {others}; "
                         f"pin some with --where KEY=VALUE")
    outdir = args.output or (args.outdir if os.path.isdir(args.outdir) else
                             os.path.dirname(args.outdir))
    os.makedirs(outdir, exist_ok=True)
    title = fixed_settings(spec_of(args.outdir), {o["workload"] for o, _ in points})
    where = ", ".join(args.where or [])
    written = []
    for metric in metrics:
        # One figure per metric; with more than two swept keys, a panel per combination of the
        # others (a facet), all on one colour scale.
        panels = sorted(groups.items())
        cols = min(len(panels), 3)
        rows = -(-len(panels) // cols)
        xs_all = _sorted_values({o.get(x) for o, _ in points})
        ys_all = _sorted_values({o.get(y) for o, _ in points})
        fig, axes = plt.subplots(rows, cols, squeeze=False, layout="constrained",
                                 figsize=(cols * (1.1 * len(xs_all) + 2.2), rows * (0.7 * len(ys_all) + 1.8) + 0.8))
        label, scale = unit(metric)
        grids = [_grid(pts, x, y, xs_all, ys_all, metric, scale) for _, pts in panels]
        finite = [v for g in grids for row in g for v in row if not math.isnan(v)]
        vmin, vmax = (min(finite), max(finite)) if finite else (0, 1)
        cmap = "viridis" if "util" in metric or "eff" in metric else "magma_r"
        for idx, ((group_key, _), grid) in enumerate(zip(panels, grids)):
            ax = axes[idx // cols][idx % cols]
            im = ax.imshow(grid, origin="lower", aspect="auto", cmap=cmap, vmin=vmin, vmax=vmax)
            ax.set_xticks(range(len(xs_all)), [_tick(x, v) for v in xs_all])
            ax.set_yticks(range(len(ys_all)), [_tick(y, v) for v in ys_all])
            ax.set_xlabel(_axis_label(x))
            ax.set_ylabel(_axis_label(y))
            mid = (vmin + vmax) / 2
            for (i, j) in itertools.product(range(len(ys_all)), range(len(xs_all))):
                v = grid[i][j]
                if not math.isnan(v):
                    ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize=8,
                            color="white" if (v < mid) == ("util" in metric) else "black")
            facet = ", ".join(f"{k}={json.loads(v)}" for k, v in zip(others, group_key))
            if facet:
                ax.set_title(facet, fontsize=9)
        for idx in range(len(panels), rows * cols):
            axes[idx // cols][idx % cols].axis("off")
        fig.colorbar(im, ax=axes, label=label)
        fig.suptitle(textwrap.fill(f"{label}: {title}" + (f" ({where})" if where else ""), 70), fontsize=9)
        name = "heatmap_" + _slug(metric) + (f"__{_slug(where)}" if where else "") + ".png"
        written.append(_save(fig, outdir, name))
    return written


def _axis_label(key):
    return f"{key} (MiB)" if key.endswith("_bytes") else unit(key)[0]


def _tick(key, value):
    return f"{value / 2**20:g}" if key.endswith("_bytes") and isinstance(value, (int, float)) else str(value)


def _grid(points, x, y, xs, ys, metric, scale):
    grid = [[math.nan] * len(xs) for _ in ys]
    for o, m in points:
        if metric in m and isinstance(m[metric], (int, float)):
            grid[ys.index(o.get(y))][xs.index(o.get(x))] = m[metric] * scale
    return grid


# ----------------------------------------------------------------------------- Pareto front

def _systolic():
    """The systolic package: installed, or the one built beside this checkout."""
    try:
        import systolic.sweep
    except ImportError:  # run from a checkout: the package built beside it
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "python"))
        import systolic.sweep
    return systolic


def _column(name, columns):
    """A results column by the sweep's own rules (systolic.pareto.resolve_column)."""
    pareto_module = _systolic().pareto
    try:
        return pareto_module.resolve_column(name, columns)
    except pareto_module.ParetoError as e:
        fail(f"results.csv: {e}")


def _point_label(r, keys):
    """'rows=64, weights=32 MiB': a point's values of `keys`, sizes in MiB."""
    return ", ".join(f"{k.split('.')[-1][:-len('_bytes')]}={float(r[k]) / 2**20:g} MiB"
                     if k.endswith("_bytes") else f"{k.split('.')[-1]}={r[k]}" for k in keys)


def _label_keys(swept, by, rows):
    """The swept keys that tell a panel's points apart: not its front's group keys, not one
    value throughout, and not a key tied one-to-one to an earlier one (a list entry setting
    hbm.channels and hbm.capacity_bytes together is labelled by the channels alone)."""
    keys = []
    for k in swept:
        if k in by or len({r[k] for r in rows}) < 2:
            continue
        tied = any(len({(r[j], r[k]) for r in rows}) == len({r[j] for r in rows}) == len({r[k] for r in rows})
                   for j in keys)
        if not tied:
            keys.append(k)
    return keys


def _pareto_panel(ax, key_ax, rows, x, y, third, spec, label_keys):
    """One front: its points red (coloured by a third objective's value), joined and numbered,
    the numbers' swept values listed in `key_ax` below; the dominated points grey; the
    infeasible ones grey x."""
    (xl, xs), (yl, ys) = unit(x), unit(y)
    groups = {"front": [], "dominated": [], "infeasible": []}
    for r in rows:
        groups["front" if r["pareto"] == "true" else
               "infeasible" if r.get("feasible") == "false" else "dominated"].append(r)
    style = {"front": dict(c="tab:red", s=40, zorder=3, label="Pareto front"),
             "dominated": dict(c="0.7", s=18, zorder=2, label="dominated"),
             "infeasible": dict(c="0.7", s=18, marker="x", zorder=1,
                                label="infeasible (" + "; ".join(spec.get("constraints") or []) + ")")}
    front = sorted(groups["front"], key=lambda r: float(r[x]))
    if third and front:
        tl, ts = unit(third)
        style["front"].update(c=[float(r[third]) * ts for r in groups["front"]], cmap="plasma")
    drawn = None
    for kind, pts in groups.items():
        if pts:
            sc = ax.scatter([float(r[x]) * xs for r in pts], [float(r[y]) * ys for r in pts], **style[kind])
            drawn = sc if kind == "front" else drawn
    if third and drawn is not None:
        ax.figure.colorbar(drawn, ax=ax, label=tl)
    ax.plot([float(r[x]) * xs for r in front], [float(r[y]) * ys for r in front], "-", c="tab:red",
            lw=1, alpha=0.6)
    lines = []
    for r in front:
        ax.annotate(f"#{r['point']}", (float(r[x]) * xs, float(r[y]) * ys), textcoords="offset points",
                    xytext=(4, -9), fontsize=7, color="tab:red")
        lines.append(f"#{r['point']}: " + _point_label(r, label_keys)
                     + (f", {third.split('.')[-1]}={float(r[third]):.3g}" if third else ""))
    key_ax.axis("off")
    key_ax.text(0, 1, "\n".join(lines), va="top", ha="left", fontsize=7, family="monospace",
                transform=key_ax.transAxes)
    ax.set_xlabel(xl)
    ax.set_ylabel(yl)
    ax.grid(True, alpha=0.3)
    return len(front)


def _swept_of(spec):
    return list(dict.fromkeys(list(spec.get("grid") or {})
                              + [k for case in spec.get("list") or [] for k in case]))


def front_panels(rows, spec, columns):
    """(group columns, {group values: rows}): the rows split as the sweep split its fronts (the
    workload and its shape, or a serving sweep's traffic), one panel each: a decode step's
    tokens/s is not a prefill's."""
    by = [g for g in _systolic().sweep.front_group_columns(_swept_of(spec), spec.get("pack") is not None)
          if g in columns]
    panels = {}
    for r in rows:
        panels.setdefault(tuple(r[g] for g in by), []).append(r)
    return by, panels


def _read_results(outdir):
    import csv

    path = os.path.join(outdir, "results.csv")
    if not os.path.isfile(path):
        fail(f"{path}: no results (run `systolic sweep` first)")
    with open(path, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if not rows or "pareto" not in rows[0]:
        fail(f"{path} has no 'pareto' column: run the sweep with "
             f"--pareto NAME:max,NAME:min (docs/sweeps.md)")
    return rows


def pareto(args):
    rows = _read_results(args.outdir)
    columns = list(rows[0])
    spec = spec_of(args.outdir)
    names = [o.rpartition(":")[0] for o in spec.get("pareto") or []]
    x = _column(args.x or names[0], columns)
    y = _column(args.y or names[1], columns)
    rest = [n for n in names if _column(n, columns) not in (x, y)]
    third = _column(rest[0], columns) if rest else None
    ran = [r for r in rows if r["status"] == "ok" and r[x] and r[y]]
    if not ran:
        fail("no finished points to plot")
    by, panels = front_panels(ran, spec, columns)
    varying = [g for g in by if len({k[by.index(g)] for k in panels}) > 1]
    n, cols = len(panels), min(len(panels), 2)
    keyed = [(key, members, _label_keys(_swept_of(spec), by, members)) for key, members in sorted(panels.items())]
    key_lines = max(sum(r["pareto"] == "true" for r in m) for _, m, _ in keyed)
    plt = _plt()
    fig = plt.figure(figsize=(7.5 * cols, (5 + 0.14 * key_lines) * -(-n // cols)), layout="constrained")
    grid = fig.add_gridspec(2 * -(-n // cols), cols, height_ratios=[5, 0.14 * key_lines + 0.1] * -(-n // cols))
    on_front = 0
    for idx, (key, members, label_keys) in enumerate(keyed):
        ax = fig.add_subplot(grid[2 * (idx // cols), idx % cols])
        on_front += _pareto_panel(ax, fig.add_subplot(grid[2 * (idx // cols) + 1, idx % cols]), members,
                                  x, y, third, spec, label_keys)
        ax.set_title(", ".join(f"{g}={os.path.basename(v) if g == 'workload' else v}"
                               for g, v in zip(by, key) if g in varying), fontsize=9)
        if idx == 0:
            ax.legend(fontsize=8)
    fig.suptitle(f"Pareto front{'s' if n > 1 else ''} ({', '.join(spec.get('pareto') or [])}): {on_front} "
                 f"of {len(ran)} points\n" + textwrap.fill(fixed_settings(spec, {r["workload"] for r in rows}), 110),
                 fontsize=9)
    return [_save(fig, args.output or args.outdir, "pareto.png")]


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


def _layer_points(report, clock_hz):
    """(intensities, FLOP/s, names, compute types, names of on-chip layers) of the first chip's
    layers. Intensity is over the HBM bytes each layer's DMA really moved: operands at their
    stored types and the output at the type it is written in (bf16 for bf16 activations, not an
    assumed fp32), so a layer's FLOP/s cannot exceed intensity x bandwidth: with the real
    memory system every point sits under the memory roof. Layers that touch no HBM (fused
    attention's scores stay on chip) have no intensity to plot."""
    xs, ys, names, dtypes, on_chip = [], [], [], [], []
    for layer in report["chips"][0]["layers"]:
        if not layer.get("cycles") or not layer.get("macs"):
            continue
        flops = 2.0 * layer["macs"]
        moved = layer.get("hbm_bytes_read", 0) + layer.get("hbm_bytes_written", 0)
        if moved == 0:
            on_chip.append(layer["name"])
            continue
        xs.append(flops / moved)
        ys.append(flops / (layer["cycles"] / clock_hz))
        names.append(layer["name"])
        dtypes.append(layer.get("dtype"))
    return xs, ys, names, dtypes, on_chip


def _compute_roofs(mxu, clock_hz, dtypes):
    """{FLOP/s: [types]}: the MXUs' peak in each type the layers compute in, at that type's
    MACs per PE per cycle (mxu.rate: an int8 layer on a chip with rate 2 has twice the roof)."""
    roofs = {}
    for t in sorted({d or mxu["dtype"] for d in dtypes} or {mxu["dtype"]}):
        rate = float((mxu.get("rate") or {}).get(t, 1.0))
        roofs.setdefault(2.0 * mxu["rows"] * mxu["cols"] * mxu["count"] * rate * clock_hz, []).append(t)
    return roofs


def roofline(args):
    plt = _plt()
    with open(args.report, encoding="utf-8") as f:
        report = json.load(f)
    cfg = report["config"]
    clock_hz = cfg["clock_mhz"] * 1e6
    mxu = cfg["mxu"]
    bw_key, bw = (None, args.bandwidth) if args.bandwidth else _find_bandwidth(cfg)
    xs, ys, names, dtypes, on_chip = _layer_points(report, clock_hz)
    if not xs:
        fail("the report has no layer with cycles and HBM traffic")
    fig, ax = plt.subplots(figsize=(7, 4.8))
    roofs = _compute_roofs(mxu, clock_hz, dtypes)
    lo, hi = min(xs) / 4, max(xs) * 4
    for peak, types in sorted(roofs.items(), reverse=True):
        what = f"{peak / 1e12:.1f} TFLOP/s ({', '.join(types)})"
        if bw:
            ridge = peak / (bw * 1e9)
            lo, hi = min(lo, ridge / 4), max(hi, ridge * 4)
            ax.plot([lo, ridge, hi], [lo * bw * 1e9, peak, peak], "-", lw=1.5,
                    label=f"roof: {what}, {bw:g} GB/s" + (f" ({bw_key})" if bw_key else ""))
        else:
            ax.plot([lo, hi], [peak, peak], "-", lw=1.5,
                    label=f"compute roof {what} (no memory bandwidth known: --bandwidth GBPS)")
    ax.scatter(xs, ys, zorder=3)
    for x, y, name in zip(xs, ys, names):
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per HBM byte the layer moved)")
    ax.set_ylabel("achieved FLOP/s")
    ideal = cfg.get("memory", {}).get("ideal")
    ax.set_title(f"{cfg['name']} x {report['workload']['name']}, {mxu['count']} x {mxu['rows']}x{mxu['cols']} "
                 f"{mxu['dtype']}"
                 + ("\n(memory.ideal: stall-free operand supply, so layers may sit above the "
                    "memory roof)" if ideal and bw else "")
                 + (f"\non chip, no HBM bytes: {', '.join(on_chip)}" if on_chip else ""), fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return [_save(fig, args.output or os.path.dirname(os.path.abspath(args.report)), "roofline.png")]


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


def _pack_bars(report):
    """A `pack` report's energy: one bar per bucket shape of each replay (its energy_pj over all
    its instances; the shapes' runs are not kept, so there are no components)."""
    bars = []
    for replay in report["replays"]:
        for b in replay.get("buckets") or []:
            if isinstance(b.get("energy_pj"), (int, float)):
                shape = "x".join(str(v) for v in b.get("shape", []))
                bars.append((f"{replay.get('bucket_set', '?')} {b.get('phase', '')} {shape}",
                             {"total": b["energy_pj"]}))
    return bars


def _chip_settings(cfg):
    """', 4 x 64x256 bf16 MXUs, 1843 GB/s': what a run's config set, which its preset name does
    not say when the run overrode keys."""
    mxu = cfg.get("mxu") or {}
    if not all(k in mxu for k in ("count", "rows", "cols", "dtype")):
        return ""
    _, bw = _find_bandwidth(cfg)
    return (f", {mxu['count']} x {mxu['rows']}x{mxu['cols']} {mxu['dtype']} MXUs"
            + (f", {bw:.0f} GB/s" if bw and not (cfg.get("memory") or {}).get("ideal") else ""))


def energy(args):
    target = args.source
    bars = []  # (label, {component: pJ})
    title = "energy by component"
    if os.path.isdir(target) or target.endswith(".sqlite"):
        for o, m in load_points(target):
            e = _energy_of(m, flat=True)
            if e:
                label = ", ".join(f"{k}={v}" for k, v in o.items() if k != "workload")
                bars.append((label or o["workload"], e))
        title += ": " + fixed_settings(spec_of(target), {o["workload"] for o, _ in load_points(target)})
        outdir = args.output or (target if os.path.isdir(target) else os.path.dirname(target))
    else:
        with open(target, encoding="utf-8") as f:
            report = json.load(f)
        if isinstance(report, dict) and isinstance(report.get("replays"), list):
            bars += _pack_bars(report)  # `systolic pack`: each bucket shape's energy, no components
            title = f"energy by bucket shape: {report.get('config', {}).get('name', '?')} x {report.get('model', '?')}"
        elif not isinstance(report, dict) or "energy_pj" not in report:
            fail(f"{target}: no energy_pj section: expected a report of `systolic run` (or "
                 f"Result.write) or of `systolic pack`")
        else:
            e = _energy_of(report, flat=False)
            if e:
                cfg = report.get("config") or {}
                bars.append((f"{cfg.get('name', '?')} x {(report.get('workload') or {}).get('name', '?')}", e))
                title += f": {bars[-1][0]}" + _chip_settings(cfg)
        outdir = args.output or os.path.dirname(os.path.abspath(target))
    if not bars:
        fail(f"{target}: no point carries energy_pj per component: add energy_pj.* to the "
             f"sweep's metrics (there is no totals.energy_pj)")
    plt = _plt()
    components = []
    for _, e in bars:
        components += [c for c in e if c not in components and c != "total"]
    components = components or ["total"]
    width = max(5, 0.5 * len(bars) + 3)
    fig, ax = plt.subplots(figsize=(width, 4.5))
    # The unit that keeps the tallest bar between 1 and 1000: pJ up to J.
    tallest = max(sum(v for k, v in e.items() if k != "total") or e.get("total", 0.0) for _, e in bars)
    scale, name = next(((s, n) for s, n in ((1e12, "J"), (1e9, "mJ"), (1e6, "µJ"), (1e3, "nJ"))
                        if tallest >= s), (1.0, "pJ"))
    bottom = [0.0] * len(bars)
    for c in components:
        vals = [e.get(c, 0.0) / scale for _, e in bars]
        ax.bar(range(len(bars)), vals, bottom=bottom, label=c)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(range(len(bars)), [label for label, _ in bars], rotation=45, ha="right",
                  fontsize=7)
    ax.set_ylabel(f"energy ({name})")
    ax.set_title(textwrap.fill(title, int(width * 12)), fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return [_save(fig, outdir, "energy.png")]


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in ("heatmap", "pareto", "roofline", "energy", "-h", "--help"):
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
    pf = sub.add_parser("pareto", help="the Pareto front of a sweep run with --pareto")
    pf.add_argument("outdir", help="sweep OUTDIR")
    pf.add_argument("--x", help="column on the x axis (default: the first objective)")
    pf.add_argument("--y", help="column on the y axis (default: the second objective)")
    pf.add_argument("-o", "--output", help="folder for pareto.png (default: OUTDIR)")
    e = sub.add_parser("energy", help="energy breakdown bars")
    e.add_argument("source", help="report.json, or a sweep OUTDIR")
    e.add_argument("-o", "--output", help="folder for energy.png")
    args = parser.parse_args(argv)
    written = {"heatmap": heatmap, "pareto": pareto, "roofline": roofline,
               "energy": energy}[args.cmd](args)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
