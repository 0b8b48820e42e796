#!/usr/bin/env bash
# Sanitizers (docs/reliability.md, "Sanitizers"), the last step of scripts/test.sh. Builds the
# CLI and the readers' C++ tests with AddressSanitizer + UndefinedBehaviorSanitizer in the
# instrumented tree (fuzz/build.sh: build-asan, clang -O1, through ccache), then runs
#   * the C++ tests of the readers, budgets, traces and configs (the sanitized_tests binary,
#     tests/CMakeLists.txt), each case in its own process (ctest runs one Catch2 case per process);
#   * a set of CLI runs: the shipped examples on small shapes, each checked for exit 0, and the
#     bad-input corpus (scripts/bad_inputs.py --sanitized), each checked for exit 2;
#   * every fuzz harness for CHECK_FUZZ_SECONDS seconds (default 2: the suite's short bounded
#     run; the long run is fuzz/run.sh READER 600, docs/reliability.md) on its seeds, $JOBS at
#     a time (fuzz/run.sh). A finding fails the step and prints the harness's log.
# Any sanitizer report fails the script: ASan halts (halt_on_error), UBSan too
# (-fno-sanitize-recover=undefined), both exit 99, and the CLI runs grep stderr for a report.
#
# SystemC runs each thread process on its own coroutine stack (QuickThreads); when a process
# switches stacks, ASan's no-return handling sees a stack pointer outside the thread's stack
# and prints "ASan is ignoring requested __asan_handle_no_return" (SystemC 2.3.4 is not built
# with ASan, so it cannot announce the switch with __sanitizer_start_switch_fiber). That
# warning is expected and not a failure; detect_stack_use_after_return stays off for the same
# reason (fake frames do not follow a switched stack), and detect_leaks is off because SystemC
# never frees its kernel singletons. The stale stack poison a switch can leave (the false
# positive of google/sanitizers#189) is why the C++ set is the readers' and budgets', whose
# SystemC runs are short, and not every case.
source "$(dirname "$0")/common.sh"
ensure_packages clang libclang-rt-14-dev python3-dev
ASAN_DIR="${ASAN_DIR:-$ROOT/build-asan}"
export ASAN_DIR
"$ROOT/fuzz/build.sh" systolic sanitized_tests fuzz_readers fuzz_sweep_spec

export ASAN_OPTIONS="detect_leaks=0:detect_stack_use_after_return=0:halt_on_error=1:abort_on_error=0:exitcode=99"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=99"
SAN="$ASAN_DIR/systolic"

cd "$ASAN_DIR"
ctest -j "$JOBS" --output-on-failure -R '^sanitized[.]'
cd "$ROOT"

# The shipped examples on small shapes, one process each: every reader, the compiler, both MXU
# models, the memory system, a 2-chip system with its ICI, a trace round trip and the serving
# replay. A report on stderr fails even when the exit code is 0.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
san_run() {
  if ! "$SAN" "$@" -o "$work/o" -q 2>"$work/err" >/dev/null || grep -q "runtime error:\|Sanitizer" "$work/err"; then
    echo "check.sh: systolic $* failed under the sanitizers:" >&2
    cat "$work/err" >&2
    exit 1
  fi
}
tiny="$ROOT/configs/tiny-4x4.yaml"
san_run run -c "$tiny" -w "$ROOT/traces/gemms/example.yaml"
san_run run -c "$tiny" -w "$ROOT/traces/gemms/example.yaml" --set mxu.model=fast --set memory.ideal=true
san_run run -c "$tiny" -w "$ROOT/tests/py/data/tiny-lm.yaml" --bucket 1x8
san_run run -c "$tiny" -w "$ROOT/tests/py/data/tiny-lm.yaml" --bucket 2x4 --phase decode
printf 'Layer, M, N, K,\nL0, 16, 8, 12,\nL1, 5, 7, 3,\n' >"$work/gemms.csv"
san_run run -c "$tiny" -w "$work/gemms.csv" --set mxu.model=fast
san_run run -c "$tiny" -w "$ROOT/tests/py/data/tiny-lm.yaml" --bucket 1x8 --set ici.topology=ring --set ici.dims=2 --tp 2
"$SAN" compile -c "$tiny" -w "$ROOT/traces/gemms/example.yaml" -o "$work/t.trace" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
san_run run -c "$tiny" -t "$work/t.trace"
san_run pack -c "$tiny" -m "$ROOT/tests/py/data/tiny-lm.yaml" --requests "$ROOT/tests/py/data/tiny-requests.csv" \
  --buckets "$ROOT/tests/py/data/tiny-buckets.yaml"

# Sweep specs are read by the Python package, which this tree does not build (SYSTOLIC_PYTHON=OFF);
# their reader has its own harness (fuzz/sweep_spec_fuzzer.cpp).
/usr/bin/python3 "$ROOT/scripts/bad_inputs.py" --systolic "$SAN" --sanitized --quiet --skip "sweep spec" -j "$JOBS"

fuzz_one() {
  if ! FUZZ_BUILT=1 "$ROOT/fuzz/run.sh" "$1" "$2" >"$3/fuzz-$1.log" 2>&1; then
    echo "check.sh: the $1 fuzzer failed (a finding is in $ASAN_DIR/findings/$1/):" >&2
    tail -40 "$3/fuzz-$1.log" >&2
    return 1
  fi
}
export -f fuzz_one
export ROOT
if [ "${CHECK_FUZZ_SECONDS:-2}" -gt 0 ]; then
  printf '%s\n' config gemm_list topology model trace request_log bucket_set sweep_spec |
    xargs -P "$JOBS" -I{} bash -c 'fuzz_one "$@"' _ {} "${CHECK_FUZZ_SECONDS:-2}" "$work"
  echo "8 fuzz harnesses, ${CHECK_FUZZ_SECONDS:-2} s each on their seeds: no finding"
fi
