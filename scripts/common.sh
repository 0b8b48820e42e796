# Shared by demo.sh, test.sh and bench.sh: install what is missing, then build.
# Sourced, not run. Honours BUILD_DIR (default: build) and JOBS (default: nproc).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
JOBS="${JOBS:-$(nproc)}"
export SC_COPYRIGHT_MESSAGE=DISABLE

# Debian packages the build and the tests need. apt runs only when one is missing.
DEBIAN_PACKAGES=(
  build-essential cmake ninja-build pkg-config time
  libsystemc-dev libfmt-dev libcli11-dev libyaml-cpp-dev nlohmann-json3-dev catch2 zlib1g-dev libinih-dev libcsv-dev libhowardhinnant-date-dev
  protobuf-compiler libprotobuf-dev
  pybind11-dev python3-dev python3-pytest python3-pytest-xdist python3-numpy python3-pandas python3-matplotlib
  python3-distributed python3-yaml python3-onnx python3-tqdm python3-protobuf
  chromium gtkwave
)

ensure_packages() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "Installing missing Debian packages: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

build() {
  # The Python module must be built for Debian's interpreter, whatever python3 is on PATH.
  # A unity build (CMakeLists.txt says which files stay alone): the libraries compile in 45 % of
  # the CPU time (docs/reliability.md, "Suite time").
  # Warnings are errors here (SYSTOLIC_WERROR), on the toolchain ensure_packages installs.
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON -DSYSTOLIC_WERROR=ON \
    -DPYTHON_EXECUTABLE=/usr/bin/python3 >/dev/null
  cmake --build "$BUILD_DIR" -j "$JOBS"
}

SYSTOLIC="$BUILD_DIR/systolic"
