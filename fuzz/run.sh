#!/usr/bin/env bash
# Fuzz one reader (docs/reliability.md, "Fuzzing"):
#   fuzz/run.sh READER [SECONDS]
#   READER: config gemm_list topology model trace request_log bucket_set sweep_spec
# Builds the harness in the instrumented tree (fuzz/build.sh, build-asan) if needed, seeds a
# corpus from the shipped files of that kind, and runs libFuzzer for SECONDS (default 10; the
# long run is 600). Findings land in build-asan/findings/READER/ (crash-*, timeout-*, oom-*):
# each one becomes a regression case in tests/unit/test_strict_input.cpp (or, for a sweep spec,
# tests/py/test_reliability.py). The trace seeds and the sweep harness's Python package come
# from the normal build (build/, scripts/test.sh builds it).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
READER="${1:?usage: fuzz/run.sh READER [SECONDS]}"
SECONDS_TO_RUN="${2:-10}"
ASAN_DIR="${ASAN_DIR:-$ROOT/build-asan}"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
export ASAN_DIR SC_COPYRIGHT_MESSAGE=DISABLE
binary=fuzz_readers
[ "$READER" = sweep_spec ] && binary=fuzz_sweep_spec
# scripts/check.sh builds every harness once, then runs them side by side (FUZZ_BUILT=1).
[ "${FUZZ_BUILT:-0}" = 1 ] || "$ROOT/fuzz/build.sh" "$binary" >/dev/null

seeds="$ASAN_DIR/seeds/$READER"
rm -rf "$seeds" && mkdir -p "$seeds" "$ASAN_DIR/corpus/$READER" "$ASAN_DIR/findings/$READER"
case "$READER" in
  config) cp "$ROOT"/configs/*.yaml "$ROOT"/tests/data/config/*.yaml "$seeds"/ ;;
  gemm_list) cp "$ROOT"/traces/gemms/*.yaml "$ROOT"/tests/data/workload_*.yaml "$seeds"/ ;;
  topology) find "$ROOT/traces/topologies" "$ROOT/tests/data" -name '*.csv' -size -64k -exec cp {} "$seeds"/ \; ;;
  model) cp "$ROOT"/traces/models/*.yaml "$ROOT"/tests/py/data/tiny-lm.yaml "$seeds"/ ;;
  trace)  # a compiled trace of the example GEMMs for the harness's chip, configs/tiny-4x4.yaml
    "$BUILD_DIR/systolic" compile -c "$ROOT/configs/tiny-4x4.yaml" \
      -w "$ROOT/traces/gemms/example.yaml" -o "$seeds/example.trace" ;;
  request_log) cp "$ROOT"/tests/data/packing/*.csv "$ROOT"/tests/py/data/tiny-requests.csv "$seeds"/ ;;
  bucket_set) cp "$ROOT"/traces/buckets/*.yaml "$ROOT"/tests/data/packing/*.yaml "$seeds"/ ;;
  sweep_spec) cp "$ROOT"/traces/sweeps/*.yaml "$seeds"/
    export PYTHONPATH="$BUILD_DIR/python${PYTHONPATH:+:$PYTHONPATH}" ;;
  *) echo "unknown reader '$READER'" >&2; exit 2 ;;
esac
export SYSTOLIC_FUZZ_READER="$READER"
export ASAN_OPTIONS="detect_leaks=0:detect_stack_use_after_return=0"
"$ASAN_DIR/fuzz/$binary" -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$ASAN_DIR/findings/$READER/" "$ASAN_DIR/corpus/$READER" "$seeds"
