#!/usr/bin/env bash
# Run the libFuzzer targets of an already built fuzz tree, one after the
# other, each for a fixed time; fail on any crash, leak, timeout or
# sanitizer report.
#
#   scripts/run-fuzz.sh BUILD_DIR [SECONDS]
#
# BUILD_DIR was configured with -DTASKPROF_FUZZ=ON (clang, ideally with
# -DTASKPROF_SANITIZE=address; `make fuzz` does all of it) and holds
# BUILD_DIR/fuzz/fuzz_*. SECONDS per target, default 60. Seeds come from
# tests/fuzz/corpus/<target>/ (with the libFuzzer dictionary
# tests/fuzz/corpus/<target>.dict) and are never written to: new inputs go to a
# scratch corpus under BUILD_DIR/fuzz-work/, crash inputs to
# BUILD_DIR/fuzz-artifacts/. Builds nothing.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
    echo "usage: $0 BUILD_DIR [SECONDS]" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
secs=${2:-60}
root=$(cd "$(dirname "$0")/.." && pwd)

# target  seed folder  max input length (bytes; the seeds are up to ~6 KB)
targets=(
    "fuzz_records records 16384"
    "fuzz_deps deps 16384"
    "fuzz_name_map name_map 4096"
)

mkdir -p "$build/fuzz-artifacts"
failed=0
for t in "${targets[@]}"; do
    read -r name seeds max_len <<<"$t"
    bin="$build/fuzz/$name"
    if [[ ! -x "$bin" ]]; then
        echo "run-fuzz: $bin not found (configure with -DTASKPROF_FUZZ=ON and build)" >&2
        exit 1
    fi
    work="$build/fuzz-work/$name"
    mkdir -p "$work"
    log="$build/fuzz-artifacts/$name.log"
    dict=()
    if [[ -f "$root/tests/fuzz/corpus/$seeds.dict" ]]; then
        dict=(-dict="$root/tests/fuzz/corpus/$seeds.dict")
    fi
    echo "run-fuzz: $name for ${secs}s (seeds tests/fuzz/corpus/$seeds, -max_len=$max_len)"
    if "$bin" "$work" "$root/tests/fuzz/corpus/$seeds" \
        -max_total_time="$secs" -max_len="$max_len" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" \
        -artifact_prefix="$build/fuzz-artifacts/$name-" >"$log" 2>&1; then
        echo "run-fuzz: $name ok ($(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') runs)"
    else
        echo "run-fuzz: $name FAILED, log: $log" >&2
        tail -n 40 "$log" >&2
        failed=1
    fi
done
exit $failed
