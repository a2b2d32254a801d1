#!/usr/bin/env bash
# What `taskprof op` does with the arguments of a launch call
# (docs/op.md "Which launches", "Limits"), with tests/op_apps/rejected.c
# and tests/op_apps/args_write.c:
#
#   C1 launch calls the runtime rejects (a NULL kernel, block_dim 0 and
#      65536, cores 99, then a NULL kernel between the two real launches)
#      are no launches: each returns the runtime's own -EINVAL and message
#      (stdout as unprofiled), the default selection profiles the first
#      real launch, launches_<pid>.txt has 2 launch lines and 5 "# rejected"
#      lines, and the last line says "profiled 1 of the application's 2
#      kernel launches ...; 5 launch calls the runtime rejected"; the
#      rejected calls used to take the -c 1 slot (a failed kernel_(nil) row)
#   C2 --launch-skip-before-match 1 skips first_acc, not a rejected call:
#      second_acc is profiled
#   C3 -k '*' -c 10: exactly first_acc and second_acc, "profiled 2 kernel
#      launches; 5 launch calls ..."; -k nomatch: NOTE.txt and stderr count
#      the 2 launches and the 5 rejected calls
#   C4 range replay: the rejected calls fail at the call inside the range
#      (cores 99 used to be captured and to fail only at the pop), both real
#      launches are profiled, the output is the unprofiled one
#   C5 application replay: first_acc profiled and merged, the rejected calls
#      counted apart
#   C6 --target-processes all: a forked child's launch on the device its
#      parent opened gets the runtime's -ENODEV and is a rejected call of the
#      child (a "# rejected ... error=-19" line), not a failed profile
#   A1 a kernel that writes its args struct (calls += 1, out[calls] = ...):
#      kernel replay does not undo it (bytes beside a struct may be another
#      thread's: a write-back reverted such a counter), so the application
#      sees every execution's write (calls = W + P + 1), and one warning
#      names the byte and the executions (it used to say nothing)
#   A2 the same with --warm-up 3
#   N1 args followed by a counter another thread increments during the
#      launch: never reverted (a write-back of the changed bytes once made
#      it go back), the change is said
#   A3 range replay: every pass runs the captured args (one output hash,
#      out as unprofiled) and one warning says so
#   A4 application replay: each run executes the launch once, no warning
#   R1 range replay, args that are a device allocation (range_args dev):
#      the kernel writes that device memory, not a host copy of it, so
#      the application reads 1 1 as unprofiled (it read 0 0), and no
#      warning calls it the application's args struct
#   R2 range replay, a number passed as args (range_args value): passed
#      unchanged, so the kernel gets 42 (it got a zeroed copy)
#   R3 range replay, an args struct of 816 bytes whose kernel reads byte
#      +808 (range_args big): the read faults in the guard after the
#      256-byte copy, and taskprof op exits 1 naming the launch, the
#      limit and the remedy; the application never prints a result (it
#      printed garbage and taskprof op said ok); the same when the launch
#      is not selected (-k nomatch: the range still runs on copies);
#      kernel replay passes the struct itself: right result
#   K1 --kill on -c 2 --launch-skip 1 op_accumulate 5: the last line says
#      "profiled 2 of the 3 kernel launches the application made before
#      --kill on ended it"; -c 2 op_accumulate 2: "profiled 2 kernel
#      launches, then --kill on ended the application"; without --kill the
#      wording is unchanged
#
# usage: test_op_launch_args.sh TASKPROF_BINARY
. "$(dirname "$0")/op_test_lib.sh" "$1"

RJ=$APPS/rejected
AW=$APPS/args_write
RA=$APPS/range_args
need "$RJ" "$AW" "$RA" "$EX/op_accumulate"
M=PipeUtilization,Memory
# R3 ends the process with threads still running, on purpose (as
# test_op_robust.sh R4): not a leak to report under TSan.
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}report_thread_leaks=0"

# launch_lines OPDIR: launch lines of the launches files; rejected_lines:
# their "# rejected" lines.
launch_lines() { cat "$1"/launches_*.txt 2>/dev/null | grep -c '^device='; }
rejected_lines() { cat "$1"/launches_*.txt 2>/dev/null | grep -c '^# rejected '; }

say "C1: rejected launch calls are passed through, not profiled, not counted"
OP_OUT_FILE=$WORK/c.ref app_run c.plain "$RJ"
[ $APPRC = 0 ] || { bad "C1: the unprofiled run exited $APPRC"; show "$WORK/c.plain.err"; }
OP_OUT_FILE=$WORK/c1.bin op_run c1 --aic-metrics $M -- "$RJ"
if [ $OPRC = 0 ] && diff <(grep '^rejected: call' "$WORK/c.plain.out") \
	<(grep '^rejected: call' "$WORK/c1.out") >/dev/null &&
	[ "$(grep -c '^rejected: call [0-9] -> -22 tp_rt_launch' "$WORK/c1.out")" = 5 ]; then
	ok "C1: exit 0; the 5 calls returned the runtime's -22 and message, as unprofiled"
else
	bad "C1: exit $OPRC; want 0 and the calls' lines of the unprofiled run"
	show "$WORK/c1.out"
fi
same_bytes C1 "$WORK/c.ref" "$WORK/c1.bin"
got=$(launch_set "${OPDIR:-/nonexistent}")
if [ "$got" = "device0/first_acc/0 block_dim=4" ]; then
	ok "C1: the one profiled launch is first_acc"
else
	bad "C1: profiled '$got', want 'device0/first_acc/0 block_dim=4' (no kernel__nil_)"
fi
check_launch_dir C1 "${OPDIR:-/nonexistent}/device0/first_acc/0" 2 1
nl=$(launch_lines "${OPDIR:-/nonexistent}")
nr=$(rejected_lines "${OPDIR:-/nonexistent}")
if [ "$nl" = 2 ] && [ "$nr" = 5 ] &&
	grep -q '^# rejected device=0 name=kernel__nil_ block_dim=4 error=-22$' \
		"${OPDIR:-/nonexistent}"/launches_*.txt; then
	ok "C1: launches file: 2 launch lines, 5 '# rejected' lines"
else
	bad "C1: launches file: $nl launch and $nr rejected lines, want 2 and 5"
	show "$(ls "${OPDIR:-/nonexistent}"/launches_*.txt 2>/dev/null | head -1)"
fi
lf=$(basename "$(ls "${OPDIR:-/nonexistent}"/launches_*.txt 2>/dev/null | head -1)")
want="taskprof op: profiled 1 of the application's 2 kernel launches (--launch-count 1, the selection and the skips decide which; $lf lists them all); 5 launch calls the runtime rejected (passed through unprofiled, not counted as launches); output $OPDIR"
if grep -qxF "$want" "$WORK/c1.err"; then
	ok "C1: the last line counts 1 of 2 launches and 5 rejected calls"
else
	bad "C1: want the line '$want'"
	show "$WORK/c1.err"
fi

say "C2: --launch-skip-before-match 1 skips a launch, not a rejected call"
op_run c2 --aic-metrics $M --launch-skip-before-match 1 -- "$RJ"
got=$(launch_set "${OPDIR:-/nonexistent}")
if [ $OPRC = 0 ] && [ "$got" = "device0/second_acc/0 block_dim=4" ]; then
	ok "C2: second_acc profiled"
else
	bad "C2: exit $OPRC, profiled '$got', want 0 and 'device0/second_acc/0 block_dim=4'"
	show "$WORK/c2.err"
fi

say "C3: -k '*' -c 10 profiles both real launches; a selection that matches none counts them"
op_run c3 --aic-metrics $M -k '*' -c 10 -- "$RJ"
got=$(launch_set "${OPDIR:-/nonexistent}")
if [ $OPRC = 0 ] && [ "$got" = "device0/first_acc/0 block_dim=4 device0/second_acc/0 block_dim=4" ] &&
	grep -q "^taskprof op: profiled 2 kernel launches; 5 launch calls the runtime rejected (passed through unprofiled, not counted as launches); output " \
		"$WORK/c3.err"; then
	ok "C3: first_acc and second_acc, 'profiled 2 kernel launches; 5 launch calls the runtime rejected'"
else
	bad "C3: exit $OPRC, profiled '$got'; want both and the counts on the last line"
	show "$WORK/c3.err"
fi
op_run c3n --aic-metrics $M -k nomatch -- "$RJ"
if [ $OPRC = 0 ] && grep -q "no kernel launch was profiled (the application launched 2 kernels and made 5 launch calls the runtime rejected (passed through unprofiled); selection: --kernel-name nomatch" "$WORK/c3n.err" &&
	grep -q '^The application launched 2 kernels\.$' "${OPDIR:-/nonexistent}/NOTE.txt" &&
	grep -q '^It also made 5 tp_rt_launch calls that the runtime rejected' "${OPDIR:-/nonexistent}/NOTE.txt"; then
	ok "C3 nomatch: stderr and NOTE.txt count 2 launches and 5 rejected calls"
else
	bad "C3 nomatch: exit $OPRC; want the counts in stderr and NOTE.txt"
	show "$WORK/c3n.err"
	show "${OPDIR:-/nonexistent}/NOTE.txt"
fi

say "C4: range replay: a rejected call fails at the call, not at the pop"
OP_OUT_FILE=$WORK/c.rref app_run c.rplain "$RJ" range
OP_OUT_FILE=$WORK/c4.bin op_run c4 --aic-metrics $M --replay-mode range --range-markers on -c 10 \
	-- "$RJ" range
if [ $OPRC = 0 ] && diff <(grep '^rejected: call' "$WORK/c.rplain.out") \
	<(grep '^rejected: call' "$WORK/c4.out") >/dev/null &&
	grep -q '^rejected range: ok$' "$WORK/c4.out"; then
	ok "C4: exit 0; the calls' results as unprofiled (cores 99 included), result ok"
else
	bad "C4: exit $OPRC; want 0, the unprofiled calls' lines and 'rejected range: ok'"
	show "$WORK/c4.out"
	show "$WORK/c4.err"
fi
same_bytes C4 "$WORK/c.rref" "$WORK/c4.bin"
got=$(launch_set "${OPDIR:-/nonexistent}")
st1=$(kv "${OPDIR:-/nonexistent}/device0/first_acc/0/launch.txt" status)
st2=$(kv "${OPDIR:-/nonexistent}/device0/second_acc/0/launch.txt" status)
if [ "$got" = "device0/first_acc/0 block_dim=4 device0/second_acc/0 block_dim=4" ] &&
	[ "$st1" = ok ] && [ "$st2" = ok ] && [ "$(rejected_lines "$OPDIR")" = 5 ] &&
	grep -q "; 5 launch calls the runtime rejected" "$WORK/c4.err"; then
	ok "C4: both launches of the range profiled (status ok), 5 calls rejected"
else
	bad "C4: profiled '$got' (status '$st1' '$st2'); want both with status ok, 5 rejected"
	show "$WORK/c4.err"
fi

say "C5: application replay: the rejected calls are not launches to match"
OP_OUT_FILE=$WORK/c5.bin op_run c5 --aic-metrics $M --replay-mode application -- "$RJ"
got=$(launch_set "${OPDIR:-/nonexistent}")
if [ $OPRC = 0 ] && [ "$got" = "device0/first_acc/0 block_dim=4" ] &&
	[ "$(kv "${OPDIR:-/nonexistent}/device0/first_acc/0/launch.txt" passes_done)" = 2 ] &&
	grep -q "^taskprof op: profiled 1 of the application's 2 kernel launches .*; 5 launch calls the runtime rejected" "$WORK/c5.err"; then
	ok "C5: first_acc merged from 2 runs; 1 of 2 launches, 5 rejected calls"
else
	bad "C5: exit $OPRC, profiled '$got'; want first_acc with 2 passes and the counts"
	show "$WORK/c5.err"
fi
same_bytes C5 "$WORK/c.ref" "$WORK/c5.bin"

if [[ ${TASKPROF_TEST_SANITIZE:-} == thread ]]; then
	# As test_op_process.sh I15 after: no fork of a multi-threaded process
	# under ThreadSanitizer.
	echo "skip: C6 (TSan: a child of a multi-threaded fork)"
else
	say "C6: a forked child's launch on its parent's device is a rejected call"
	op_run c6 --aic-metrics $M -c 10 --target-processes all -- "$RJ" fork
	got=$(launch_set "${OPDIR:-/nonexistent}")
	if [ $OPRC = 0 ] && [ "$got" = "device0/first_acc/0 block_dim=4 device0/second_acc/0 block_dim=4" ] &&
		grep -q '^rejected: child call -> -19 tp_rt: device 0 was opened by process ' "$WORK/c6.out" &&
		[ "$(cat "${OPDIR:-/nonexistent}"/launches_*.txt | grep -c '^# rejected device=0 name=op_app_accumulate block_dim=4 error=-19$')" = 1 ] &&
		grep -q "^taskprof op: profiled 2 kernel launches; 6 launch calls the runtime rejected" "$WORK/c6.err"; then
		ok "C6: the child's call got -ENODEV, logged as rejected; 2 launches profiled, 6 calls rejected"
	else
		bad "C6: exit $OPRC, profiled '$got'; want 0, first_acc and second_acc, the child's -19 rejected"
		show "$WORK/c6.out"
		show "$WORK/c6.err"
	fi
fi

# args_check LABEL NAME WARMUP EXECS: a kernel-replay run NAME of args_write
# whose kernel writes its args: not undone (memory beside the struct may be
# another thread's), so the application sees every execution's write
# (calls = EXECS + 1), and one warning names byte +8 and the EXECS replayed
# executions; no host-write warning for it.
args_check() {
	local label=$1 name=$2 w=$3 execs=$4 d=${OPDIR:-/nonexistent}/device0/aw_count/0
	# the application finds calls != 1 and exits 1, which taskprof op
	# passes on (and says)
	if [ $OPRC = 1 ] &&
		grep -q "^args_write: calls after one launch = $((execs + 1)) (want 1)$" "$WORK/$name.out" &&
		grep -q "^taskprof op: the application exited with status 1 (passed on as taskprof op's)" "$WORK/$name.err"; then
		ok "$label: every execution's write reached the application (calls = $((execs + 1)), exit 1)"
	else
		bad "$label: exit $OPRC; want 1 (the application's) and calls = $((execs + 1))"
		show "$WORK/$name.out"
	fi
	[ "$(kv "$d/launch.txt" status)" = ok ] && [ "$(kv "$d/launch.txt" warm_up)" = "$w" ] ||
		{ bad "$label: launch.txt: want status=ok warm_up=$w"; show "$d/launch.txt"; }
	if [ "$(grep -c 'aw_count: the args memory changed' "$WORK/$name.err")" = 1 ] &&
		grep -q "^taskprof op: warning: aw_count: the args memory changed during $execs of the $execs replayed executions (byte +8 at 0x[0-9a-f]*): the kernel wrote its args, or another thread wrote memory beside them; not undone" "$WORK/$name.err" &&
		grep -q 'aw_count: the args memory changed' "${OPDIR:-/nonexistent}/taskprof.log"; then
		ok "$label: one warning (stderr and taskprof.log) naming byte +8 and $execs executions"
	else
		bad "$label: want one 'the args memory changed during $execs of the $execs ... (byte +8' warning"
		show "$WORK/$name.err"
	fi
	if grep -q 'wrote memory outside every' "$WORK/$name.err"; then
		bad "$label: a host-write warning for the args"
	fi
}

say "A1: a kernel that writes its args struct, kernel replay"
OP_OUT_FILE=$WORK/a.ref app_run a.plain "$AW"
grep -q '^args_write: calls after one launch = 1 (want 1)$' "$WORK/a.plain.out" ||
	bad "A1: the unprofiled run: want calls = 1"
OP_OUT_FILE=$WORK/a1.bin op_run a1 --aic-metrics $M -- "$AW"
args_check A1 a1 1 3

say "A2: the same with --warm-up 3"
OP_OUT_FILE=$WORK/a2.bin op_run a2 --aic-metrics $M --warm-up 3 -- "$AW"
args_check A2 a2 3 5

say "N1: args beside memory another thread writes during the launch"
op_run n1 --aic-metrics $M -- "$AW" neighbor
if [ $OPRC = 0 ] && grep -q '^args_write: the neighbour went back 0 times$' "$WORK/n1.out" &&
	grep -q "^taskprof op: warning: aw_count: the args memory changed during [0-9]* of the 3 replayed executions (bytes +16..+[12][0-9] at 0x[0-9a-f]*): the kernel wrote its args, or another thread wrote memory beside them" "$WORK/n1.err"; then
	ok "N1: the neighbour's counter never went back; the change is said"
else
	bad "N1: exit $OPRC; want 0, 'the neighbour went back 0 times' and the args warning (a write-back once reverted the counter)"
	show "$WORK/n1.out"
	show "$WORK/n1.err"
fi

say "A3: range replay runs every pass with the captured args"
OP_OUT_FILE=$WORK/a3.bin op_run a3 --aic-metrics $M --replay-mode range --range-markers on \
	-- "$AW" range
if [ $OPRC = 0 ] && grep -q '^args_write: out = 1 0 0 0 0 0 0 0$' "$WORK/a3.out"; then
	ok "A3: exit 0, out as unprofiled"
else
	bad "A3: exit $OPRC; want 0 and 'out = 1 0 0 0 0 0 0 0'"
	show "$WORK/a3.out"
fi
same_bytes A3 "$WORK/a.ref" "$WORK/a3.bin"
check_launch_dir A3 "${OPDIR:-/nonexistent}/device0/aw_count/0" 2 1
if [ "$(grep -c "aw_count: the kernel wrote its args (byte +8 of the copy range aw captured): put back after each execution" "$WORK/a3.err")" = 1 ]; then
	ok "A3: one warning naming the range's copy"
else
	bad "A3: want one 'the kernel wrote its args (byte +8 of the copy range aw captured)' warning"
	show "$WORK/a3.err"
fi

say "A4: application replay executes the launch once per run: no warning"
OP_OUT_FILE=$WORK/a4.bin op_run a4 --aic-metrics $M --replay-mode application -- "$AW"
if [ $OPRC = 0 ] && grep -q '^args_write: calls after one launch = 1 (want 1)$' "$WORK/a4.out" &&
	! grep -q 'wrote its args' "$WORK/a4.err"; then
	ok "A4: calls = 1, no warning"
else
	bad "A4: exit $OPRC; want 0, calls = 1 and no args warning"
	show "$WORK/a4.err"
fi
same_bytes A4 "$WORK/a.ref" "$WORK/a4.bin"

# range_ok LABEL NAME MODE KERNEL RESULT: a range-replay run NAME of
# `range_args MODE` exited 0 with "range_args: MODE d = RESULT" (the
# unprofiled result), KERNEL's launch measured in 2 passes, and no args
# warning.
range_ok() {
	local label=$1 name=$2 mode=$3 kernel=$4 want=$5
	app_run "$name.plain" "$RA" "$mode"
	grep -qx "range_args: $mode d = $want" "$WORK/$name.plain.out" ||
		{ bad "$label: the unprofiled run: want 'd = $want'"; show "$WORK/$name.plain.out"; }
	op_run "$name" --aic-metrics $M --replay-mode range --range-markers on -- "$RA" "$mode"
	if [ $OPRC = 0 ] && grep -qx "range_args: $mode d = $want" "$WORK/$name.out"; then
		ok "$label: exit 0, d = $want as unprofiled"
	else
		bad "$label: exit $OPRC; want 0 and 'range_args: $mode d = $want'"
		show "$WORK/$name.out"
		show "$WORK/$name.err"
	fi
	check_launch_dir "$label" "${OPDIR:-/nonexistent}/device0/$kernel/0" 2 1
	if grep -q 'args' "$WORK/$name.err"; then
		bad "$label: a warning about the args"
		show "$WORK/$name.err"
	fi
}

say "R1: range replay, args that are device memory: the kernel writes it"
range_ok R1 r1 dev ra_dev "1 1"

say "R2: range replay, a number passed as args: passed unchanged"
range_ok R2 r2 value ra_value "42 42"

say "R3: range replay, an args struct larger than the 256-byte copy: an error, no result"
app_run r3.plain "$RA" big
grep -qx "range_args: big d = 12345 0" "$WORK/r3.plain.out" ||
	{ bad "R3: the unprofiled run: want 'd = 12345 0'"; show "$WORK/r3.plain.out"; }
r3msg="ra_big (range 'ra'): the kernel read byte +808 of its args, past the 256 bytes range replay copied: range replay runs a captured launch on a copy of at most 256 bytes of its args (the runtime passes no args size), so a larger args struct is not supported; use --replay-mode kernel or application, or keep the args struct within 256 bytes (larger data in device memory)"
# r3_check LABEL NAME: exit 1, the error, no result printed.
r3_check() {
	if [ $OPRC = 1 ] && grep -qF "taskprof op: error: $r3msg; the application was ended (exit status 70)" "$WORK/$2.err" &&
		grep -q "^taskprof op: the profiler failed inside the application" "$WORK/$2.err" &&
		! grep -q "range_args: big d" "$WORK/$2.out"; then
		ok "$1: exit 1, the error names the launch, the 256 bytes and the remedy; no result"
	else
		bad "$1: exit $OPRC; want 1, the args error, and no 'range_args: big d' line"
		show "$WORK/$2.out"
		show "$WORK/$2.err"
	fi
}
op_run r3 --aic-metrics $M --replay-mode range --range-markers on -- "$RA" big
r3_check R3 r3
d=${OPDIR:-/nonexistent}/device0/ra_big/0
if [ "$(kv "$d/launch.txt" status)" = failed ] &&
	grep -qF "note=$r3msg" "$d/launch.txt" &&
	grep -qF "$d: failed: $r3msg" "$WORK/r3.err"; then
	ok "R3: launch.txt status=failed with the error as its note, named on stderr"
else
	bad "R3: want launch.txt status=failed and the note"
	show "$d/launch.txt"
fi
op_run r3k --aic-metrics $M --replay-mode range --range-markers on -k nomatch -- "$RA" big
r3_check "R3 -k nomatch" r3k
op_run r3kr --aic-metrics $M -- "$RA" big
if [ $OPRC = 0 ] && grep -qx "range_args: big d = 12345 0" "$WORK/r3kr.out"; then
	ok "R3 kernel replay: exit 0, d = 12345 0"
else
	bad "R3 kernel replay: exit $OPRC; want 0 and 'd = 12345 0'"
	show "$WORK/r3kr.out"
fi

say "K1: --kill on: the last line says the application was ended"
op_run k1 --aic-metrics BasicInfo --kill on -c 2 --launch-skip 1 -- "$EX/op_accumulate" 5
if [ $OPRC = 0 ] && grep -q "^taskprof op: profiled 2 of the 3 kernel launches the application made before --kill on ended it (--launch-count 2, the selection and the skips decide which; launches_[0-9]*\.txt lists them all); output " "$WORK/k1.err" &&
	grep -q '^# killed by --kill on: 2 launches profiled on device 0$' "${OPDIR:-/nonexistent}"/launches_*.txt; then
	ok "K1: 'profiled 2 of the 3 kernel launches the application made before --kill on ended it'"
else
	bad "K1: exit $OPRC; want the --kill on wording and the '# killed' line"
	show "$WORK/k1.err"
fi
op_run k1b --aic-metrics BasicInfo --kill on -c 2 -- "$EX/op_accumulate" 2
if [ $OPRC = 0 ] && grep -q "^taskprof op: profiled 2 kernel launches, then --kill on ended the application; output " "$WORK/k1b.err"; then
	ok "K1: 'profiled 2 kernel launches, then --kill on ended the application'"
else
	bad "K1: exit $OPRC; want 'profiled 2 kernel launches, then --kill on ended the application'"
	show "$WORK/k1b.err"
fi
# --kill on with fewer launches than -c: the application ended by itself.
op_run k1c --aic-metrics BasicInfo --kill on -c 3 -- "$EX/op_accumulate" 2
if [ $OPRC = 0 ] && grep -q "^taskprof op: profiled 2 kernel launches; output " "$WORK/k1c.err" &&
	! grep -q '^# killed' "${OPDIR:-/nonexistent}"/launches_*.txt; then
	ok "K1: -c 3 of 2 launches: 'profiled 2 kernel launches', nothing about --kill"
else
	bad "K1: exit $OPRC; want 'profiled 2 kernel launches; output' and no '# killed' line"
	show "$WORK/k1c.err"
fi

finish
