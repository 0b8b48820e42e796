#!/usr/bin/env bash
# Builds TARGETS in the instrumented tree (docs/reliability.md, "Sanitizers" and "Fuzzing"):
#   fuzz/build.sh TARGET...        e.g. systolic sanitized_tests fuzz_readers fuzz_sweep_spec
# One tree, $ASAN_DIR (default build-asan), serves both the sanitizer step of the suite
# (scripts/check.sh) and the fuzzers (fuzz/run.sh): clang -O1, AddressSanitizer +
# UndefinedBehaviorSanitizer (any report is fatal: -fno-sanitize-recover) and libFuzzer's
# coverage (-fsanitize=fuzzer-no-link, -DSYSTOLIC_FUZZ=ON), through ccache when it is installed.
# Why clang at -O1 (measured on sim/config/config.cpp, CPU seconds): g++ -O3 (the normal build)
# 9.9, g++ -O1 ASan+UBSan 18.9, clang++ -O1 ASan+UBSan 11.9, clang++ -O0 6.8; -O1 keeps the
# simulated tests about as fast as they need to be.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ASAN_DIR="${ASAN_DIR:-$ROOT/build-asan}"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}" CCACHE_NOHASHDIR=1
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$ROOT" -B "$ASAN_DIR" -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="-O1 -fno-omit-frame-pointer" -DCMAKE_UNITY_BUILD=ON -DSYSTOLIC_FUZZ=ON -DSYSTOLIC_PYTHON=OFF \
  "${launcher[@]}" >/dev/null
cmake --build "$ASAN_DIR" -j "${JOBS:-$(nproc)}" --target "$@"
