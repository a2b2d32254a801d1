#!/usr/bin/env bash
# Every malformed input of tests/conformance/malformed/ driven through the
# command line (issue 4, "Bad input"): `taskprof swimlane` and
# `taskprof sched-overhead` must exit non-zero with exactly one stderr line
# that names the file and the key listed for it in malformed/README.md, and
# must not write a trace.
#
#   records_*   taskprof swimlane FILE              taskprof sched-overhead FILE --deps-json A/deps.json
#   deps_*      taskprof swimlane A/records --deps-json FILE
#                                                   taskprof sched-overhead A/records --deps-json FILE
#   name_map_*  taskprof swimlane A/records --func-names FILE
#
# Usage: test_malformed_cli.sh TASKPROF_BINARY
set -uo pipefail

bin=${1:?usage: $0 TASKPROF_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
mal=$here/malformed
fixA=$here/fixtures/swimlane-probe/A_level4_full
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$fixA"/l2_swimlane_records.json "$fixA"/deps.json "$work"/

fails=0
checked=0

# check NAME KEY EXPECT_PATH -- COMMAND...: non-zero exit, one stderr line
# holding "Error: ", EXPECT_PATH and KEY, no output file.
check() {
    local name=$1 key=$2 path=$3
    shift 4
    rm -f "$work/out.json"
    "$@" >"$work/stdout" 2>"$work/stderr"
    local rc=$?
    local nl
    nl=$(wc -l <"$work/stderr")
    local err
    err=$(cat "$work/stderr")
    checked=$((checked + 1))
    if [[ $rc -eq 0 ]]; then
        echo "FAIL $name: exit 0 (expected non-zero): $*"
        fails=$((fails + 1))
    elif [[ $nl -ne 1 ]]; then
        echo "FAIL $name: $nl stderr lines (expected 1): $err"
        fails=$((fails + 1))
    elif [[ $err != Error:* || $err != *"$path"* || $err != *"$key"* ]]; then
        echo "FAIL $name: stderr does not name the file and key '$key': $err"
        fails=$((fails + 1))
    elif [[ -e $work/out.json ]]; then
        echo "FAIL $name: an output file was written"
        fails=$((fails + 1))
    else
        echo "ok   $name (exit $rc): $err"
    fi
}

# "- `file`: what; key: `key`" lines of the README.
n_listed=0
while IFS= read -r line; do
    [[ $line =~ ^-\ \`([^\`]+)\`:.*key:\ \`([^\`]+)\`$ ]] || continue
    file=${BASH_REMATCH[1]}
    key=${BASH_REMATCH[2]}
    f=$mal/$file
    n_listed=$((n_listed + 1))
    if [[ ! -f $f ]]; then
        echo "FAIL $file: listed in README.md but missing"
        fails=$((fails + 1))
        continue
    fi
    case $file in
    records_*)
        check "swimlane $file" "$key" "$f" -- "$bin" swimlane "$f" -o "$work/out.json"
        check "sched-overhead $file" "$key" "$f" -- \
            "$bin" sched-overhead "$f" --deps-json "$work/deps.json"
        ;;
    deps_*)
        check "swimlane --deps-json $file" "$key" "$f" -- \
            "$bin" swimlane "$work/l2_swimlane_records.json" --deps-json "$f" -o "$work/out.json"
        check "sched-overhead --deps-json $file" "$key" "$f" -- \
            "$bin" sched-overhead "$work/l2_swimlane_records.json" --deps-json "$f"
        ;;
    name_map_*)
        check "swimlane --func-names $file" "$key" "$f" -- \
            "$bin" swimlane "$work/l2_swimlane_records.json" --func-names "$f" \
            -o "$work/out.json"
        ;;
    *)
        echo "FAIL $file: unknown prefix"
        fails=$((fails + 1))
        ;;
    esac
done <"$mal/README.md"

# A named side file that does not exist is an error too (a missing sibling
# deps.json only warns: fixture B).
check "swimlane --deps-json missing" "deps.json not found" "$work/nope/deps.json" -- \
    "$bin" swimlane "$work/l2_swimlane_records.json" --deps-json "$work/nope/deps.json" \
    -o "$work/out.json"
check "swimlane --func-names missing" "Func names JSON not found" "$work/nope.json" -- \
    "$bin" swimlane "$work/l2_swimlane_records.json" --func-names "$work/nope.json" \
    -o "$work/out.json"

n_files=$(find "$mal" -type f ! -name README.md | wc -l)
if [[ $n_listed -ne $n_files ]]; then
    echo "FAIL README.md lists $n_listed files, the folder holds $n_files"
    fails=$((fails + 1))
fi

echo "malformed inputs: $n_listed files, $checked commands checked, $fails failed"
[[ $fails -eq 0 ]]
