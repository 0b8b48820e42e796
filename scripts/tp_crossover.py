#!/usr/bin/env python3
"""Tensor-parallel crossover of one MLP layer (docs/interconnect.md, "The TP crossover").

Shards x[B, D] . W_in[D, F] . W_out[F, D] over Y chips of a bidirectional ring, Megatron
style: all-gather x (B*D elements), two matmuls on F/Y columns, reduce-scatter the partial
sums. Per chip the math takes 4*B*D*F / (Y*C) seconds (two matmuls, 2 FLOPs per MAC, C the
chip's FLOP/s); each collective moves (Y-1)/Y * B*D*w bytes at W = 2 x link bandwidth (both
ways round the ring). With w = 2 bytes (bf16) the layer turns communication-bound near
Y = F*W/C. Prints, for each Y, the simulated compute time, communication time and the part
of it that is exposed, next to the prediction.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(systolic, config, workload, y, link_gbps, outdir, ideal_memory):
    cmd = [systolic, "run", "-q", "-c", config, "-w", workload, "-o", outdir,
           "--set", f"memory.ideal={'true' if ideal_memory else 'false'}",
           # A ring of Y chips (wrapped: the closed form is a ring's, not a line's).
           "--set", "ici.topology=ring", "--set", f"ici.dims={y}", "--set", "ici.wraparound=true",
           "--set", "ici.ports=2",
           "--set", "ici.algorithm=bidir_ring", "--set", f"ici.link_gbps={link_gbps}"]
    subprocess.run(cmd, check=True, env=dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE"))
    with open(os.path.join(outdir, "report.json")) as f:
        return json.load(f)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--systolic", default=os.path.join(os.environ.get("SYSTOLIC_BUILD", os.path.join(ROOT, "build")), "systolic"))
    p.add_argument("-c", "--config", default=os.path.join(ROOT, "configs", "tpu-v5e-8.yaml"))
    p.add_argument("--tokens", type=int, default=2048, help="B: tokens in the layer")
    p.add_argument("--d-model", type=int, default=8192, help="D")
    p.add_argument("--ffn", type=int, default=28672, help="F (Llama-2-70B: 28672)")
    p.add_argument("--link-gbps", type=float, default=45.0, help="GB/s per link per direction")
    p.add_argument("--degrees", default="1,2,4,8,16,32", help="Y values")
    p.add_argument("--ideal-memory", action="store_true",
                   help="what-if: HBM and DMA transfers take no time (a lower bound), so the closed "
                        "forms above hold exactly; default: the real memory system")
    a = p.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for y in [int(v) for v in a.degrees.split(",")]:
            if a.ffn % y:
                sys.exit(f"--ffn {a.ffn} is not divisible by Y = {y}")
            wl = os.path.join(tmp, f"mlp_tp{y}.yaml")
            act = a.tokens * a.d_model * 2
            gemms = [{"name": "all_gather_x", "collective": "all_gather", "bytes": act},
                     {"name": "w_in", "m": a.tokens, "k": a.d_model, "n": a.ffn // y},
                     {"name": "w_out", "m": a.tokens, "k": a.ffn // y, "n": a.d_model},
                     {"name": "reduce_scatter_y", "collective": "reduce_scatter", "bytes": act}]
            with open(wl, "w") as f:
                yaml.safe_dump({"gemms": gemms}, f, sort_keys=False)
            r = run(a.systolic, a.config, wl, y, a.link_gbps, os.path.join(tmp, f"out{y}"), a.ideal_memory)
            mhz = r["config"]["clock_mhz"]
            chip = r["chips"][0]
            compute = sum(l["cycles"] for l in chip["layers"] if l["kind"] != "collective")
            comm = r["totals"]["comm_cycles"]
            exposed = r["totals"]["exposed_comm_cycles"]
            cfg = r["config"]["mxu"]
            flops = cfg["rows"] * cfg["cols"] * cfg["count"] * 2 * mhz * 1e6
            rows.append((y, compute / mhz, comm / mhz, exposed / mhz, r["totals"]["seconds"] * 1e6, flops))
        flops = rows[0][5]
        w = 2 * a.link_gbps * 1e9
        print(f"MLP [{a.tokens}, {a.d_model}] x [{a.d_model}, {a.ffn}] x [{a.ffn}, {a.d_model}] bf16, "
              f"C = {flops / 1e12:.1f} TFLOP/s per chip, W = 2 x {a.link_gbps:g} GB/s (bidirectional ring)")
        print(f"predicted crossover Y = F * W / C = {a.ffn * w / flops:.1f}")
        print("memory.ideal=true: what-if, transfers take no time (a lower bound)" if a.ideal_memory else
              "real memory system: messages and operands move through HBM (the closed forms leave it out)")
        print(f"{'Y':>4} {'compute us':>12} {'comm us':>10} {'exposed us':>11} {'total us':>10}  bound")
        for y, compute, comm, exposed, total, _ in rows:
            print(f"{y:>4} {compute:>12.1f} {comm:>10.1f} {exposed:>11.1f} {total:>10.1f}  "
                  f"{'communication' if comm > compute else 'compute'}")


if __name__ == "__main__":
    main()
