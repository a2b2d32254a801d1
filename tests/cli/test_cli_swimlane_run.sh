#!/usr/bin/env bash
# CLI test of `taskprof run --enable-l2-swimlane [LEVEL]` (seed 002 §3.1):
# the optional level (bare = 4, next argument, =LEVEL), bad levels (exit 2,
# one line), the records file with its level, the converted trace.
# usage: test_cli_swimlane_run.sh TASKPROF_BINARY
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" || exit 1
bin=$1
cli_init /tmp/tp_cli_swl_XXXXXX

# run_level WANT_LEVEL ARGS...: a passing run whose records hold WANT_LEVEL.
run_level() {
	local want=$1
	shift
	local out code dir
	out=$("$bin" run "$@" -o "$root/out" 2>"$root/err")
	code=$?
	if [[ $code -ne 0 ]]; then
		echo "FAIL: taskprof run $* exited $code: $(tail -3 "$root/err")"
		fail=1
		return
	fi
	rec=$(sed -n 's/^swimlane records: //p' <<<"$out")
	trace=$(sed -n 's/^swimlane trace: \(.*\) (open it in https:\/\/ui.perfetto.dev\/)$/\1/p' <<<"$out")
	if [[ ! -s $rec ]] || ! grep -q "^  \"l2_swimlane_level\": $want,\$" "$rec"; then
		echo "FAIL: taskprof run $*: no level-$want records ($rec)"
		fail=1
	elif [[ ! -s $trace ]]; then
		echo "FAIL: taskprof run $*: no trace ($out)"
		fail=1
	elif ! grep -q "L2Swimlane reconcile \[aicore_task\]: collected=.* + dropped=0 + mismatch=0" "$root/err"; then
		echo "FAIL: taskprof run $*: no balanced reconcile line"
		fail=1
	else
		echo "ok: taskprof run $* -> level $want, $(basename "$trace")"
	fi
}

run_level 4 paged_attention --case CaseSmall1 --enable-l2-swimlane
run_level 3 --enable-l2-swimlane 3 paged_attention --case CaseSmall1 -p a5sim
run_level 1 paged_attention --enable-l2-swimlane=1 --case CaseSmall1
run_level 2 synthetic --enable-l2-swimlane 2
# A bare flag followed by the CASE does not consume it.
run_level 4 --enable-l2-swimlane paged_attention --case CaseSmall1

# The run's own conversion: without --enable-dep-gen a note (stdout) in
# place of the reference's "no usable deps.json" warning, never the
# reference's closing hint; the scheduler-overhead line says what it needs.
out=$("$bin" run synthetic --enable-l2-swimlane -o "$root/nd" 2>"$root/err")
if [[ $? -ne 0 ]] || ! grep -qx "note: no deps.json (the run had no --enable-dep-gen): the trace has no dependency arrows and names no kernel (the table's func_-1_ row); run with --enable-l2-swimlane --enable-dep-gen for both" <<<"$out" ||
   grep -q "no usable deps.json" "$root/err" || grep -q "sched_overhead_analysis" <<<"$out" ||
   ! grep -qxF "scheduler overhead: $bin sched-overhead needs a deps.json: run with --enable-dep-gen too, or pass --deps-json with one from a run of the same case" <<<"$out"; then
	echo "FAIL: run without dep_gen: $out $(cat "$root/err")"; fail=1
else
	echo "ok: run without dep_gen: note, no reference hint"
fi
# Level 2 with dep_gen: the line names what is missing, the level.
out=$("$bin" run synthetic --enable-l2-swimlane 2 --enable-dep-gen -o "$root/l2" 2>/dev/null)
grep -qxF "scheduler overhead: $bin sched-overhead needs records of level 3 or 4 (this run: --enable-l2-swimlane 2)" <<<"$out" ||
	{ echo "FAIL: level-2 hint: $(grep "^scheduler overhead" <<<"$out")"; fail=1; }
# result.txt names the settings (synthetic asks for early dispatch)
settings=$(sed -n '/^swimlane_level /,/^stall_timeout /p' "$root"/l2/*/result.txt)
[[ $settings == "swimlane_level 2
pmu_event_type 0
dep_gen on
early_dispatch on
stall_timeout 10.000 s" ]] || { echo "FAIL: level-2 result.txt settings: '$settings'"; fail=1; }
# With both: the scheduler-overhead line names the run folder, which both
# tools take in place of the records file.
out=$("$bin" run synthetic --enable-l2-swimlane --enable-dep-gen -o "$root/wd" 2>"$root/err")
dir=$(grep -F "scheduler overhead: $bin sched-overhead " <<<"$out" | sed 's/^scheduler overhead: [^ ]* sched-overhead //')
rec=$(sed -n 's/^swimlane records: //p' <<<"$out")
if [[ -z $dir || ! -d $dir || $rec != "$dir/l2_swimlane_records.json" ]] ||
   grep -q "sched_overhead_analysis\|^note: no deps" <<<"$out"; then
	echo "FAIL: run with dep_gen: '$dir' '$rec': $out"; fail=1
else
	so=$("$bin" sched-overhead "$dir" 2>&1)
	if [[ $? -ne 0 ]] || ! grep -qx "Perf data:  $rec" <<<"$so" ||
	   ! grep -qx "Deps JSON:  $dir/deps.json" <<<"$so" || ! grep -q "^Part 6:" <<<"$so"; then
		echo "FAIL: sched-overhead on the run folder: $so"; fail=1
	else
		echo "ok: sched-overhead takes the run folder"
	fi
	# The verdict on records of the simulated device comes with one
	# stderr note on what it measures there (result.txt says a2a3sim).
	note=$("$bin" sched-overhead "$dir" 2>&1 >/dev/null)
	if ! grep -qF "taskprof sched-overhead: note: these records are of the simulated device (a2a3sim), whose AICPU and AICore threads shared the CPUs of the host that ran them" <<<"$note" ||
	   [[ $(wc -l <<<"$note") -ne 1 ]]; then
		echo "FAIL: sched-overhead stderr on a2a3sim records: '$note'"; fail=1
	else
		echo "ok: sched-overhead notes the simulated device"
	fi
	# Part 5: synthetic's alloc task feeds consumers but runs on no core,
	# so its edges count as fanin only; the report says why the totals
	# differ (and says nothing when they agree).
	n_out=$(sed -n 's/^  Fanout (notify consumers): total edges=\([0-9]*\),.*/\1/p' <<<"$so")
	n_in=$(sed -n 's/^  Fanin  (release producers): total edges=\([0-9]*\),.*/\1/p' <<<"$so")
	if [[ -z $n_out || -z $n_in || $n_out -ge $n_in ]] || ! grep -q "^  (the totals differ: .* alloc or dummy task" <<<"$so"; then
		echo "FAIL: sched-overhead Part 5: fanout '$n_out', fanin '$n_in' (want fanout < fanin) and the note: $so"; fail=1
	else
		echo "ok: Part 5 fanout $n_out < fanin $n_in, with the note"
	fi
	rm -f "$dir/merged_swimlane.json"
	sw=$("$bin" swimlane "$dir/" 2>&1)
	if [[ $? -ne 0 ]] || ! grep -qx "  Input:  $rec" <<<"$sw" || [[ ! -s $dir/merged_swimlane.json ]] ||
	   ! grep -q "sched_overhead_analysis" <<<"$sw"; then
		echo "FAIL: swimlane on the run folder: $sw"; fail=1
	else
		echo "ok: swimlane takes the run folder (and keeps the reference's hint)"
	fi
fi
# An output folder with a blank and a quote: the suggested command is one
# shell word that runs.
q="$root/a b'c"
out=$("$bin" run synthetic --enable-l2-swimlane --enable-dep-gen -o "$q" 2>/dev/null)
cmd=$(sed -n 's/^scheduler overhead: //p' <<<"$out")
d=$(ls -d "$q"/synthetic_Default_* | head -1)
want="$bin sched-overhead '${d//\'/\'\\\'\'}'"
if [[ $cmd != "$want" ]]; then
	echo "FAIL: quoted suggestion: '$cmd', want '$want'"; fail=1
elif ! eval "$cmd" >/dev/null 2>&1; then
	echo "FAIL: the suggested command does not run: $cmd"; fail=1
else
	echo "ok: the suggested command is quoted and runs"
fi

# -o into folders that do not exist yet: made.
if "$bin" swimlane "$dir" -o "$root/new/deeper/t.json" >/dev/null 2>&1 && [[ -s $root/new/deeper/t.json ]]; then
	echo "ok: swimlane -o makes the missing folders"
else
	echo "FAIL: swimlane -o into a missing folder"; fail=1
fi

# A folder without records: the path the tools looked for.
for t in swimlane sched-overhead; do
	err=$("$bin" $t "$root" 2>&1 >/dev/null)
	if [[ $? -ne 1 ]] || ! grep -q "not found: $root/l2_swimlane_records.json\$" <<<"$err"; then
		echo "FAIL: $t on a folder without records: $err"; fail=1
	else
		echo "ok: $t on a folder without records -> 1"
	fi
done

# Level 0: no records.
out=$("$bin" run paged_attention --case CaseSmall1 --enable-l2-swimlane 0 -o "$root/out" 2>/dev/null)
if [[ $? -ne 0 ]] || grep -q "swimlane records" <<<"$out"; then
	echo "FAIL: --enable-l2-swimlane 0 recorded: $out"; fail=1
else
	echo "ok: --enable-l2-swimlane 0 records nothing"
fi

for bad in 5 -1 x; do
	err=$("$bin" run paged_attention --enable-l2-swimlane="$bad" 2>&1 >/dev/null)
	code=$?
	if [[ $code -ne 2 || $(wc -l <<<"$err") -ne 1 ]] ||
	   ! grep -qF "expects a level from 0 to 4" <<<"$err"; then
		echo "FAIL: --enable-l2-swimlane=$bad: exit $code: $err"; fail=1
	else
		echo "ok: --enable-l2-swimlane=$bad -> 2"
	fi
done
err=$("$bin" run paged_attention --enable-l2-swimlane 9 2>&1 >/dev/null)
if [[ $? -ne 2 ]] || ! grep -qF "got '9'" <<<"$err"; then
	echo "FAIL: --enable-l2-swimlane 9: $err"; fail=1
else
	echo "ok: --enable-l2-swimlane 9 -> 2"
fi
exit $fail
