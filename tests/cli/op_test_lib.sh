# Shared helpers of the `taskprof op` integration tests (tests/cli/test_op_*.sh;
# spec/opprof.md §4.14). Sourced, not run: `. "$(dirname "$0")/op_test_lib.sh" "$1"`.
#
# Sets TP (taskprof binary, absolute), BUILD (its folder), APPS
# (BUILD/tests/op_apps), EX (BUILD/examples) and WORK (a scratch folder
# removed at exit); pins the environment the tests depend on. A missing
# binary, application or the injector is a failure, never a skip.
# The generic helpers of cli_test_lib.sh (wait_until, gone, ...) come with
# it; bad, has and has_line are this file's or the test's own.
# shellcheck disable=SC2034 # the variables are the sourcing test's
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" || exit 1
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
	echo "FAIL: usage: $0 TASKPROF_BINARY (got '${1:-}')"
	exit 1
fi
TP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
BUILD=$(dirname "$TP")
APPS=$BUILD/tests/op_apps
EX=$BUILD/examples
WORK=$(mktemp -d /tmp/tp_op_test_XXXXXX)
trap 'rm -rf "$WORK"' EXIT
FAILS=0
# What the tests vary themselves; a value from the caller's shell must not
# leak in. a2a3sim: the excluded timing events below are its ids.
export TASKPROF_PLATFORM=a2a3sim
unset TASKPROF_DEVICE_MEM_MB TASKPROF_SIM_STATS TASKPROF_DEBUG_NO_RESTORE OP_OUT_FILE \
	TASKPROF_CONFIG TASKPROF_PASS TASKPROF_TARGET_PID
# Each run gets this long before it counts as a hang.
OP_TIMEOUT=${OP_TIMEOUT:-90}

say() { echo "== $*"; }
ok() { echo "   ok: $*"; }
bad() {
	echo "   FAIL: $*"
	FAILS=$((FAILS + 1))
}
# show FILE: print (the start of) a file after a failure.
show() {
	echo "   ----- ${1#"$WORK"/}"
	if [ -e "$1" ]; then head -c 3000 "$1" | sed 's/^/   | /'; else echo "   | (missing)"; fi
	echo "   -----"
}
# need PATH...: every path exists, else the test fails now (no silent skip).
need() {
	local p missing=0
	for p in "$@"; do
		if [ ! -e "$p" ]; then
			echo "FAIL: missing $p (build every target: ninja -C $BUILD)"
			missing=1
		fi
	done
	[ $missing = 0 ] || exit 1
}
need "$BUILD/libtaskprof_inject.so"

# app_run NAME APP [ARGS...]: run APP unprofiled; stdout/stderr in
# $WORK/NAME.out / .err, exit code in APPRC. Variables (OP_OUT_FILE=...)
# may prefix the call.
app_run() {
	local name=$1
	shift
	timeout "$OP_TIMEOUT" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
	APPRC=$?
}

# op_run NAME [OP OPTIONS...] -- APP [ARGS...]: `taskprof op -o $WORK/NAME`;
# stdout/stderr in $WORK/NAME.out / .err, exit code in OPRC, the OPPROF_*
# folder in OPDIR ("" when none).
op_run() {
	local name=$1
	shift
	rm -rf "${WORK:?}/$name"
	mkdir -p "$WORK/$name"
	timeout "$OP_TIMEOUT" "$TP" op -o "$WORK/$name" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
	OPRC=$?
	OPDIR=$(ls -d "$WORK/$name"/OPPROF_* 2>/dev/null | head -1)
	[ $OPRC != 124 ] || bad "$name: taskprof op did not finish within ${OP_TIMEOUT}s"
}

# sim_launches ERRFILE DEVICE: kernel executions of DEVICE from the
# TASKPROF_SIM_STATS=1 line, or "none".
sim_launches() {
	local n
	n=$(sed -n "s/^taskprof-sim: device $2: \([0-9]*\) kernel launches executed.*/\1/p" "$1" |
		tail -1)
	echo "${n:-none}"
}

# kv FILE KEY: the value of KEY=... in a key=value file ("" when absent).
kv() { sed -n "s/^$2=//p" "$1" 2>/dev/null | head -1; }

# passes_of OPDIR: the planned passes (config.txt).
passes_of() { kv "$1/config.txt" passes; }

# launch_set OPDIR: "device<D>/<name>/<k> block_dim=<n>" per launch folder,
# sorted, space-separated.
launch_set() {
	local d out=""
	for d in "$1"/device*/*/*/; do
		[ -f "$d/launch.txt" ] || continue
		d=${d%/}
		out="$out${d#"$1"/} block_dim=$(kv "$d/launch.txt" block_dim)"$'\n'
	done
	printf '%s' "$out" | sort | tr '\n' ' ' | sed 's/ $//'
}

# same_bytes NAME REF GOT: cmp, reporting either way.
same_bytes() {
	if [ ! -s "$3" ]; then
		bad "$1: no output file $3"
	elif cmp -s "$2" "$3"; then
		ok "$1: output byte-identical to the unprofiled run ($(stat -c %s "$3") bytes)"
	else
		bad "$1: output differs from the unprofiled run ($(cmp "$2" "$3" 2>&1 | head -1))"
	fi
}

# finish: no sanitizer report in any run's stderr; summary line and exit
# status.
finish() {
	local f
	for f in "$WORK"/*.err; do
		[ -e "$f" ] || continue
		if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|WARNING: ThreadSanitizer|runtime error:' "$f"; then
			bad "a sanitizer reported an error in ${f#"$WORK"/}"
			grep -m3 -E 'ERROR: |WARNING: ThreadSanitizer|runtime error:' "$f" | sed 's/^/   | /'
		fi
	done
	if [ $FAILS -gt 0 ]; then
		echo "$(basename "$0"): $FAILS check(s) failed"
		exit 1
	fi
	echo "$(basename "$0"): all checks passed"
	exit 0
}

# csv_col FILE COLUMN: the values of COLUMN (by header name), one per line;
# exit status 3 when the file or the column is missing.
csv_col() {
	python3 - "$1" "$2" <<'PY'
import csv, sys
try:
    rows = list(csv.reader(open(sys.argv[1], newline="")))
except OSError:
    sys.exit(3)
if not rows or sys.argv[2] not in rows[0]:
    sys.exit(3)
i = rows[0].index(sys.argv[2])
for r in rows[1:]:
    print(r[i] if i < len(r) else "")
PY
}

# check_launch_dir LABEL DIR PASSES WARMUP: a kernel-replay launch folder
# with every planned pass measured, replay-consistent.
check_launch_dir() {
	local label=$1 d=$2 p=$3 w=$4 i missing="" hashes
	if [ ! -f "$d/launch.txt" ]; then
		bad "$label: no launch folder ${d#"$WORK"/}"
		ls -R "${d%/*/*}" 2>/dev/null | head -20 | sed 's/^/   | /'
		return
	fi
	[ "$(kv "$d/launch.txt" status)" = ok ] && [ "$(kv "$d/launch.txt" passes_done)" = "$p" ] &&
		[ "$(kv "$d/launch.txt" warm_up)" = "$w" ] ||
		{ bad "$label: launch.txt: want status=ok passes_done=$p warm_up=$w"; show "$d/launch.txt"; }
	for ((i = 0; i < p; i++)); do
		[ -s "$d/dump/pass_$i.bin" ] || missing="$missing pass_$i.bin"
	done
	[ -z "$missing" ] || bad "$label: missing or empty dump files:$missing"
	hashes=$(sed -n 's/.*output_hash=\([0-9a-f]*\).*/\1/p' "$d/dump/replay.txt" 2>/dev/null |
		sort -u | wc -l)
	if [ "$(grep -c '^pass=' "$d/dump/replay.txt" 2>/dev/null)" = "$p" ] && [ "$hashes" = 1 ]; then
		ok "$label: $p measured passes, one output hash"
	else
		bad "$label: dump/replay.txt: want $p pass lines with one output hash"
		show "$d/dump/replay.txt"
	fi
	if [ "$(csv_col "$d/OpBasicInfo.csv" "Replay Consistent")" = Yes ]; then
		ok "$label: OpBasicInfo.csv says Replay Consistent = Yes"
	else
		bad "$label: OpBasicInfo.csv: want Replay Consistent = Yes"
		show "$d/OpBasicInfo.csv"
	fi
}
