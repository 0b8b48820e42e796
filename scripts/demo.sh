#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job: the Azure code-completion trace
# (8,819 requests) replayed on a TPU v4i serving Llama-2-7B through two bucket sets, printing
# the per-bucket tables and the static-shape tax against the varlen ideal.
source "$(dirname "$0")/common.sh"
ensure_packages "${DEBIAN_PACKAGES[@]}"
build
cd "$ROOT"
"$SYSTOLIC" pack -c configs/tpu-v4i.yaml -m traces/models/llama2-7b.yaml \
  --requests traces/requests/azure-llm-2023/AzureLLMInferenceTrace_code.csv \
  --buckets traces/buckets/llama2-4k.yaml --buckets traces/buckets/llama2-pow2.yaml \
  --policy ffd --window 50 --overflow split -o out/demo
echo "report: out/demo/report.json"
