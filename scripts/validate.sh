#!/usr/bin/env bash
# Holds the simulator against published hardware (docs/validation.md): the TPU v1 apps of
# Jouppi et al. (ISCA 2017), the roofline on every preset (with Llama prefill and decode), and
# the Cloud TPU v5e serving figures. Builds first if needed. Every run uses the real memory
# system. Usage: scripts/validate.sh [--json FILE] [--only tpu-v1|roofline|serving]
set -euo pipefail
source "$(dirname "$0")/common.sh"
[ -x "$SYSTOLIC" ] || build
SYSTOLIC_BUILD="$BUILD_DIR" exec /usr/bin/python3 "$ROOT/scripts/validate.py" --full "$@"
