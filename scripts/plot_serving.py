#!/usr/bin/python3
"""Plots of serving replays (docs/serving.md, "Plots"). Needs Debian's matplotlib and pandas.

  plot_serving.py OUTDIR [OUTDIR ...] [-o PLOTDIR] [--labels A B ...]

Each OUTDIR is a folder `systolic pack` wrote (report.json, requests.csv, requests-<set>.csv);
every bucket set of every folder is one configuration. Writes latency_cdf.png (TTFT, TBT, E2E
CDFs), over_time.png (queue length and throughput) and waste_per_bucket.png into PLOTDIR
(default: the first OUTDIR) and prints each path. The same as systolic.serving_plots.plot_serving.
"""
import argparse
import importlib.util
import pathlib
import sys

MODULE = pathlib.Path(__file__).resolve().parents[1] / "sim" / "python" / "systolic" / "serving_plots.py"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outdirs", nargs="+", help="folders written by systolic pack")
    parser.add_argument("-o", "--plot-dir", help="where the PNGs go (default: the first OUTDIR)")
    parser.add_argument("--labels", nargs="+", help="one label per OUTDIR (default: the folder names)")
    args = parser.parse_args()
    for d in args.outdirs:
        if not (pathlib.Path(d) / "report.json").is_file():
            sys.exit(f"plot_serving.py: error: {d}: expected a folder written by systolic pack (no report.json)")
    # Loaded by path: the plots need no compiled extension.
    spec = importlib.util.spec_from_file_location("serving_plots", MODULE)
    plots = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plots)
    try:
        paths = plots.plot_serving(args.outdirs, args.plot_dir or args.outdirs[0], args.labels)
    except ValueError as e:
        sys.exit(f"plot_serving.py: error: {e}")
    for p in paths:
        print(p)


if __name__ == "__main__":
    main()
