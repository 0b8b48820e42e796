#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: the C++ suite (ctest), pytest, then the
# sanitizer step (scripts/check.sh: the CLI and the C++ unit tests built with ASan + UBSan in
# build-asan/, the readers' tests, the shipped examples and the bad-input corpus under them;
# docs/reliability.md, "Sanitizers"). SYSTOLIC_SANITIZERS=0 skips that step (it is the one that
# needs clang and a second build: ~22 CPU-minutes cold, ~11 minutes on 2 cores).
source "$(dirname "$0")/common.sh"
ensure_packages "${DEBIAN_PACKAGES[@]}"
build
cd "$BUILD_DIR"
ctest --output-on-failure -j "$JOBS"
cd "$ROOT"
export SYSTOLIC_BUILD="$BUILD_DIR"
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/py
if [ "${SYSTOLIC_SANITIZERS:-1}" != 0 ]; then
  "$ROOT/scripts/check.sh"
fi
