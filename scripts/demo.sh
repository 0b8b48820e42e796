#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job: the Azure code-completion trace
# (8,819 requests) replayed on a TPU v4i serving Llama-2-7B through two bucket sets, printing
# the per-bucket tables and the static-shape tax against the varlen ideal.
source "$(dirname "$0")/common.sh"
ensure_packages "${DEBIAN_PACKAGES[@]}"
build
cd "$ROOT"
# Llama-2-7B (13.5 GB) and the largest decode bucket's KV cache (16 x 2048: 30.7 GB in all) do
# not fit the real v4i's 8 GiB, which pack refuses. What-if until the v5e demo lands: a v4i
# with 32 GiB of HBM (no such part).
"$SYSTOLIC" pack -c configs/tpu-v4i.yaml --set "hbm.capacity_bytes=32 GiB" -m traces/models/llama2-7b.yaml \
  --requests traces/requests/azure-llm-2023/AzureLLMInferenceTrace_code.csv \
  --buckets traces/buckets/llama2-4k.yaml --buckets traces/buckets/llama2-pow2.yaml \
  --policy ffd --window 50 --overflow split -o out/demo
echo "report: out/demo/report.json"
