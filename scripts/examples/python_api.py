#!/usr/bin/python3
"""A worked example of the systolic Python API (docs/python.md), notebook style: each
"# %%" cell runs on its own in Jupyter/VS Code, or run the whole file:

    PYTHONPATH=build/python /usr/bin/python3 scripts/examples/python_api.py [OUTDIR]

It loads a chip, runs one GPT-2 layer, reads the report as dicts and pandas frames, tries a
few MXU shapes in a loop, shows the error a bad override raises, and runs a small sweep on
two worker processes. Figures and files go to OUTDIR (default out/python_api).
"""
# %% Setup: the module lives in <build>/python (PYTHONPATH=build/python).
import os
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(pathlib.Path(os.environ.get("SYSTOLIC_BUILD", REPO / "build")) / "python"))
import systolic  # noqa: E402

OUT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "out/python_api")
CONFIG = REPO / "configs" / "tpu-v4i.yaml"
GPT2 = REPO / "traces" / "gemms" / "gpt2.yaml"


def main():
    # %% A chip: the TPU v4i preset, as `systolic run -c configs/tpu-v4i.yaml` would load it.
    cfg = systolic.load_config(CONFIG)
    print(cfg)
    print("MXU:", cfg.to_dict()["mxu"])

    # %% One run. The same numbers as `systolic run -c ... -w traces/gemms/gpt2.yaml`.
    res = systolic.run(cfg, workload=GPT2)
    print(res.summary())
    report = res.to_dict()  # == json.load(open("OUT/report.json")) of the CLI
    print("total cycles:", report["totals"]["cycles"], "utilization:",
          round(report["totals"]["utilization"], 3))

    # %% The layers as a pandas DataFrame: which GEMM wastes the array?
    layers = res.layers
    print(layers[["name", "m", "k", "n", "folds", "cycles", "utilization"]]
          .sort_values("utilization").to_string(index=False))
    worst = layers.loc[layers["utilization"].idxmin(), "name"]
    print("lowest utilization:", worst)

    # %% Many runs in one process: overrides make variants of the chip. Each run builds the
    # chip afresh, so the order does not matter; the GIL is released while simulating.
    rows = []
    for rows_, cols in [(64, 64), (128, 128), (256, 256), (128, 64)]:
        variant = cfg.with_overrides({"mxu.rows": rows_, "mxu.cols": cols})
        r = systolic.run(variant, GPT2)
        rows.append({"mxu": f"{rows_}x{cols}", "cycles": r.cycles,
                     "utilization": round(r.totals["utilization"], 3),
                     "attn_context util": round(
                         r.layers.set_index("name").loc["attn_context", "utilization"], 3)})
    import pandas as pd
    print(pd.DataFrame(rows).to_string(index=False))

    # %% Bad input raises systolic.InputError (a ValueError) with the CLI's message; the
    # interpreter carries on.
    try:
        systolic.load_config(CONFIG, {"mxu.rowz": 64})
    except systolic.InputError as e:
        print("InputError:", e)

    # %% Save the report as the CLI does, and plot the roofline of its layers.
    path = res.write(OUT / "gpt2")
    print("wrote", path)
    import subprocess
    subprocess.run([sys.executable, str(REPO / "scripts" / "plot_sweep.py"), "roofline", path,
                    "--bandwidth", "614"], check=True)

    # %% A sweep: 3 x 3 MXU shapes on two worker processes, results in OUT/sweep/sweep.sqlite
    # and results.csv. Run it again and every point is skipped (docs/sweeps.md).
    spec = {"name": "shapes", "config": str(CONFIG), "workload": str(GPT2),
            "grid": {"mxu.rows": [64, 128, 256], "mxu.cols": [64, 128, 256]},
            "metrics": ["totals.cycles", "totals.utilization"]}
    frame = systolic.sweep(spec, OUT / "sweep", jobs=2)
    print(frame[["mxu.rows", "mxu.cols", "totals.cycles", "totals.utilization"]]
          .to_string(index=False))
    print(frame.pivot(index="mxu.rows", columns="mxu.cols", values="totals.utilization").round(3))


# Sweeps start worker processes, which import this file again: keep the work under this guard.
if __name__ == "__main__":
    main()
