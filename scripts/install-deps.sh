#!/usr/bin/env bash
# Install the Debian packages taskprof needs to build and test.
#
# Usage: scripts/install-deps.sh [--check]
#   (no flag)  install whatever is missing; does nothing when all are present
#   --check    only report; exit 1 when a package is missing, 0 otherwise
#
# Idempotent: packages are checked with dpkg-query first, so apt-get runs only
# when something is actually missing (CI and `make test` call this every time).
set -euo pipefail

PACKAGES=(
    cmake
    ninja-build
    gcc
    make
    pkg-config
    libcmocka-dev
    libjansson-dev
    g++
    libyajl-dev
    libdouble-conversion-dev
    libelf-dev
    clang
    libclang-rt-14-dev
    python3
)

check_only=0
case "${1:-}" in
    "") ;;
    --check) check_only=1 ;;
    -h|--help)
        sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
        exit 0 ;;
    *)
        echo "install-deps.sh: unknown argument '$1' (expected --check)" >&2
        exit 2 ;;
esac

missing=()
for pkg in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    if [[ "$status" != "install ok installed" ]]; then
        missing+=("$pkg")
    fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "install-deps.sh: all dependencies present"
    exit 0
fi

echo "install-deps.sh: missing: ${missing[*]}"
if [[ $check_only -eq 1 ]]; then
    exit 1
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
    SUDO=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update
"${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
echo "install-deps.sh: installed ${missing[*]}"
