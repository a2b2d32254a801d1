#!/usr/bin/env bash
# CLI test of `taskprof swimlane` and `taskprof sched-overhead` under the
# process limits a user may set (adversarial findings F3, F4):
#   - a small stack limit: glibc gave the converter's threads that limit
#     as their stack; the deps.json reader overflowed it at 28-56 KiB and,
#     with no alternate signal stack, died without a word (exit 139, empty
#     stderr). Every command now refuses a limit below 128 KiB at its
#     start (tests/cli/test_cli_badcase.sh), and the threads have stacks
#     of their own: at 128 KiB the trace is the same as without a limit.
#   - a thread limit (ulimit -u 1, as a user other than root, which the
#     limit does not bind): the trace writer's thread could not start and
#     the conversion failed with a bare "Error: ". Now the writer writes
#     on the main thread and the trace is the same.
#   - 100,000 nested arrays in deps.json or the records under a 128 KiB
#     stack (the least taskprof starts with): a one-line error (or a conversion that skips them), never a
#     crash.
# Every limited command runs with an empty environment, so that the main
# thread's share of the stack limit does not depend on the caller's.
# usage: test_cli_swimlane_limits.sh TASKPROF_BINARY
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" || exit 1
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
fixA=$here/../conformance/fixtures/swimlane-probe/A_level4_full
cli_init /tmp/tp_cli_swlim_XXXXXX
T=60 # seconds: anything slower is a hang (the machine may be loaded)

a=$root/a
mkdir -p "$a"
cp "$fixA"/l2_swimlane_records.json "$fixA"/deps.json "$fixA"/name_map_TestProbe_case1.json "$a"/
rec=$a/l2_swimlane_records.json
timeout $T "$bin" swimlane "$rec" -o "$root/ref.json" >/dev/null 2>"$root/ref.err" ||
	bad "plain conversion: $(cat "$root/ref.err")"
timeout $T "$bin" sched-overhead "$a" >"$root/ref_so.txt" 2>"$root/ref_so.err" ||
	bad "plain sched-overhead: $(cat "$root/ref_so.err")"

# limited LIMIT CMD...: CMD under `ulimit LIMIT` (e.g. "-s 48") with an
# empty environment (but PATH and the sanitizer's options), stdout into
# $root/out, stderr into $root/err; returns CMD's exit code.
limited() {
	local lim=$1
	shift
	timeout $T env -i PATH="$PATH" ${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"} \
		bash -c 'ulimit '"$lim"' || exit 99; exec "$@"' limited "$@" \
		>"$root/out" 2>"$root/err"
}

# ---- F3: a small stack limit -------------------------------------------------
# The least taskprof starts with; under a sanitizer its runtime's own
# stack use is larger, so only the other checks run there.
if [[ -n ${TASKPROF_TEST_SANITIZE:-} ]]; then
	echo "skip: ulimit -s 128 under ${TASKPROF_TEST_SANITIZE} (its runtime's own stack use)"
else
	for kib in 128; do
		rm -f "$root/s.json"
		limited "-s $kib" "$bin" swimlane "$rec" -o "$root/s.json"
		code=$?
		[[ $code -eq 0 ]] ||
			bad "swimlane, ulimit -s $kib: exit $code, expected 0 (139 = SIGSEGV), stderr '$(cat "$root/err")'"
		cmp -s "$root/err" "$root/ref.err" ||
			bad "swimlane, ulimit -s $kib: stderr '$(cat "$root/err")', expected '$(cat "$root/ref.err")'"
		cmp -s "$root/s.json" "$root/ref.json" ||
			bad "swimlane, ulimit -s $kib: the trace differs from the one without the limit"
		limited "-s $kib" "$bin" sched-overhead "$a"
		code=$?
		[[ $code -eq 0 ]] && cmp -s "$root/out" "$root/ref_so.txt" ||
			bad "sched-overhead, ulimit -s $kib: exit $code, stderr '$(cat "$root/err")'"
	done
	no_temps "$root" 1
fi

# ---- F4: a thread limit --------------------------------------------------------
# RLIMIT_NPROC counts the processes and threads of the real user and does
# not bind root: as root the command runs as the user nobody (uid 65534),
# who then has this one process, so that no thread can start. Under TSan
# the runtime's own threads need the limit; the unit tests
# (test_tools_swimlane_trace: test_convert_no_threads) cover it there.
as_other=()
[[ $EUID -eq 0 ]] && as_other=(setpriv --reuid=65534 --regid=65534 --clear-groups)
u=$root/u
mkdir -p "$u"
chmod 755 "$root" "$a"
chmod 777 "$u"
if [[ ${TASKPROF_TEST_SANITIZE:-} == thread ]]; then
	echo "skip: ulimit -u 1 under ThreadSanitizer (its own threads)"
elif ! "${as_other[@]}" "$bin" --version >/dev/null 2>&1; then
	echo "skip: ulimit -u 1: cannot run $bin as another user (${as_other[*]:-as $(id -un)})"
else
	# LeakSanitizer's check at exit runs on a thread of its own.
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		limited "-u 1" "${as_other[@]}" "$bin" swimlane "$rec" -o "$u/t.json"
	code=$?
	[[ $code -eq 0 ]] ||
		bad "swimlane, ulimit -u 1: exit $code, expected 0, stderr '$(cat "$root/err")'"
	cmp -s "$root/err" "$root/ref.err" ||
		bad "swimlane, ulimit -u 1: stderr '$(cat "$root/err")', expected '$(cat "$root/ref.err")'"
	cmp -s "$u/t.json" "$root/ref.json" ||
		bad "swimlane, ulimit -u 1: the trace differs from the one without the limit"
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		limited "-u 1" "${as_other[@]}" "$bin" sched-overhead "$a"
	code=$?
	[[ $code -eq 0 ]] && cmp -s "$root/out" "$root/ref_so.txt" ||
		bad "sched-overhead, ulimit -u 1: exit $code, stderr '$(cat "$root/err")'"
	no_temps "$u" 1
fi

# ---- 100,000 nested arrays, ulimit -s 128 --------------------------------------
n=$root/n
mkdir -p "$n"
cp "$fixA"/l2_swimlane_records.json "$fixA"/name_map_TestProbe_case1.json "$n"/
open=$(head -c 100000 </dev/zero | tr '\0' '[')
close=$(head -c 100000 </dev/zero | tr '\0' ']')
nrec=$n/l2_swimlane_records.json

# nested NAME CODE LINE CMD...: CMD under ulimit -s 128 exits CODE with
# the one stderr line LINE ("" : any stderr, but no crash line)
nested() {
	local name=$1 want=$2 line=$3
	shift 3
	limited "-s 128" "$@"
	local code=$?
	[[ $code -eq $want ]] || bad "$name: exit $code, expected $want, stderr '$(head -c 600 "$root/err")'"
	if [[ -n $line ]]; then
		only_line "$root/err" "$line"
	elif grep -q crashed "$root/err"; then
		bad "$name: $(cat "$root/err")"
	fi
}

printf '%s%s' "$open" "$close" >"$n/deps.json"
nested "deps.json of nested arrays" 1 \
	"Error: $n/deps.json: (top level): expected a JSON object, got an array" \
	"$bin" swimlane "$nrec" -o "$n/t.json"
printf '{"tasks": %s%s}' "$open" "$close" >"$n/deps.json"
nested "deps.json tasks of nested arrays" 1 \
	"Error: $n/deps.json: tasks[0]: expected a task object, got an array" \
	"$bin" swimlane "$nrec" -o "$n/t.json"
nested "sched-overhead, deps.json tasks of nested arrays" 1 \
	"Error: failed to read deps.json $n/deps.json: tasks[0]: expected a task object, got an array" \
	"$bin" sched-overhead "$n"
# under a key nobody reads: skipped without recursion, a conversion
printf '{"tasks": [], "edges": [], "x": %s%s}' "$open" "$close" >"$n/deps.json"
nested "deps.json with an unread key of nested arrays" 0 "" \
	"$bin" swimlane "$nrec" -o "$n/t.json"
cp "$fixA"/deps.json "$n"/
printf '%s%s' "$open" "$close" >"$nrec"
nested "records of nested arrays" 1 \
	"Error: $nrec: (top level): expected a JSON object, got an array" \
	"$bin" swimlane "$nrec" -o "$n/t.json"
printf '{"l2_swimlane_level": 4, "aicore_tasks": %s%s}' "$open" "$close" >"$nrec"
nested "records aicore_tasks of nested arrays" 1 \
	"Error: $nrec: aicore_tasks[0][0]: expected an integer, got an array" \
	"$bin" swimlane "$nrec" -o "$n/t.json"
no_temps "$n" 1

cli_finish "swimlane under process limits: all checks passed"
