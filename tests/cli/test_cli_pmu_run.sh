#!/usr/bin/env bash
# CLI test of `taskprof run --enable-pmu [N]` (spec/pmu.md §1.4, §2.2, §8):
# the bare flag (2), "N" and "=N" forms on a2a3sim and a5sim write
# pmu.csv with the exact header and one row per subtask, then print the
# `taskprof pmu` summary; 3 and 9 fall back to 2 with the WARN; 0 and -1
# leave PMU off; a non-integer "=N" is a usage error; the environment
# override and its invalid values; --rounds > 1 turns PMU off; PMU and
# the swimlane together.
# usage: test_cli_pmu_run.sh TASKPROF_BINARY
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" || exit 1
bin=$1
cli_init /tmp/tp_cli_pmu_run_XXXXXX
hasnt() { ! grep -qF -- "$2" <<<"$1" || bad "unexpected '$2' in: $1"; }
unset TASKPROF_PMU_EVENT_TYPE SIMPLER_PMU_EVENT_TYPE

H='thread_id,core_id,task_id,func_id,core_type,pmu_total_cycles'
A2A3_PIPE="$H,vec_busy_cycles,cube_busy_cycles,scalar_busy_cycles,mte1_busy_cycles,mte2_busy_cycles,mte3_busy_cycles,icache_miss,icache_req,event_type,run_epoch"
A5_MEM="$H,bif_sc_pmu_read_main_instr_core,bif_sc_pmu_write_main_instr_core,pmu_aiv_ext_rd_ub_instr,ub_pmu_vec_rd_ub_acc,pmu_aiv_ext_wr_ub_instr,ub_pmu_vec_wr_ub_acc,pmu_rd_l1_instr,pmu_wr_l1_instr,event_type,run_epoch"
A2A3_L0="$H,l0a_read_req,l0a_write_req,l0b_read_req,l0b_write_req,l0c_read_req,l0c_write_req,event_type,run_epoch"

# run OUTDIR ARGS... → stdout+stderr in $out, exit code in $code
run() {
	local o=$1
	shift
	out=$("$bin" run paged_attention --case CaseSmall1 -o "$root/$o" "$@" 2>&1)
	code=$?
}
csv_of() { ls "$root/$1"/*/pmu.csv 2>/dev/null | head -1; }

# Bare flag: PIPE_UTILIZATION, summary printed.
run bare --enable-pmu
[ "$code" = 0 ] || bad "bare --enable-pmu exited $code: $out"
f=$(csv_of bare)
[ -n "$f" ] || bad "bare: no pmu.csv"
has "$out" "pmu: $f (12 rows, event type 2)"
has "$out" "$f: 12 rows, 4 functions, event_type 2 (PIPE_UTILIZATION), run_epoch 1"
# result.txt names the settings that shaped the data (PMU on: single
# issue, so no early dispatch)
settings=$(sed -n '/^swimlane_level /,/^stall_timeout /p' "$(dirname "$f")/result.txt")
[ "$settings" = "swimlane_level 0
pmu_event_type 2
dep_gen off
early_dispatch off
stall_timeout 10.000 s" ] || bad "bare: result.txt settings: '$settings'"
has "$out" "func_id 0 (QK): 3 rows (AIC 3, AIV 0)"
has "$out" "share of total"
[ "$(head -1 "$f")" = "$A2A3_PIPE" ] || bad "bare: header $(head -1 "$f")"
[ "$(($(wc -l <"$f") - 1))" = 12 ] || bad "bare: $(wc -l <"$f") lines"
ls "$root/bare"/*/ | grep -q '\.tmp$' && bad "bare: temp files left"

hasnt "$out" "--early-dispatch has no effect"
# An explicit --early-dispatch is turned off by PMU's single issue: said
# before the run, and result.txt says off.
run early --enable-pmu --early-dispatch
[ "$code" = 0 ] || bad "--enable-pmu --early-dispatch exited $code: $out"
has "$out" "taskprof run: --early-dispatch has no effect with --enable-pmu: a PMU run issues one task per core at a time"
f=$(csv_of early)
grep -qx "early_dispatch off" "$(dirname "$f")/result.txt" || bad "early: result.txt does not say early_dispatch off"

# "N" on a5sim, and "=N".
run a5mem -p a5sim --enable-pmu 4
[ "$code" = 0 ] || bad "a5 --enable-pmu 4 exited $code: $out"
f=$(csv_of a5mem)
[ "$(head -1 "$f")" = "$A5_MEM" ] || bad "a5 4: header $(head -1 "$f")"
has "$out" "event_type 4 (MEMORY)"
run eq --enable-pmu=5
[ "$code" = 0 ] || bad "--enable-pmu=5 exited $code"
f=$(csv_of eq)
[ "$(head -1 "$f")" = "$A2A3_L0" ] || bad "=5: header $(head -1 "$f")"
# Every row ends with event_type 5, run_epoch 1.
[ "$(tail -n +2 "$f" | grep -vc ',5,1$')" = 0 ] || bad "=5: rows without ,5,1"

# 3 and 9: PIPE_UTILIZATION with the WARN.
for n in 3 9; do
	run "bad$n" --enable-pmu "$n"
	[ "$code" = 0 ] || bad "--enable-pmu $n exited $code"
	has "$out" "Invalid PMU event type $n, using default (PIPE_UTILIZATION=2)"
	has "$out" "(taskprof: the PMU event groups are 1 ARITHMETIC_UTILIZATION, 2 PIPE_UTILIZATION, 4 MEMORY,"
	has "$out" "event type 2)"
	[ "$(head -1 "$(csv_of "bad$n")")" = "$A2A3_PIPE" ] || bad "$n: header"
done

# 0: off and silent; -1: off, the WARN through %u.
run zero --enable-pmu 0
[ "$code" = 0 ] || bad "--enable-pmu 0 exited $code"
[ -z "$(csv_of zero)" ] || bad "--enable-pmu 0 wrote pmu.csv"
hasnt "$out" "pmu:"
hasnt "$out" "Invalid PMU event type"
run neg --enable-pmu -1
[ "$code" = 0 ] || bad "--enable-pmu -1 exited $code"
[ -z "$(csv_of neg)" ] || bad "--enable-pmu -1 wrote pmu.csv"
has "$out" "Invalid PMU event type 4294967295, using default (PIPE_UTILIZATION=2)"
hasnt "$out" "the PMU event groups are"
has "$out" "taskprof run: --enable-pmu -1 turns PMU profiling off (0 or negative: off); the 'Invalid PMU event type' warning that follows changes nothing"

# Non-integers: "=N" is a usage error; a separate word is not the value
# (it is the next positional, here one too many).
run nonum --enable-pmu=abc
[ "$code" = 2 ] || bad "--enable-pmu=abc exited $code"
has "$out" "--enable-pmu: expected an integer event type (1, 2, 4, 5, 6, 7 or 8), got 'abc'"
out=$("$bin" run --enable-pmu x2 paged_attention -o "$root/nonum2" 2>&1)
[ "$?" = 2 ] || bad "--enable-pmu x2 did not exit 2: $out"
[ "$out" = "taskprof run: two CASE arguments, 'x2' and 'paged_attention': 'x2' after --enable-pmu is not its value (a number: --enable-pmu 2 or --enable-pmu=2)" ] ||
	bad "--enable-pmu x2: '$out'"
out=$("$bin" run paged_attention --enable-l2-swimlane top -o "$root/nonum3" 2>&1)
[ "$?" = 2 ] || bad "--enable-l2-swimlane top did not exit 2: $out"
[ "$out" = "taskprof run: two CASE arguments, 'paged_attention' and 'top': 'top' after --enable-l2-swimlane is not its value (a number: --enable-l2-swimlane 2 or --enable-l2-swimlane=2)" ] ||
	bad "--enable-l2-swimlane top: '$out'"
out=$("$bin" run paged_attention extra -o "$root/nonum4" 2>&1)
[ "$?" = 2 ] && [ "$out" = "taskprof run: unexpected argument 'extra'" ] ||
	bad "an extra argument: '$out'"
# A value-taking option followed by an option: the option is named, not
# the argument left over (adversarial trial of 2 Dec).
for v in "--case|-p|--case" "--runtime|--block-dim|--runtime" "-o|-p|-o/--output" "-p|--case|-p/--platform"; do
	IFS='|' read -r opt val name <<<"$v"
	out=$("$bin" run paged_attention "$opt" "$val" a5sim 2>&1)
	[ "$?" = 2 ] && [ "$out" = "taskprof run: $name expects a value, got '$val', which is an option (see taskprof run --help)" ] ||
		bad "$opt $val: '$out'"
done
# A value attached to its option is taken as it is.
out=$("$bin" run paged_attention --case=-x 2>&1)
[ "$?" = 2 ] && ! grep -q "which is an option" <<<"$out" || bad "--case=-x: '$out'"

# The environment override, and invalid values that keep the flag's type.
out=$(TASKPROF_PMU_EVENT_TYPE=7 "$bin" run paged_attention --case CaseSmall1 \
	-o "$root/env7" --enable-pmu 2>&1) || bad "env 7 failed: $out"
has "$out" "event_type 7 (MEMORY_UB)"
out=$(SIMPLER_PMU_EVENT_TYPE=8 "$bin" run paged_attention --case CaseSmall1 \
	-o "$root/envs8" --enable-pmu 2>&1) || bad "alias 8 failed: $out"
has "$out" "event_type 8 (L2_CACHE)"
# ... and the run says which of its counters the simulator leaves at 0
# (its zeros are no measurement); a fully modelled group gets no note
has "$out" 'note: the simulated PMU has one L2 read channel: every GM read counts on r0, r1_read_cache_hit and r1_read_cache_miss_allocate read 0 (docs/pmu.md "Per event id")'
# a bad L2 size fails the run with the reason (not counters of 0)
out=$(TASKPROF_SIM_L2_BYTES=abc "$bin" run gemm -o "$root/l2bad" --enable-pmu 8 2>&1)
code=$?
[[ $code -eq 1 ]] && has "$out" "TASKPROF_SIM_L2_BYTES=abc: expected a number of bytes, 2048" ||
	bad "TASKPROF_SIM_L2_BYTES=abc: exit $code: $out"
grep -q "does not model" <<<"$(TASKPROF_PMU_EVENT_TYPE=7 "$bin" run paged_attention \
	--case CaseSmall1 -o "$root/env7b" --enable-pmu 2>&1)" && bad "MEMORY_UB: an unmodelled note"
for v in 0 3 9 -1 abc; do
	out=$(TASKPROF_PMU_EVENT_TYPE=$v "$bin" run paged_attention --case CaseSmall1 \
		-o "$root/envbad" --enable-pmu 6 2>&1) || bad "env $v failed: $out"
	has "$out" "Invalid TASKPROF_PMU_EVENT_TYPE=$v, using default (PIPE_UTILIZATION=2)"
	has "$out" "event_type 6 (RESOURCE_CONFLICT)"
done
has "$out" "note: the simulated PMU does not model bank or resource conflicts: every RESOURCE_CONFLICT counter reads 0"
# The environment alone does not enable PMU.
out=$(TASKPROF_PMU_EVENT_TYPE=4 "$bin" run paged_attention --case CaseSmall1 \
	-o "$root/envonly" 2>&1) || bad "env only failed: $out"
[ -z "$(csv_of envonly)" ] || bad "the environment alone enabled PMU"

# --rounds > 1: PMU off, with the spec's WARN word for word (spec/pmu.md §8.3).
run rounds --rounds 2 --enable-pmu
[ "$code" = 0 ] || bad "--rounds 2 --enable-pmu exited $code"
[ -z "$(csv_of rounds)" ] || bad "--rounds 2 wrote pmu.csv"
# Nothing to name without pmu.csv: no name map, no "name map:" line.
nm=$(ls "$root"/rounds/*/name_map_*.json 2>/dev/null)
[ -z "$nm" ] || bad "--rounds 2 --enable-pmu wrote a name map for no pmu.csv: $nm"
! grep -q '^name map: ' <<<"$out" || bad "--rounds 2 --enable-pmu printed a name map line"
grep -qx '\[taskprof\] WARN  PMU disabled: --rounds > 1' <<<"$out" ||
	bad "--rounds 2: no exact 'PMU disabled: --rounds > 1' line in: $out"
grep -qx 'pmu: none: PMU profiling is off with --rounds > 1; run with --rounds 1 for pmu.csv' <<<"$out" ||
	bad "--rounds 2: no 'pmu: none' line on stdout in: $out"
grep -q '  (the last of 2 rounds)$' <<<"$out" || bad "--rounds 2: no '(the last of 2 rounds)' in: $out"

# PMU and the swimlane in one run: both files, both complete.
run both --enable-pmu --enable-l2-swimlane
[ "$code" = 0 ] || bad "pmu + swimlane exited $code: $out"
has "$out" "swimlane trace:"
has "$out" "(12 rows, event type 2)"
# ... and the run says the trace shows PMU's single-issue schedule.
has "$out" 'note: with --enable-pmu the schedulers issue one task per core at a time and do not dispatch early (docs/pmu.md "Single issue"): the trace shows that schedule, not the default one'
# ... and a task's pmu_total_cycles is its kernel's time, not more: the
# same task's swimlane bar (end - start of its AICore row, wall time) is
# an upper bound within the window's own work (docs/pmu.md "Window
# rules"). The median over the tasks of 20 us and more is within 5% (a
# preemption at a window's edge can take one task over). The CPU clock's
# reads once added 10-15% (a 95 us bar counted 109 us; median 1.14).
dir=$(dirname "$(csv_of both)")
ratio=$(python3 - "$dir" <<'PY'
import csv, json, statistics, sys
d = sys.argv[1]
r = json.load(open(d + "/l2_swimlane_records.json"))
hz = r["metadata"]["clock_freq_hz"]
bar = {(a[0], a[1]): (a[4] - a[3]) * 1e6 / hz for a in r["aicore_tasks"]}
ratios = []
for row in csv.DictReader(open(d + "/pmu.csv")):
    b = bar.get((int(row["core_id"]), int(row["task_id"], 16)))
    if b is not None and b >= 20:
        ratios.append(int(row["pmu_total_cycles"]) / 1800.0 / b)
print("%.3f" % statistics.median(ratios) if len(ratios) >= 3 else "too few tasks of 20 us: %d" % len(ratios))
PY
)
# (a sanitizer makes the window's own work several times slower)
limit=1.05
[[ -n ${TASKPROF_TEST_SANITIZE:-} ]] && limit=1.15
python3 -c 'import sys; sys.exit(not 0.5 <= float(sys.argv[1]) <= float(sys.argv[2]))' \
	"$ratio" "$limit" 2>/dev/null ||
	bad "pmu_total_cycles / swimlane bar: median $ratio over the tasks of 20 us (want 0.5 to $limit)"
run swl_only --enable-l2-swimlane
[ "$code" = 0 ] || bad "swimlane alone exited $code: $out"
hasnt "$out" "note: with --enable-pmu"

[ "$fail" = 0 ] && echo "PASS test_cli_pmu_run"
exit "$fail"
