#!/usr/bin/env bash
# Tensor-parallel crossover of an MLP layer (docs/interconnect.md): builds, then prints Y,
# compute time, communication and exposed communication for Y = 1..32 chips.
source "$(dirname "$0")/common.sh"
ensure_packages "${DEBIAN_PACKAGES[@]}"
build >/dev/null
/usr/bin/python3 "$ROOT/scripts/tp_crossover.py" --systolic "$SYSTOLIC" "$@"
