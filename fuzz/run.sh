#!/usr/bin/env bash
# Fuzz one reader (docs/reliability.md, "Fuzzing"):
#   fuzz/run.sh READER [SECONDS]     READER: config gemm_list topology model trace request_log bucket_set
# Builds the harnesses with clang in build-fuzz (-DSYSTOLIC_FUZZ=ON) if needed, seeds a corpus
# from the shipped files of that kind, and runs libFuzzer for SECONDS (default 10; the long run
# is 600). Findings land in build-fuzz/findings/READER/ (crash-*, timeout-*, oom-*): each one
# becomes a regression case in tests/unit/test_strict_input.cpp.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
READER="${1:?usage: fuzz/run.sh READER [SECONDS]}"
SECONDS_TO_RUN="${2:-10}"
FUZZ_DIR="${FUZZ_DIR:-$ROOT/build-fuzz}"
export SC_COPYRIGHT_MESSAGE=DISABLE CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}" CCACHE_NOHASHDIR=1
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$ROOT" -B "$FUZZ_DIR" -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_COMPILER=clang++ \
  -DSYSTOLIC_FUZZ=ON -DSYSTOLIC_PYTHON=OFF "${launcher[@]}" >/dev/null
cmake --build "$FUZZ_DIR" -j "${JOBS:-2}" --target "fuzz_$READER"

seeds="$FUZZ_DIR/seeds/$READER"
rm -rf "$seeds" && mkdir -p "$seeds" "$FUZZ_DIR/corpus/$READER" "$FUZZ_DIR/findings/$READER"
case "$READER" in
  config) cp "$ROOT"/configs/*.yaml "$ROOT"/tests/data/config/*.yaml "$seeds"/ ;;
  gemm_list) cp "$ROOT"/traces/gemms/*.yaml "$ROOT"/tests/data/workload_*.yaml "$seeds"/ ;;
  topology) find "$ROOT/traces/topologies" "$ROOT/tests/data" -name '*.csv' -size -64k -exec cp {} "$seeds"/ \; ;;
  model) cp "$ROOT"/traces/models/*.yaml "$ROOT"/tests/py/data/tiny-lm.yaml "$seeds"/ ;;
  trace)  # a compiled trace of the example GEMMs for the harness's chip, configs/tiny-4x4.yaml
    "$ROOT/build/systolic" compile -c "$ROOT/configs/tiny-4x4.yaml" \
      -w "$ROOT/traces/gemms/example.yaml" -o "$seeds/example.trace" ;;
  request_log) cp "$ROOT"/tests/data/packing/*.csv "$ROOT"/tests/py/data/tiny-requests.csv "$seeds"/ ;;
  bucket_set) cp "$ROOT"/traces/buckets/*.yaml "$ROOT"/tests/data/packing/*.yaml "$seeds"/ ;;
  *) echo "unknown reader '$READER'" >&2; exit 2 ;;
esac
export ASAN_OPTIONS="detect_leaks=0:detect_stack_use_after_return=0"
"$FUZZ_DIR/fuzz/fuzz_$READER" -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$FUZZ_DIR/findings/$READER/" "$FUZZ_DIR/corpus/$READER" "$seeds"
