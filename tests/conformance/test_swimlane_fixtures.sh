#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Conformance of `taskprof swimlane` with the reference converter's fixtures
# (spec/swimlane-format.md §7.3, §7.4): for A, B and C
#   (1) the default (compact) trace equals merged_swimlane.json as a multiset
#       of events, (2) --pretty is byte-identical to it, (3) stdout and
#   (4) stderr equal the captures with <DIR> substituted (C: plus
#   taskprof's missing-arrow warning, checked word for word); (5) A with
#   --overhead -v equals merged_swimlane_overhead.json; then the malformed
#   inputs of err_inputs/ (exit codes and messages).
# Every fixture folder is copied to a temp dir first; the source tree is
# never written. $1 = the taskprof binary.
set -u
TP=${1:?usage: $0 path/to/taskprof}
HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$HERE/fixtures/swimlane-probe
CMP=$HERE/swimlane_events_equal.py
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cp -r "$FIX"/. "$WORK"/

# sub FILE DIR: the capture with <DIR> replaced by DIR
sub() { sed "s#<DIR>#$2#g" "$1"; }

# run_case NAME STDOUT_CAPTURE [extra args...]
run_case() {
	local name=$1 cap=$2
	shift 2
	local d=$WORK/$name
	local ref=$d/merged_swimlane.json.ref
	cp "$d/merged_swimlane.json" "$ref"
	rm -f "$d/merged_swimlane.json"

	# default layout: same events as the reference
	"$TP" swimlane "$d/l2_swimlane_records.json" "$@" >"$d/out.txt" 2>"$d/err.txt"
	local rc=$?
	[ $rc -eq 0 ] && pass "$name: exit 0" || fail "$name: exit $rc"
	if python3 "$CMP" "$d/merged_swimlane.json" "$ref" >"$d/cmp.txt"; then
		pass "$name: default trace $(cat "$d/cmp.txt")"
	else
		fail "$name: default trace differs"; cat "$d/cmp.txt"
	fi
	if sub "$d/$cap" "$d" | diff - "$d/out.txt" >"$d/diff.txt"; then
		pass "$name: stdout = $cap"
	else
		fail "$name: stdout differs from $cap"; head -20 "$d/diff.txt"
	fi
	# A line taskprof prints beyond the reference (extra_err, a decision
	# for taskprof): there once, and the rest equals the capture.
	cp "$d/err.txt" "$d/err_ref.txt"
	if [ -n "$extra_err" ]; then
		if [ "$(grep -cxF -- "$extra_err" "$d/err.txt")" -eq 1 ]; then
			pass "$name: taskprof's extra stderr line"
		else
			fail "$name: stderr lacks the line: $extra_err"; cat "$d/err.txt"
		fi
		grep -vxF -- "$extra_err" "$d/err.txt" >"$d/err_ref.txt"
	fi
	if sub "$d/stderr.txt" "$d" | diff - "$d/err_ref.txt" >"$d/diff.txt"; then
		pass "$name: stderr = stderr.txt"
	else
		fail "$name: stderr differs"; head -20 "$d/diff.txt"
	fi

	# --pretty: byte-identical to the reference file
	"$TP" swimlane "$d/l2_swimlane_records.json" "$@" --pretty >/dev/null 2>&1
	if cmp -s "$d/merged_swimlane.json" "$ref"; then
		pass "$name: --pretty byte-identical"
	else
		fail "$name: --pretty not byte-identical"
	fi
}

extra_err=
run_case A_level4_full stdout.txt
run_case B_level4_nodeps stdout_verbose.txt -v
# Level 1 has no dummy_task / predicated_skip markers and no orch_submit
# records: the pairs of the dummy t5, the skipped t7 and alloc t0 get no
# arrow. The reference drops them in silence; taskprof warns (seed 002
# §3.3 for the dummy, docs/swimlane.md "Missing arrows").
extra_err="Warning: 4 of 8 producer-consumer pairs of deps.json have no dependency arrow, \
for 3 tasks with no record to anchor on: 1 dummy task without a dummy_task record (t5); \
1 task without task rows or a predicated_skip record (t7); 1 alloc_tensors task (not in \
deps.json tasks[]) without an orch_submit record (t0); the records are level 1: dummy_task \
/ predicated_skip markers need level 3; alloc bars need level-4 orchestrator records and \
the records are level 1"
run_case C_level1_v2rows stdout.txt
extra_err=

# (5) A with --overhead -v
d=$WORK/A_level4_full
out=$d/merged_swimlane_overhead.json
cp "$out" "$out.ref"
rm -f "$out"
"$TP" swimlane "$d/l2_swimlane_records.json" --overhead -v -o "$out" >"$d/out_oh.txt" 2>"$d/err_oh.txt"
rc=$?
[ $rc -eq 0 ] && pass "A --overhead: exit 0" || fail "A --overhead: exit $rc"
if python3 "$CMP" "$out" "$out.ref" >"$d/cmp.txt"; then
	pass "A --overhead: trace $(cat "$d/cmp.txt")"
else
	fail "A --overhead: trace differs"; cat "$d/cmp.txt"
fi
if sub "$d/stdout_overhead_v.txt" "$d" | diff - "$d/out_oh.txt" >"$d/diff.txt"; then
	pass "A --overhead: stdout = stdout_overhead_v.txt"
else
	fail "A --overhead: stdout differs"; head -20 "$d/diff.txt"
fi
[ -s "$d/err_oh.txt" ] && fail "A --overhead: stderr not empty" || pass "A --overhead: stderr empty"
"$TP" swimlane "$d/l2_swimlane_records.json" --overhead -v --pretty -o "$out" >/dev/null 2>&1
cmp -s "$out" "$out.ref" && pass "A --overhead --pretty byte-identical" \
	|| fail "A --overhead --pretty not byte-identical"

# Running twice gives the same bytes (spec §4.1).
"$TP" swimlane "$d/l2_swimlane_records.json" -o "$d/t1.json" >/dev/null 2>&1
"$TP" swimlane "$d/l2_swimlane_records.json" -o "$d/t2.json" >/dev/null 2>&1
cmp -s "$d/t1.json" "$d/t2.json" && pass "deterministic output" || fail "output differs between runs"

# err_inputs (spec §7.4). Messages carry the reader's "<file>: <key>:" prefix;
# the reference text must be contained in them.
E=$WORK/err_inputs
# expect_err FILE EXIT TEXT [args...]
expect_err() {
	local f=$1 want=$2 text=$3
	shift 3
	"$TP" swimlane "$E/$f" -o "$E/out.json" "$@" >"$E/out.txt" 2>"$E/err.txt"
	local rc=$?
	if [ $rc -ne "$want" ]; then
		fail "$f: exit $rc, expected $want"; cat "$E/err.txt"; return
	fi
	if [ -n "$text" ] && ! grep -qF -- "$text" "$E/err.txt"; then
		fail "$f: stderr lacks '$text'"; cat "$E/err.txt"; return
	fi
	pass "$f: exit $want${text:+, '$text'}"
}
expect_err bad_level.json 1 "Unsupported l2_swimlane_level: 5 (expected 1, 2, 3, or 4)"
expect_err no_clock.json 1 "metadata missing/zero clock_freq_hz: 0"
expect_err v1_legacy.json 1 "metadata missing/zero clock_freq_hz: 0"
# The reference prints Python's own TypeError / JSONDecodeError texts here;
# ours name the file and the place instead.
expect_err no_level.json 1 "Error: $E/no_level.json: l2_swimlane_level"
expect_err broken.json 1 "Error: $E/broken.json: line 1, column 25"
expect_err unmatched.json 0 "Warning: 1 aicpu_task(s) had no matching AICore record (top offenders: core 3: 1); the missing AICore buffer(s) were dropped on rotation. Bump PLATFORM_AICORE_BUFFERS_PER_CORE if you see this regularly." --deps-json "$WORK/A_level4_full/deps.json"
# sched-overhead reads the same rows and leaves the unmatched one out: it
# says so too (Part 1 counts the 7 matched tasks).
"$TP" sched-overhead "$E/unmatched.json" --deps-json "$WORK/A_level4_full/deps.json" \
	>"$E/out.txt" 2>"$E/err.txt"
rc=$?
[ $rc -eq 0 ] && grep -qxF "taskprof sched-overhead: warning: 1 aicpu_task(s) had no matching AICore record (top offenders: core 3: 1); the missing AICore buffer(s) were dropped on rotation. Bump PLATFORM_AICORE_BUFFERS_PER_CORE if you see this regularly." "$E/err.txt" \
	&& grep -q "^  Total tasks: 7 " "$E/out.txt" \
	&& pass "sched-overhead unmatched.json: the warning, 7 tasks" \
	|| { fail "sched-overhead unmatched.json: exit $rc"; cat "$E/err.txt"; }
expect_err level_str.json 0 "Warning: no usable deps.json at $E/deps.json"
grep -q "Warning: no usable" "$E/err.txt" && [ "$(wc -l <"$E/err.txt")" -eq 1 ] \
	&& pass "level_str.json: only the deps warning" || fail "level_str.json: unexpected stderr"

# Other error cases of §7.4 / §5.7.
"$TP" swimlane "$E/missing.json" >/dev/null 2>"$E/err.txt"
rc=$?
[ $rc -eq 1 ] && grep -qx "Error: Input file not found: $E/missing.json" "$E/err.txt" \
	&& pass "missing input: exit 1 + message" || fail "missing input: exit $rc"
"$TP" swimlane "$WORK/A_level4_full/l2_swimlane_records.json" --func-names "$E/nope.json" \
	-o "$E/out.json" >/dev/null 2>"$E/err.txt"
rc=$?
[ $rc -eq 1 ] && grep -qx "Error: Func names JSON not found: $E/nope.json" "$E/err.txt" \
	&& pass "missing --func-names: exit 1 + message" || fail "missing --func-names: exit $rc"
"$TP" swimlane "$WORK/A_level4_full/l2_swimlane_records.json" -d 0 >/dev/null 2>"$E/err.txt"
rc=$?
[ $rc -eq 2 ] && grep -q "^usage: taskprof swimlane \[-h\]" "$E/err.txt" \
	&& grep -qx "taskprof swimlane: error: unrecognized arguments: -d 0" "$E/err.txt" \
	&& pass "-d 0: usage + exit 2" || fail "-d 0: exit $rc"
"$TP" swimlane "$WORK/A_level4_full/l2_swimlane_records.json" -k "$E/kernel_config.py" \
	-o "$E/out.json" >/dev/null 2>"$E/err.txt"
rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$E/err.txt")" -eq 1 ] && grep -q "^Error: " "$E/err.txt" \
	&& pass "-k: one-line error, exit 1" || fail "-k: exit $rc"
mkdir -p "$WORK/empty"
(cd "$WORK/empty" && "$TP" swimlane >/dev/null 2>"$E/err.txt")
rc=$?
[ $rc -eq 1 ] && grep -qx "Error: No outputs/\*/l2_swimlane_records.json found under $(cd "$WORK/empty" && pwd -P)/outputs" "$E/err.txt" \
	&& pass "auto-detect without outputs/: exit 1" || { fail "auto-detect: exit $rc"; cat "$E/err.txt"; }
# Auto-detection picks the newest outputs/*/l2_swimlane_records.json.
mkdir -p "$WORK/auto/outputs/old" "$WORK/auto/outputs/new"
cp "$WORK/C_level1_v2rows/l2_swimlane_records.json" "$WORK/auto/outputs/old/"
cp "$WORK/B_level4_nodeps/l2_swimlane_records.json" "$WORK/auto/outputs/new/"
touch -d '2020-01-01' "$WORK/auto/outputs/old/l2_swimlane_records.json"
(cd "$WORK/auto" && "$TP" swimlane -v >"$E/out.txt" 2>/dev/null)
rc=$?
[ $rc -eq 0 ] && grep -q "^Auto-selected latest file: .*/outputs/new/l2_swimlane_records.json$" "$E/out.txt" \
	&& [ -f "$WORK/auto/outputs/new/merged_swimlane.json" ] \
	&& pass "auto-detect picks the newest" || fail "auto-detect newest: exit $rc"

echo "$fails failure(s)"
[ $fails -eq 0 ]
