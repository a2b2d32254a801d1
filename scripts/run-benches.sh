#!/usr/bin/env bash
# Run every bench program of a build, one after the other.
#
# Usage: scripts/run-benches.sh [BUILD_DIR]   (default: build)
# Runs BUILD_DIR/bench/bench_* in name order, prints their output, and exits
# non-zero when any of them failed (after running all of them).
set -uo pipefail

build_dir=${1:-build}
shopt -s nullglob
benches=("$build_dir"/bench/bench_*)

if [[ ${#benches[@]} -eq 0 ]]; then
    echo "run-benches.sh: no benches in $build_dir/bench"
    exit 0
fi

failed=()
ran=0
for b in "${benches[@]}"; do
    [[ -x "$b" && -f "$b" ]] || continue
    ran=$((ran + 1))
    echo "== $(basename "$b")"
    if ! "$b"; then
        echo "run-benches.sh: $(basename "$b") FAILED" >&2
        failed+=("$(basename "$b")")
    fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
    echo "run-benches.sh: ${#failed[@]} bench(es) failed: ${failed[*]}" >&2
    exit 1
fi
echo "run-benches.sh: ${ran} bench(es) ran"
