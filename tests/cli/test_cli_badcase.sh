#!/usr/bin/env bash
# CLI test: how `taskprof run` reports a case shared object that misbehaves
# (tests/case_so/badcase.c, mode from BADCASE): bad tensors from
# generate(), a bad return code, a bad func_id (clear errors, no run
# folder), a kernel that crashes or calls exit() and a generate() that
# aborts (one line naming the signal and the thread, the empty run folder
# removed). The crash handlers are left to the sanitizers in ASan / TSan
# builds (their report is worth more), so those cases run only without.
# usage: test_cli_badcase.sh TASKPROF_BINARY
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" || exit 1
bin=$1
so=$(dirname "$bin")/tests/case_so/libbadcase.so
cli_init /tmp/tp_cli_badcase_XXXXXX
T=60

# run MODE[+LABEL] [ARGS...]: stdout, stderr and exit code of one run of
# BADCASE=MODE (taskprof run ... ARGS) into $root/MODE[+LABEL]
run() {
	local m=$1
	shift
	BADCASE=${m%%+*} timeout $T "$bin" run "$so" -o "$root/$m" "$@" >"$root/$m.out" \
		2>"$root/$m.err"
	echo $? >"$root/$m.rc"
}

# expect MODE[+LABEL] CODE LINE [ARGS...]: exit code and the last stderr
# line; no run folder
expect() {
	local m=$1 code=$2 line=$3
	shift 3
	run "$m" "$@"
	[[ $(cat "$root/$m.rc") == "$code" ]] || bad "$m: exit $(cat "$root/$m.rc"), expected $code"
	[[ $(tail -1 "$root/$m.err") == "$line" ]] || bad "$m: stderr '$(cat "$root/$m.err")'"
	[[ -z $(ls -A "$root/$m" 2>/dev/null) ]] || bad "$m: run folder left: $(ls "$root/$m")"
}

run good
[[ $(cat "$root/good.rc") == 0 ]] || bad "good: exit $(cat "$root/good.rc"): $(cat "$root/good.err")"
grep -q "^badcase Default a2a3sim .*: PASS" "$root/good.out" || bad "good: $(cat "$root/good.out")"

expect null_data 1 "taskprof run: badcase Default on a2a3sim failed: case Default: tensor 'y' has no data (2048 bytes)"
expect ndims 1 "taskprof run: badcase Default on a2a3sim failed: case Default: tensor 'y': ndims 60 (expected 1..4)"
expect bytes_small 1 "taskprof run: badcase Default on a2a3sim failed: case Default: tensor 'y': 4 bytes, but shape [8,64] of fp32 needs 2048"
# an orchestration stuck in the case's code after its tasks finished: the
# stall timeout ends the run (it hung for ever), its thread left running
if [[ ${TASKPROF_TEST_SANITIZE:-} != thread ]]; then
	run loop_orch --stall-timeout 0.5 --enable-l2-swimlane --enable-dep-gen
	[[ $(cat "$root/loop_orch.rc") == 1 ]] &&
		grep -qE "^taskprof run: badcase Default on a2a3sim failed: runtime: the orchestration made no runtime call for [0-9]+ ms \(stall timeout 500 ms\) after every task it had submitted finished: it is stuck in the case's orchestration function \(a loop or a wait that does not end\); raise the stall timeout" "$root/loop_orch.err" ||
		bad "loop_orch: exit $(cat "$root/loop_orch.rc"), stderr '$(cat "$root/loop_orch.err")'"
	# its orch_phase records (8 submits) flushed by the host, not lost
	grep -q "L2Swimlane reconcile \[orch_phase\]: collected=8 + dropped=0 + mismatch=0 == total=8 " "$root/loop_orch.err" ||
		bad "loop_orch: orch_phase reconcile: $(grep orch_phase "$root/loop_orch.err")"
fi
# more than the host's memory: refused before the copy (it grew until the
# OOM killer ended it)
run huge_input
[[ $(cat "$root/huge_input.rc") == 1 ]] &&
	grep -qE "^taskprof run: badcase Default on a2a3sim failed: device memory: the case's 2 tensors need 1024\.00 GiB \('x' alone 1024\.00 GiB\), and the host has [0-9.]+ GiB available \(MemAvailable\): the simulated device's memory is the host's$" "$root/huge_input.err" ||
	bad "huge_input: exit $(cat "$root/huge_input.rc"), stderr '$(cat "$root/huge_input.err")'"
expect ret5 1 "taskprof run: badcase Default on a2a3sim failed: case Default: generate() returned 5 (expected 0 or a negative errno)"
expect bad_func_id 2 "taskprof run: callable badcase: func_id 99 of 'AXPB' outside 0..0"
# a run that fails before it wrote anything but the name map of its
# profilers leaves no folder either
expect fail_orch 1 "taskprof run: badcase Default on a2a3sim failed: runtime: orchestration failed (-22): Invalid argument" \
	--enable-l2-swimlane --enable-dep-gen
expect neg_tol 2 "taskprof run: callable badcase: case Default: rtol -1, atol 1e-06 (expected finite values >= 0) (taskprof/case.h)"
expect core_type7 2 "taskprof run: callable badcase: kernel 'AXPB' (func_id 0) has core_type 7 (expected TP_CASE_AIC (0) or TP_CASE_AIV (1))"
ds=$(dirname "$bin")/tests/case_so/libdatasym.so
timeout $T "$bin" run "$ds" -o "$root/datasym" >/dev/null 2>"$root/datasym.err"
code=$?
[[ $code == 2 && $(cat "$root/datasym.err") == "taskprof run: case shared object '$ds': tp_case_callable is not a function (expected 'const struct tp_callable *tp_case_callable(void)', see taskprof/case.h)" ]] ||
	bad "datasym: exit $code, stderr '$(cat "$root/datasym.err")'"
# a case object of another struct layout (taskprof/case.h ABI version,
# packed structs), built before the ABI symbol existed, or whose symbol
# is not the struct: refused before its entry runs
for v in abi999 oldabi abishape abipacked; do
	o=$(dirname "$bin")/tests/case_so/lib$v.so
	timeout $T "$bin" run "$o" -o "$root/$v" >/dev/null 2>"$root/$v.err"
	code=$?
	case $v in
	abi999) want="taskprof run: case shared object '$o' was built against taskprof/case.h ABI version 999, this taskprof's is 1; rebuild it against include/taskprof" ;;
	oldabi) want="taskprof run: case shared object '$o' has no tp_case_abi: it was built against a taskprof/case.h older than this taskprof's (ABI version 1); rebuild it against include/taskprof" ;;
	abishape) want="taskprof run: case shared object '$o': tp_case_abi is an object of 1 byte, not the const struct tp_case_abi of 28 bytes taskprof/case.h defines; rebuild it against include/taskprof without defining tp_case_abi" ;;
	abipacked) want="taskprof run: case shared object '$o' was built with other struct layouts than this taskprof: its struct tp_callable has 57 bytes, this taskprof's 72 (a layout-changing compiler option such as -fpack-struct, or an edited header); rebuild it against include/taskprof without them" ;;
	esac
	got=$(cat "$root/$v.err")
	# the packed sizes are x86-64's; elsewhere only that two sizes differ
	if [[ $v == abipacked && $(uname -m) != x86_64 ]]; then
		got=$(sed -E 's/has [0-9]+ bytes, this taskprof.s [0-9]+ /has N bytes, this M /' <<<"$got")
		want=$(sed -E 's/has [0-9]+ bytes, this taskprof.s [0-9]+ /has N bytes, this M /' <<<"$want")
	fi
	[[ $code == 2 && $got == "$want" && ! -e $root/$v ]] ||
		bad "$v: exit $code, stderr '$(cat "$root/$v.err")'"
done
expect newline_name 2 "taskprof run: tp_case_callable() in case shared object '$so' returned a callable whose name has a control character (expected a struct tp_callable, see taskprof/case.h)"

# A run that fails after its tasks ran keeps what it wrote, says where,
# and marks the folder: result.txt "status FAILED", deps.json of what was
# submitted; the tools given the folder warn that the run failed.
# a failure in round 2 of 3 says which round (task ids restart each round)
run fail_round2_orch --rounds 3
m=fail_round2_orch
[[ $(cat "$root/$m.rc") == 1 ]] || bad "$m: exit $(cat "$root/$m.rc"), expected 1"
grep -qE "^taskprof run: badcase Default on a2a3sim failed: round 2 of 3: runtime: orchestration failed \(-5\): Input/output error$" "$root/$m.err" ||
	bad "$m: stderr '$(cat "$root/$m.err")'"

run fail_late_orch --enable-l2-swimlane --enable-dep-gen --enable-pmu
m=fail_late_orch
dir=$(ls -d "$root/$m"/badcase_Default_* 2>/dev/null | head -1)
[[ $(cat "$root/$m.rc") == 1 ]] || bad "$m: exit $(cat "$root/$m.rc"), expected 1"
if [[ -z $dir ]]; then
	bad "$m: no run folder: $(cat "$root/$m.err")"
else
	grep -qxF "taskprof run: what was written before the failure is in $dir (its result.txt says the run failed)" "$root/$m.err" &&
		[[ $(tail -1 "$root/$m.err") == "taskprof run: no trace is made for a failed run; \`$bin swimlane $dir\` draws what ran" ]] ||
		bad "$m: stderr '$(tail -2 "$root/$m.err")'"
	grep -qx "status FAILED" "$dir/result.txt" &&
		grep -qx "error runtime: orchestration failed (-5): Input/output error" "$dir/result.txt" ||
		bad "$m: result.txt: $(cat "$dir/result.txt" 2>&1)"
	for f in deps.json l2_swimlane_records.json pmu.csv; do
		[[ -s $dir/$f ]] || bad "$m: no $f in $(ls "$dir")"
	done
	err=$("$bin" swimlane "$dir" -o "$root/$m.trace.json" 2>&1 >/dev/null)
	[[ $? -eq 0 ]] && grep -qF "Warning: $dir/l2_swimlane_records.json is from a run that failed (its result.txt: runtime: orchestration failed (-5): Input/output error): the records stop where it failed, and tasks dispatched after the failure ran no kernel (zero-length rows)" <<<"$err" ||
		bad "$m: swimlane on the folder: $err"
	err=$("$bin" pmu "$dir" 2>&1 >/dev/null)
	grep -qF "taskprof pmu: warning: $dir/pmu.csv is from a run that failed" <<<"$err" ||
		bad "$m: pmu on the folder: $err"
	# result.txt saved with CRLF line ends (an editor): still read as failed
	sed -i 's/$/\r/' "$dir/result.txt"
	err=$("$bin" pmu "$dir" 2>&1 >/dev/null)
	grep -qF "taskprof pmu: warning: $dir/pmu.csv is from a run that failed (its result.txt: runtime: orchestration failed (-5): Input/output error)" <<<"$err" ||
		bad "$m: pmu on the folder, CRLF result.txt: $err"
	echo "ok: $m: folder kept and marked, tools warn"
fi

# crashed MODE[+LABEL] CODE REGEX [ARGS...]: a run that must end with exit
# CODE, its last stderr line matching REGEX (grep -E), and no run folder
# left (nor $root/MODE, which -o made for it)
crashed() {
	local m=$1 code=$2 re=$3
	shift 3
	run "$m" "$@"
	[[ $(cat "$root/$m.rc") == "$code" ]] || bad "$m: exit $(cat "$root/$m.rc"), expected $code"
	tail -1 "$root/$m.err" | grep -qE "$re" || bad "$m: stderr '$(cat "$root/$m.err")'"
	[[ -z $(ls -A "$root/$m" 2>/dev/null) ]] || bad "$m: run folder left"
}
aicore='in thread tp0-ai[cv][0-9]+ \(an AICore thread: a kernel of the case\)'
gone='removed 0 temporary files and the empty run folder'

if [[ -n ${TASKPROF_TEST_SANITIZE:-} ]]; then
	echo "crash and exit() cases skipped under ${TASKPROF_TEST_SANITIZE}"
else
	crashed segv_kernel 139 \
		"^taskprof run: crashed: SIGSEGV \(invalid memory access\) $aicore; $gone $root/segv_kernel/badcase_Default_[0-9_]+ and the folder $root/segv_kernel made for the output$"
	crashed abort_generate 134 \
		"^taskprof run: crashed: SIGABRT \(abort\) in thread taskprof \(the main thread: the case's generate\(\)\); removed 0 temporary files; no output was written$"
	# the orchestration: on the orchestrator's AICPU thread, or on the
	# main thread under host_build_graph
	crashed segv_orch 139 \
		"^taskprof run: crashed: SIGSEGV \(invalid memory access\) in thread tp0-aicpu3 \(an AICPU thread: the case's orchestration\); $gone $root/segv_orch/badcase_Default_[0-9_]+ and the folder $root/segv_orch made for the output$"
	crashed segv_orch+hbg 139 \
		"^taskprof run: crashed: SIGSEGV \(invalid memory access\) in thread taskprof \(the main thread: the case's orchestration\); $gone $root/segv_orch\+hbg/badcase_Default_[0-9_]+ and the folder $root/segv_orch\+hbg made for the output$" \
		--runtime host_build_graph
	# exit() from the 8 AICores at once: one reports, the others wait
	# (their exit() never reaches the case's status), exit 1 even for
	# exit(0)
	crashed exit_kernel 1 \
		"^taskprof run: the run was ended by exit\(3\) $aicore, not by taskprof: the run did not finish; $gone $root/exit_kernel/badcase_Default_[0-9_]+ and the folder $root/exit_kernel made for the output$"
	crashed exit0_kernel 1 \
		"^taskprof run: the run was ended by exit\(0\) $aicore, not by taskprof: the run did not finish; $gone $root/exit0_kernel/badcase_Default_[0-9_]+ and the folder $root/exit0_kernel made for the output$"
	# quick_exit(0) from the 8 AICores: the same (it used to end the run
	# with status 0 and no line at all)
	crashed quick_exit_kernel 1 \
		"^taskprof run: the run was ended by quick_exit\(\) $aicore, not by taskprof: the run did not finish; $gone $root/quick_exit_kernel/badcase_Default_[0-9_]+ and the folder $root/quick_exit_kernel made for the output$"
	# the case's own code before any run: its constructors, its entry
	# point, and a callable pointer that points nowhere
	crashed abort_ctor 134 \
		"^taskprof run: crashed: SIGABRT \(abort\) in thread taskprof \(the main thread: the case's constructors \(dlopen\)\); removed 0 temporary files; no output was written$"
	crashed exit_entry 1 \
		"^taskprof run: the run was ended by exit\(3\) in thread taskprof \(the main thread: the case's tp_case_callable\(\)\), not by taskprof: the run did not finish; removed 0 temporary files; no output was written$"
	crashed wild_entry 139 \
		"^taskprof run: crashed: SIGSEGV \(invalid memory access\) in thread taskprof \(the main thread: reading the struct tp_callable the case's tp_case_callable\(\) returned\); removed 0 temporary files; no output was written$"
	# a stack overflow: the line comes from the thread's alternate stack
	crashed stack_kernel 139 \
		"^taskprof run: crashed: SIGSEGV \(invalid memory access\) from a stack overflow $aicore; $gone $root/stack_kernel/badcase_Default_[0-9_]+ and the folder $root/stack_kernel made for the output$"
	# on the main thread, whose report runs on the alternate stack
	# cli_crash_install() gives it, with the limit that was hit (a finite
	# one: an unlimited stack would grow into the heap first)
	ulimit -s 8192
	crashed stack_generate 139 \
		"^taskprof run: crashed: SIGSEGV \(invalid memory access\) from a stack overflow \(the main thread's stack is limited to 8192 KiB: ulimit -s\) in thread taskprof \(the main thread: the case's generate\(\)\); removed 0 temporary files; no output was written$"
fi

# A stack limit too small for taskprof: every command says so on one line
# at its start and exits 1, writing nothing (it used to crash part way,
# a stack overflow in run at 88 KiB and below); --help still answers.
for cmd in run transport-demo swimlane sched-overhead pmu op; do
	(ulimit -s 100; exec "$bin" $cmd x -o "$root/small_stack") >"$root/ss.out" 2>"$root/ss.err"
	code=$?
	[[ $code -eq 1 ]] || bad "ulimit -s 100, $cmd: exit $code, expected 1"
	grep -qxF "taskprof $cmd: the stack size limit is 100 KiB (ulimit -s); taskprof needs at least 128 KiB: raise it (ulimit -s 8192, the usual)" \
		"$root/ss.err" && [[ $(wc -l <"$root/ss.err") -eq 1 ]] ||
		bad "ulimit -s 100, $cmd: stderr '$(cat "$root/ss.err")'"
	[[ ! -e $root/small_stack ]] || bad "ulimit -s 100, $cmd: made $root/small_stack"
	(ulimit -s 100; exec "$bin" $cmd --help) >"$root/ss.out" 2>&1 ||
		bad "ulimit -s 100, $cmd --help: exit $?"
	grep -q "^usage: taskprof $cmd" "$root/ss.out" || bad "ulimit -s 100, $cmd --help: $(head -2 "$root/ss.out")"
done
# an application's own --help after -- is not taskprof's
(ulimit -s 100; exec "$bin" op -o "$root/small_stack" -- /bin/true --help) >"$root/ss.out" 2>"$root/ss.err"
code=$?
[[ $code -eq 1 ]] && grep -q "stack size limit is 100 KiB" "$root/ss.err" ||
	bad "ulimit -s 100, op -- APP --help: exit $code, stderr '$(cat "$root/ss.err")'"
# the least accepted: a run with every profiler
if [[ -z ${TASKPROF_TEST_SANITIZE:-} ]]; then
	(ulimit -s 128; exec "$bin" run paged_attention --enable-l2-swimlane --enable-dep-gen \
		--enable-pmu -o "$root/s128") >"$root/ss.out" 2>"$root/ss.err" ||
		bad "ulimit -s 128, run with every profiler: exit $?, $(tail -2 "$root/ss.err")"
fi

if [[ $fail -eq 0 ]]; then
	echo "bad case shared objects: all checks passed"
fi
exit $fail
