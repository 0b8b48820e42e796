#!/usr/bin/env bash
# Builds, then measures speed and writes the table into docs/performance.md.
# Timings are measured here, never asserted in tests.
source "$(dirname "$0")/common.sh"
ensure_packages "${DEBIAN_PACKAGES[@]}"
build
SYSTOLIC_BIN="$SYSTOLIC" /usr/bin/python3 "$ROOT/scripts/bench.py"
