#!/usr/bin/env bash
# The weight-streaming roofline of docs/memory.md: a GEMM [B, 4096] x [4096, 4096] in bf16 on
# a chip with its real memory system, for B from 1 to 4096. Prints, for each B, the simulated
# time, the two floors (weight bytes over the HBM's peak bandwidth, MACs over the MXUs' peak
# rate) and which side bound the run. Usage: scripts/roofline.sh [CONFIG] [--set k=v ...]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SYSTOLIC="${SYSTOLIC_BIN:-$ROOT/build/systolic}"
CONFIG="${1:-$ROOT/configs/tpu-v4i.yaml}"
shift || true
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
printf "%6s %12s %12s %14s %14s %8s\n" B cycles "time (us)" "weights/BW us" "MACs/peak us" bound
for B in 1 2 4 8 16 32 64 128 192 256 384 512 1024 2048 4096; do
  printf "gemms:\n  - {name: ws, m: %d, k: 4096, n: 4096, dtype: bf16}\n" "$B" > "$WORK/w.yaml"
  "$SYSTOLIC" run -c "$CONFIG" -w "$WORK/w.yaml" --set memory.ideal=false "$@" -q -o "$WORK/out"
  /usr/bin/python3 - "$WORK/out/report.json" "$B" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); b = int(sys.argv[2]); c = r["config"]; t = r["totals"]
peak_macs = c["mxu"]["rows"] * c["mxu"]["cols"] * c["mxu"]["count"] * c["mxu"]["rate"]["bf16"] * c["clock_mhz"] * 1e6
mem_floor = 4096 * 4096 * 2 / (r["chips"][0]["memory"]["hbm"]["peak_gbps"] * 1e9)
print(f"{b:6d} {t['cycles']:12d} {t['seconds'] * 1e6:12.1f} {mem_floor * 1e6:14.1f} "
      f"{b * 4096 * 4096 / peak_macs * 1e6:14.1f} {t['bound']:>8}")
PY
done
