#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job: the Azure code-completion trace
# (8,819 requests) replayed on one TPU v5e (real memory system) serving Llama-3-8B with int8
# weights through two bucket sets, printing per set the work table, the static-shape tax against
# the dynamic baseline and the serving summary of `continuous` (TTFT/TBT/E2E percentiles,
# throughput, the overload line: 2 replicas would keep up); about 25 s. Everything fits the chip's 16 GiB: weights 8.03 GB, each decode
# pool's KV cache 4.29 GB (traces/buckets/llama3-8k.yaml works the fit).
source "$(dirname "$0")/common.sh"
ensure_packages "${DEBIAN_PACKAGES[@]}"
build
cd "$ROOT"
"$SYSTOLIC" pack -c configs/tpu-v5e.yaml -m traces/models/llama3-8b-w8a16.yaml \
  --requests traces/requests/azure-llm-2023/AzureLLMInferenceTrace_code.csv \
  --buckets traces/buckets/llama3-8k.yaml --buckets traces/buckets/llama3-coarse.yaml \
  --policy ffd --window 50 --overflow split -o out/demo
echo "report: out/demo/report.json, per request: out/demo/requests.csv"
