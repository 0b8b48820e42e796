#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job on the default chip and workload.
source "$(dirname "$0")/common.sh"
ensure_packages "${DEBIAN_PACKAGES[@]}"
build
cd "$ROOT"
"$SYSTOLIC" run -c configs/tpu-v4i.yaml -w traces/gemms/gpt2.yaml -o out/demo
echo "report: out/demo/report.json"
