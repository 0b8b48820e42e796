#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: the C++ suite (ctest), pytest, then the
# sanitizer step (scripts/check.sh: the CLI and the readers' C++ tests built with ASan + UBSan in
# build-asan/, run with the shipped examples and the bad-input corpus;
# docs/reliability.md, "Sanitizers"). SYSTOLIC_SANITIZERS=0 skips that step (it is the one that
# needs clang and a second build: ~5 of the suite's 11-12 minutes cold on 2 cores,
# docs/reliability.md, "Suite time").
source "$(dirname "$0")/common.sh"
ensure_packages "${DEBIAN_PACKAGES[@]}"
build
cd "$BUILD_DIR"
ctest --output-on-failure -j "$JOBS"
cd "$ROOT"
export SYSTOLIC_BUILD="$BUILD_DIR"
# The sanitizer step runs the bad-input corpus on its instrumented build (all but the sweep spec,
# which is Python's): pytest's corpus test then runs only that one (tests/py/test_reliability.py).
if [ "${SYSTOLIC_SANITIZERS:-1}" != 0 ]; then export SYSTOLIC_CORPUS_SANITIZED=1; fi
# pytest-xdist: one worker per core (the tests mostly wait on a systolic process each).
/usr/bin/python3 -m pytest -q -p no:cacheprovider -n "$JOBS" tests/py
if [ "${SYSTOLIC_SANITIZERS:-1}" != 0 ]; then
  "$ROOT/scripts/check.sh"
fi
