#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: the C++ suite (ctest) and pytest.
source "$(dirname "$0")/common.sh"
ensure_packages "${DEBIAN_PACKAGES[@]}"
build
cd "$BUILD_DIR"
ctest --output-on-failure -j "$JOBS"
cd "$ROOT"
export SYSTOLIC_BUILD="$BUILD_DIR"
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/py
