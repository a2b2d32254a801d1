#!/usr/bin/env bash
# Regression checks of the `taskprof op` injector (src/op/inject/,
# docs/op-internals.md) for bugs an adversarial review found, all with
# tests/op_apps/robust.c:
#
#   R1 over --replay-mem-limit with args that reach memory only indirectly:
#      no partial snapshot: the whole device spilled to dump/ (every pass,
#      output identical); with no room to spill (ulimit -f 100 KiB), one
#      execution (the application's), output identical, status=degraded,
#      snapshot_scope=none, output_hash 0
#   R2 a launch with no device memory at all: output_hash 0 in every pass
#   R3 a kernel that calls tp_rt_malloc / tp_rt_free: no deadlock, output
#      identical, every pass measured
#   R4 --kill on -c 2 with 4 threads launching: exactly 2 launch folders,
#      each with launch.txt
#   R5 tp_rt_reset_device inside a range (range replay): -EBUSY, "unsupported
#      in range", the range still replays and the output is right
#   R6 ranges never popped (main thread, and a thread still running at
#      exit): every launch folder has launch.txt, status=failed, the note
#   R7 -k matches the real kernel name; two names that sanitise alike get
#      their own folders and their real name in launch.txt / Op Name, and
#      in application replay match only themselves across runs
#   R8 names starting with '.': a visible folder inside device0
#   R9 the application ends inside a replay pass: the launch folder without
#      launch.txt is skipped with a warning and the closing line counts it
#      as incomplete, not profiled
#   R10 inside a range: an H2D copy past its buffer and a free of an address
#      no allocation starts at return the runtime's -EFAULT / -EINVAL under
#      range replay too (the copy used to read the host bytes first: SIGSEGV)
#   R11 a range with a failing launch in the middle: every later operation
#      still runs (the output is the unprofiled one), the pop returns the
#      error, the launches say status=failed with the pass or warm-up
#   R12 an application that closes descriptors 2..255 and opens a file that
#      gets number 2: the injector's lines go to taskprof.log (opened
#      again), never into that file
#   R13 host_write: a kernel that writes host memory through its args (a
#      global, a heap array) gets one warning (stderr and taskprof.log)
#      in kernel and range replay: replay cannot restore it; a kernel that
#      only reads it, application replay, and the examples get none
#   R14 launch.txt has args_size (spec §4.12): 256 for args on the stack (the
#      window read), 0 for NULL args, 256 for a range's captured copy
#   R15 an application that exits 70 itself (EX_SOFTWARE): taskprof op exits
#      70 with the whole profile, not "the profiler failed" (the injector's
#      own status 70 comes with its injector_failed.txt mark)
#   R15b a kernel writing 64 KiB past its out overwrites the tool's hidden
#      instrumentation buffer: the launch is profiled (the injector used to
#      take the overwritten header's geometry and crash the application),
#      a warning names it and instr.txt carries no points
#   R16 a double tp_rt_free inside a range: the second returns the runtime's
#      -EINVAL at the call under range replay too (it used to return 0),
#      a copy into the freed block its -EFAULT, and no deferred free fails
#      at the pop
#   R17 a SIGINT during a replay pass that never ends: the application ends
#      by it 3 s later (exit 130, the launch status=interrupted), not at the
#      60 s pass timeout; the same when the application's own execution
#      after the passes hangs (R17b: no pass deadline there; the 4 passes
#      are kept and reported); the ranges never popped of R6 count as failed,
#      not profiled; application replay interrupted in its first run exits
#      130 with no report (R17c), in its second reports the first (R17d)
#   R18 main() returns while another thread launches: 12 runs, none hangs,
#      each exits 0 after the application's atexit handler; R18a the same
#      in application replay (3 runs)
#   R19 / R19r kernels that allocate (kleak) or free (kfree) device memory under
#      kernel replay (R19r: inside a range, range replay): the replayed
#      executions' blocks are freed after each,
#      their frees of older blocks left to the application's execution;
#      R19d: a double free of its own block there gets -EINVAL;
#      R19n: its free in the application's own execution leaves the
#      registry (the next launch is replayed on the other blocks)
#
# usage: test_op_robust.sh TASKPROF_BINARY
. "$(dirname "$0")/op_test_lib.sh" "$1"

R=$APPS/robust
need "$R" "$APPS/kernel_alloc" "$APPS/slow" "$APPS/host_write" "$APPS/deterministic" "$EX/op_accumulate"
OP_TIMEOUT=60
# R4 and R6 end the process with threads still running, on purpose: not a
# leak to report under TSan (races are still reported).
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}report_thread_leaks=0"

# every_launch_txt LABEL OPDIR: each launch folder has a launch.txt.
every_launch_txt() {
	local d n=0 miss=0
	for d in "$2"/device*/*/*/; do
		[ -d "$d" ] || continue
		n=$((n + 1))
		[ -f "$d/launch.txt" ] || { miss=$((miss + 1)); echo "   | no launch.txt: $d"; }
	done
	if [ $miss = 0 ]; then
		ok "$1: all $n launch folder(s) have launch.txt"
	else
		bad "$1: $miss of $n launch folder(s) without launch.txt"
	fi
}

say "R1: indirect args over --replay-mem-limit 8K: the whole device spilled, never the args only"
OP_OUT_FILE=$WORK/r1.ref app_run r1.plain "$R" indirect
OP_OUT_FILE=$WORK/r1s.bin op_run r1s --replay-mem-limit 8K -- "$R" indirect
d=${OPDIR:-/nonexistent}/device0/ind_acc/0
foot=$(kv "$d/launch.txt" snapshot_bytes)
if [ $OPRC = 0 ] && cmp -s "$WORK/r1.ref" "$WORK/r1s.bin" && [ "$(kv "$d/launch.txt" status)" = ok ] &&
	[ "$(kv "$d/launch.txt" snapshot_storage)" = file ] && [ "${foot:-0}" -gt $((128 << 10)) ]; then
	ok "R1 spill: output identical, status=ok, snapshot_storage=file, snapshot_bytes=$foot (in and out too)"
else
	bad "R1 spill: exit $OPRC, want 0, identical output, status=ok, snapshot_storage=file, snapshot_bytes > 128 KiB"
	show "$d/launch.txt"
fi
say "R1: the same with no room to spill (ulimit -f 100 KiB): one execution, degraded"
(
	ulimit -f 100
	OP_OUT_FILE=$WORK/r1.bin TASKPROF_SIM_STATS=1 op_run r1 --replay-mem-limit 8K -- "$R" indirect
	echo "$OPRC $OPDIR" >"$WORK/r1.rc"
)
read -r OPRC OPDIR <"$WORK/r1.rc"
if [ $OPRC = 0 ] && [ -n "$OPDIR" ]; then
	same_bytes R1 "$WORK/r1.ref" "$WORK/r1.bin"
	d=$OPDIR/device0/ind_acc/0
	if [ "$(kv "$d/launch.txt" status)" = degraded ] &&
		[ "$(kv "$d/launch.txt" snapshot_scope)" = none ] &&
		[ "$(kv "$d/launch.txt" passes_done)" = 1 ] &&
		grep -q 'limit .*no room to spill it' <<<"$(kv "$d/launch.txt" note)"; then
		ok "R1: degraded, snapshot_scope=none, 1 pass, note: $(kv "$d/launch.txt" note)"
	else
		bad "R1: want status=degraded snapshot_scope=none passes_done=1 and a limit note"
		show "$d/launch.txt"
	fi
	n=$(sim_launches "$WORK/r1.err" 0)
	[ "$n" = 1 ] && ok "R1: 1 kernel execution (the application's)" ||
		bad "R1: $n kernel executions, want 1"
	if grep -q 'output_hash=0000000000000000' "$d/dump/replay.txt"; then
		ok "R1: output_hash 0 (nothing snapshotted)"
	else
		bad "R1: want output_hash=0000000000000000"
		show "$d/dump/replay.txt"
	fi
else
	bad "R1: taskprof op exited $OPRC"
	show "$WORK/r1.err"
fi

say "R2: a launch with no device memory: output_hash 0"
op_run r2 -- "$R" noalloc
d=${OPDIR:-none}/device0/empty_k/0
if [ $OPRC = 0 ] && [ -s "$d/dump/replay.txt" ]; then
	np=$(grep -c '^pass=' "$d/dump/replay.txt")
	nz=$(grep -c 'output_hash=0000000000000000' "$d/dump/replay.txt")
	[ "$np" -ge 2 ] && [ "$np" = "$nz" ] && ok "R2: $nz of $np passes with output_hash 0" ||
		{ bad "R2: $nz of $np passes with output_hash 0"; show "$d/dump/replay.txt"; }
else
	bad "R2: taskprof op exited $OPRC, or no replay.txt"
	show "$WORK/r2.err"
fi

say "R3: a kernel calling tp_rt_malloc / tp_rt_free under kernel replay"
OP_OUT_FILE=$WORK/r3.ref app_run r3.plain "$R" kmalloc
OP_OUT_FILE=$WORK/r3.bin OP_TIMEOUT=30 op_run r3 --warm-up 1 -- "$R" kmalloc
if [ $OPRC = 0 ] && [ -n "$OPDIR" ]; then
	same_bytes R3 "$WORK/r3.ref" "$WORK/r3.bin"
	d=$OPDIR/device0/kmalloc_k/0
	pd=$(kv "$d/launch.txt" passes_done)
	if [ "$(kv "$d/launch.txt" status)" = ok ] && [ "$pd" = "$(passes_of "$OPDIR")" ]; then
		ok "R3: status=ok, $pd passes"
	else
		bad "R3: want status=ok and every pass"
		show "$d/launch.txt"
	fi
else
	bad "R3: taskprof op exited $OPRC (124: deadlock)"
	show "$WORK/r3.err"
fi

say "R4: --kill on -c 2, 4 threads launching concurrently (5 runs)"
r4bad=0
for i in 1 2 3 4 5; do
	op_run "r4_$i" --kill on -c 2 -- "$R" kill
	n=$(ls -d "${OPDIR:-none}"/device0/kill_k/*/ 2>/dev/null | wc -l)
	t=$(ls "${OPDIR:-none}"/device0/kill_k/*/launch.txt 2>/dev/null | wc -l)
	if [ $OPRC != 0 ] || [ "$n" != 2 ] || [ "$t" != 2 ]; then
		r4bad=1
		bad "R4 run $i: exit $OPRC, $n folder(s), $t launch.txt (want 0, 2, 2)"
		show "$WORK/r4_$i.err"
	fi
done
[ $r4bad = 0 ] && ok "R4: 5 runs, each 2 folders with launch.txt"

say "R5: tp_rt_reset_device inside a range (range replay)"
OP_OUT_FILE=$WORK/r5.bin op_run r5 --replay-mode range --range-markers on -- "$R" reset
if grep -q 'reset rc=-16 .*unsupported in range' "$WORK/r5.out"; then
	ok "R5: $(grep -o 'reset rc=-16' "$WORK/r5.out"), 'unsupported in range'"
else
	bad "R5: want 'reset rc=-16' with 'unsupported in range'"
	show "$WORK/r5.out"
fi
if [ $OPRC = 0 ] && grep -q 'robust reset: .*: ok' "$WORK/r5.out" &&
	[ "$(kv "${OPDIR:-none}/device0/reset_acc/0/launch.txt" status)" = ok ]; then
	ok "R5: the range replayed (status=ok), output right"
else
	bad "R5: taskprof op exited $OPRC; want the range replayed and a right output"
	show "$WORK/r5.err"
fi

say "R6: ranges never popped (main thread, and a thread alive at exit)"
op_run r6 --replay-mode range --range-markers on -c 5 -- "$R" unpopped
if [ -n "$OPDIR" ]; then
	every_launch_txt R6 "$OPDIR"
	sets=$(launch_set "$OPDIR")
	want="device0/never_acc/0 block_dim=4 device0/never_acc/1 block_dim=4 device0/side_acc/0 block_dim=4"
	[ "$sets" = "$want" ] && ok "R6: folders $sets" || bad "R6: folders '$sets', want '$want'"
	n=$(grep -l "^note=range 'never' was never popped: its 2 captured launches never ran" \
		"$OPDIR"/device0/never_acc/*/launch.txt 2>/dev/null | wc -l)
	m=$(grep -l "^note=range 'side' was never popped: its 1 captured launches never ran" \
		"$OPDIR"/device0/side_acc/*/launch.txt 2>/dev/null | wc -l)
	f=$(grep -l '^status=failed' "$OPDIR"/device0/*/*/launch.txt 2>/dev/null | wc -l)
	if [ "$n" = 2 ] && [ "$m" = 1 ] && [ "$f" = 3 ]; then
		ok "R6: 3 launch.txt with status=failed and the never-popped note"
	else
		bad "R6: notes never=$n/2 side=$m/1, status=failed $f/3"
		show "$OPDIR/device0/never_acc/0/launch.txt"
	fi
	grep -q "warning: range 'never' was never popped" "$WORK/r6.err" &&
		ok "R6: a warning on stderr" || bad "R6: no warning on stderr"
else
	bad "R6: no output folder (exit $OPRC)"
	show "$WORK/r6.err"
fi

say "R7b: names with invalid UTF-8 or control bytes print as '?' in the summary table"
op_run r7u -c 5 -- "$R" badnames
if [ $OPRC = 0 ] && grep -q "^k?_x " "$WORK/r7u.out" && grep -q "^ok_$(printf '\303\251') " "$WORK/r7u.out" &&
	! LC_ALL=C grep -q "$(printf '\377')" "$WORK/r7u.out"; then
	ok "R7b: 'k\\xff\\x01x' shows as k?_x (launch.txt has the control byte as _), 'ok_\\xc3\\xa9' as it is"
else
	bad "R7b: exit $OPRC; summary: $(cat -v "$WORK/r7u.out")"
fi

say "R7c: -k with a UTF-8 name selects it (it was refused as having blanks)"
op_run r7k -k "ok_$(printf '\303\251')" -c 5 -- "$R" badnames
sets=$(launch_set "${OPDIR:-none}")
if [ $OPRC = 0 ] && [ "$sets" = "device0/ok___/0 block_dim=4" ] &&
	[ "$(kv "$OPDIR/device0/ok___/0/launch.txt" name)" = "ok_$(printf '\303\251')" ]; then
	ok "R7c: -k 'ok_\xc3\xa9' selected that launch only"
else
	bad "R7c: -k 'ok_\xc3\xa9': exit $OPRC, folders '$sets' (want device0/ok___/0 only)"
	show "$WORK/r7k.err"
fi

say "R7: -k matches real kernel names"
op_run r7a -k '*<1>' -c 5 -- "$R" names
sets=$(launch_set "${OPDIR:-none}")
d=${OPDIR:-none}/device0/my_kernel_1_/0
if [ $OPRC = 0 ] && [ "$sets" = "device0/my_kernel_1_/0 block_dim=4" ] &&
	[ "$(kv "$d/launch.txt" name)" = 'my kernel<1>' ]; then
	ok "R7: -k '*<1>' selected 'my kernel<1>' only, folder my_kernel_1_/0"
else
	bad "R7: -k '*<1>': exit $OPRC, folders '$sets', name '$(kv "$d/launch.txt" name)'"
	show "$WORK/r7a.err"
fi
if [ "$(csv_col "$d/OpBasicInfo.csv" 'Op Name')" = 'my kernel<1>' ]; then
	ok "R7: Op Name is the real name"
else
	bad "R7: Op Name '$(csv_col "$d/OpBasicInfo.csv" 'Op Name')', want 'my kernel<1>'"
fi
op_run r7b -k my_kernel_1_ -c 5 -- "$R" names
sets=$(launch_set "${OPDIR:-none}")
if [ $OPRC = 0 ] && [ "$sets" = "device0/my_kernel_1_/0 block_dim=4" ] &&
	[ "$(kv "$OPDIR/device0/my_kernel_1_/0/launch.txt" name)" = my_kernel_1_ ]; then
	ok "R7: -k my_kernel_1_ selected the launch of that real name only"
else
	bad "R7: -k my_kernel_1_: exit $OPRC, folders '$sets' (want only the second launch)"
fi
op_run r7c -k my -c 5 -- "$R" names
n0=$(kv "${OPDIR:-none}/device0/my_kernel_1_/0/launch.txt" name)
n1=$(kv "${OPDIR:-none}/device0/my_kernel_1_/1/launch.txt" name)
if [ $OPRC = 0 ] && [ "$n0" = 'my kernel<1>' ] && [ "$n1" = my_kernel_1_ ]; then
	ok "R7: both launches: my_kernel_1_/0 = '$n0', my_kernel_1_/1 = '$n1'"
else
	bad "R7: -k my: exit $OPRC, names '$n0' / '$n1'"
fi
# Application replay: "a+b" and "a_b" (one folder name a_b) in the
# opposite order in run 2: strict refuses it naming both real names (it
# used to match a+b with a_b: "4 runs matched", one kernel's counters
# under the other's name); balanced matches each with itself.
op_run r7s --replay-mode application --app-replay-mode strict -c 3 \
	--aic-metrics PipeUtilization,Memory -- "$R" swapnames
if [ $OPRC = 1 ] && grep -qF "launch #0 differs: run 1 (pass 0) made device 0 a+b block_dim 4 (profiled), run 2 (pass 1) made device 0 a_b block_dim 4 (profiled)" "$WORK/r7s.err"; then
	ok "R7: application replay strict: a+b and a_b swapped in run 2 refused, both named"
else
	bad "R7: application replay strict of swapnames: exit $OPRC, want 1 naming a+b and a_b"
	show "$WORK/r7s.err"
fi
op_run r7m --replay-mode application -c 3 --aic-metrics PipeUtilization,Memory -- "$R" swapnames
n0=$(kv "${OPDIR:-none}/device0/a_b/0/launch.txt" name)
n1=$(kv "${OPDIR:-none}/device0/a_b/1/launch.txt" name)
run1=$(sed -n 's/.* k=\([0-9]*\) profiled=1 real=a+b$/\1/p' "${OPDIR:-none}/raw/run_1/launches.txt" 2>/dev/null)
if [ $OPRC = 0 ] && [ "$n0" = 'a+b' ] && [ "$n1" = a_b ] && [ "$run1" = 1 ] &&
	grep -q "2 runs matched, 2 launches profiled" "$WORK/r7m.err"; then
	ok "R7: application replay balanced: a_b/0 = a+b (run 2's a_b/1), a_b/1 = a_b"
else
	bad "R7: application replay balanced of swapnames: exit $OPRC, names '$n0' / '$n1', run 2's k of a+b '$run1'"
	show "$WORK/r7m.err"
fi

say "R8: names starting with '.' get a visible folder inside device0"
op_run r8 -c 5 -- "$R" dotnames
sets=$(launch_set "${OPDIR:-none}")
want="device0/_._up/0 block_dim=4 device0/_hidden/0 block_dim=4"
if [ $OPRC = 0 ] && [ "$sets" = "$want" ] &&
	[ "$(kv "$OPDIR/device0/_hidden/0/launch.txt" name)" = .hidden ] &&
	grep -q "^taskprof op: profiled 2 kernel launches; output" "$WORK/r8.err" &&
	! grep -q "no kernel launch was profiled" "$WORK/r8.err"; then
	ok "R8: folders $sets, both reported"
else
	bad "R8: exit $OPRC, folders '$sets', want '$want'"
	show "$WORK/r8.err"
fi

say "R9: the application ends inside a replay pass: the launch is skipped and not counted as profiled"
op_run r9 -- "$R" exitpass
d=${OPDIR:-none}/device0/exitpass_k/0
if [ $OPRC = 3 ] && [ -d "$d" ] && [ ! -f "$d/launch.txt" ] &&
	grep -q "^taskprof op: warning: $d: incomplete profile, no launch.txt" "$WORK/r9.err" &&
	grep -q "^taskprof op: profiled 0 kernel launches; 1 incomplete, skipped (see above); output" \
		"$WORK/r9.err"; then
	ok "R9: exit 3 (the application's), 'profiled 0 kernel launches; 1 incomplete, skipped'"
else
	bad "R9: exit $OPRC (want 3), or no 'incomplete profile' warning and 'profiled 0 ...; 1 incomplete' line"
	show "$WORK/r9.err"
fi

say "R10: inside a range, a copy past its buffer and a free of no allocation fail as unprofiled"
app_run r10.plain "$R" rangebad
op_run r10 --replay-mode range --range-markers on -- "$R" rangebad
want10='robust rangebad: memcpy=-14 free=-22 pop=0'
if [ "$APPRC" = 0 ] && grep -qxF "$want10" "$WORK/r10.plain.out" && [ $OPRC = 0 ] &&
	grep -qxF "$want10" "$WORK/r10.out"; then
	ok "R10: '$want10' with and without the profiler"
else
	bad "R10: unprofiled exit $APPRC, profiled exit $OPRC, want '$want10' from both"
	show "$WORK/r10.plain.out"
	show "$WORK/r10.out"
	show "$WORK/r10.err"
fi

say "R11: a range whose 6th launch fails: the later launches still run, the launches say failed"
OP_OUT_FILE=$WORK/r11.ref app_run r11.plain "$R" rangefail
for w in 1 0; do
	OP_OUT_FILE=$WORK/r11_$w.bin op_run "r11_$w" --replay-mode range --range-markers on -c 50 \
		--warm-up $w -- "$R" rangefail
	d=${OPDIR:-/nonexistent}/device0/fail_acc/9
	when=$([ $w = 1 ] && echo "warm-up 1" || echo "pass 0")
	if [ $OPRC = 0 ] && cmp -s "$WORK/r11.ref" "$WORK/r11_$w.bin" &&
		grep -q 'robust rangefail: failing launch returned 0, pop failed' "$WORK/r11_$w.out" &&
		[ "$(kv "$d/launch.txt" status)" = failed ] &&
		kv "$d/launch.txt" note | grep -q "^launch failed in $when: .*kernel fail_k" &&
		{ [ $w = 0 ] || ! grep -q "pass [0-9]* missing (.*/fail_acc/9/dump/" "$WORK/r11_$w.err"; }; then
		ok "R11 --warm-up $w: output as unprofiled, the pop failed, status=failed ($when)$([ $w = 1 ] && echo ", no 'pass N missing' lines")"
	else
		bad "R11 --warm-up $w: exit $OPRC, output $(cmp -s "$WORK/r11.ref" "$WORK/r11_$w.bin" && echo same || echo differs), launch.txt:"
		show "$d/launch.txt"
		show "$WORK/r11_$w.out"
	fi
done

say "R12: the application closes its stderr and taskprof.log's descriptor and reuses the number"
op_run r12 -- "$R" reusefd "$WORK/r12.data"
n12=$(stat -c %s "$WORK/r12.data" 2>/dev/null)
x12=$(tr -d x <"$WORK/r12.data" 2>/dev/null | wc -c)
if [ $OPRC = 0 ] && [ "$n12" = 4096 ] && [ "$x12" = 0 ] &&
	grep -q "INFO  profiling fd_acc" "${OPDIR:-/nonexistent}/taskprof.log"; then
	ok "R12: the application's file holds its 4096 bytes only; taskprof.log got the lines"
else
	bad "R12: exit $OPRC, the file has $n12 bytes ($x12 not 'x'), want 0, 4096, 0 and the log line"
	head -c 300 "$WORK/r12.data" 2>/dev/null | sed 's/^/   | /'
fi

say "R13: kernels that write host memory through their args: one warning"
W13='the kernel wrote memory outside every tp_rt_malloc allocation'
# r13 LABEL WANT(1|0) [OP OPTIONS...] -- APP [ARGS...]: the warning WANT
# times on stderr and in the log; exit 0, or 1 with the warning (the
# application sees its host value written W + P + 1 times and says so).
r13() {
	local label=$1 want=$2 n nl
	shift 2
	op_run "$label" "$@"
	n=$(grep -c "^taskprof op: warning: .*$W13" "$WORK/$label.err")
	nl=$(grep -c "WARN .*$W13" "${OPDIR:-/nonexistent}/taskprof.log" 2>/dev/null)
	if [ $OPRC = "$want" ] && [ "$n" = "$want" ] && [ "${nl:-0}" = "$want" ]; then
		if [ "$want" = 1 ]; then
			ok "$label: one warning: $(grep "$W13" "$WORK/$label.err" | cut -c1-150)..."
		else
			ok "$label: no warning"
		fi
	else
		bad "$label: exit $OPRC, $n warning(s) on stderr and ${nl:-0} in taskprof.log, want $want and $want"
		show "$WORK/$label.err"
	fi
}
if [ "${TASKPROF_TEST_SANITIZE:-}" = thread ]; then
	# The check is off under ThreadSanitizer (src/op/inject/engine.c
	# watch_begin: its runtime's own memory changes under any kernel).
	ok "R13: skipped under TSan"
else
r13 r13g 1 --aic-metrics PipeUtilization,Memory -- "$APPS/host_write" global
grep -q "hw_global: $W13 .*(args word at +8 points there).*written 4 times instead of once; use --replay-mode application" \
	"$WORK/r13g.err" && ok "R13 global: the warning names the kernel, the args word and the count" ||
	bad "R13 global: the warning does not name hw_global, +8 and 4 executions (W 1 + P 2 + 1)"
grep -q 'host_write global: host value 4 (want 1)' "$WORK/r13g.out" ||
	bad "R13 global: want the unrestored host value 4 (what the warning is about)"
r13 r13h 1 -- "$APPS/host_write" heap
r13 r13n 0 -- "$APPS/host_write" none
r13 r13r 1 --replay-mode range --range-markers on -- "$APPS/host_write" global range
r13 r13a 0 --replay-mode application --aic-metrics PipeUtilization,Memory -- "$APPS/host_write" global
grep -q 'host_write global: host value 1 (want 1)' "$WORK/r13a.out" &&
	ok "R13 application replay: the host value is right (1)" ||
	bad "R13 application replay: want 'host value 1'"
r13 r13d 0 -k '*' -c 10 -- "$APPS/deterministic"
r13 r13x 0 -- "$EX/op_accumulate"
fi

say "R14: launch.txt args_size (spec §4.12): the bytes of the args blob read"
# The runtime passes no size: a blob on the stack reads as the whole
# 256-byte window; NULL args as 0; range replay the captured copy's size.
op_run r14k --aic-metrics BasicInfo -- "$EX/op_accumulate"
a1=$(kv "${OPDIR:-/nonexistent}/device0/accumulate/0/launch.txt" args_size)
op_run r14n --aic-metrics BasicInfo -- "$R" noalloc
a2=$(kv "${OPDIR:-/nonexistent}/device0/empty_k/0/launch.txt" args_size)
op_run r14r --aic-metrics BasicInfo --replay-mode range --range-markers on -- "$APPS/host_write" none range
a3=$(kv "${OPDIR:-/nonexistent}/device0/hw_none/0/launch.txt" args_size)
if [ "$a1" = 256 ] && [ "$a2" = 0 ] && [ "$a3" = 256 ]; then
	ok "R14: args_size=256 (stack args), 0 (NULL args), 256 (range capture)"
else
	bad "R14: args_size '$a1' '$a2' '$a3', want 256 0 256"
fi

say "R15: the application's own exit status 70 is passed on, with its profile"
op_run r15 -- "$R" exit70
d=${OPDIR:-/nonexistent}/device0/exit70_acc/0
if [ $OPRC = 70 ] && [ -s "$d/OpBasicInfo.csv" ] && [ "$(kv "$d/launch.txt" status)" = ok ] &&
	! grep -q 'the profiler failed' "$WORK/r15.err" &&
	grep -q '^taskprof op: profiled 1 kernel launch;' "$WORK/r15.err" &&
	[ ! -e "${OPDIR:-/nonexistent}/injector_failed.txt" ]; then
	ok "R15: exit 70, OpBasicInfo.csv written, status=ok, no injector failure reported"
else
	bad "R15: exit $OPRC, want 70 with the launch profiled and no 'the profiler failed'"
	show "$WORK/r15.err"
fi

say "R15b: a kernel that overwrites the instrumentation buffer (a write past its out) is profiled, not crashed"
if [ -n "${TASKPROF_TEST_SANITIZE:-}" ]; then
	# The overrun is the application's bug, and the sanitizers say so: the
	# simulated device memory poisons what lies between allocations under
	# ASan, and under TSan block 0's write races with the other blocks'
	# instrumentation points.
	ok "R15b: skipped under ${TASKPROF_TEST_SANITIZE}"
else
op_run r15b -- "$R" overrun
d=${OPDIR:-/nonexistent}/device0/overrun_k/0
if [ $OPRC = 0 ] && grep -q 'robust overrun: checksum .*: ok' "$WORK/r15b.out" &&
	[ "$(kv "$d/launch.txt" status)" = ok ] &&
	grep -q "overrun_k: the instrumentation buffer's header was overwritten during the launch" \
		"$WORK/r15b.err" &&
	grep -qx '# header overwritten during the launch: points left out' "$d/dump/instr.txt" &&
	[ "$(wc -l <"$d/Instrumentation.csv")" = 1 ]; then
	ok "R15b: exit 0, launch ok, the overwritten header named, no points reported"
else
	bad "R15b: exit $OPRC, want 0 with status=ok, the warning and an instr.txt without points"
	show "$WORK/r15b.err"
fi
fi

say "R16: a double free inside a range fails at the call, as the runtime fails it"
app_run r16.plain "$R" dfree
op_run r16 --replay-mode range --range-markers on -- "$R" dfree
want16='robust dfree: free1=0 free2=-22 copy=-14 pop=0'
if grep -qx "$want16" "$WORK/r16.plain.out" && grep -qx "$want16" "$WORK/r16.out" && [ $OPRC = 0 ] &&
	grep -q 'robust dfree: checksum .*: ok' "$WORK/r16.out" &&
	! grep -q 'deferred tp_rt_free failed' "$WORK/r16.err"; then
	ok "R16: '$want16' unprofiled and under range replay, output right"
else
	bad "R16: want '$want16' in both runs (exit $OPRC)"
	show "$WORK/r16.plain.out"
	show "$WORK/r16.out"
	show "$WORK/r16.err"
fi

say "R17: a SIGINT during a pass that never ends ends the run within seconds"
if [ "${TASKPROF_TEST_SANITIZE:-}" = thread ]; then
	# ThreadSanitizer runs an asynchronous signal's handler only when the
	# thread it was delivered to next enters one of its interceptors; the
	# simulated device threads spin without any, so the handler may never
	# run there (the R17 case: a pass that never ends).
	ok "R17: skipped under TSan"
else
rm -rf "$WORK/r17"
mkdir -p "$WORK/r17"
# A background job of this (non-interactive) shell would start with SIGINT
# ignored, which taskprof op keeps ignored: python starts it with the
# default disposition, as a terminal would.
# r17_run OUT MODE: taskprof op --warm-up 1 on robust MODE, a SIGINT 2 s
# in; prints "<exit code|hung> <seconds>".
r17_run() {
python3 - "$TP" "$1" "$R" "$2" <<'PY' 2>"$1.py.err"
import signal, subprocess, sys, time
tp, out, app, mode = sys.argv[1:5]
t = time.time()
with open(out + ".out", "w") as o, open(out + ".err", "w") as e:
    p = subprocess.Popen([tp, "op", "-o", out, "--warm-up", "1", "--pass-timeout", "60",
                          "--", app, mode], stdout=o, stderr=e)
    # Inside the hung pass (pass 1 of 4) by then.
    time.sleep(2)
    p.send_signal(signal.SIGINT)
    try:
        rc = p.wait(timeout=40)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = "hung"
print(rc, int(time.time() - t))
PY
}
mkdir -p "$WORK/r17b"
r17=$(r17_run "$WORK/r17" hangpass)
set -- $r17
d=$(ls -d "$WORK"/r17/OPPROF_*/device0/hang_k/0 2>/dev/null | head -1)
if [ "${1:-}" = 130 ] && [ "${2:-99}" -lt 20 ] && [ "$(kv "${d:-/nonexistent}/launch.txt" status)" = interrupted ] &&
	grep -q 'interrupt: finishing the pass in progress' "$WORK/r17.err" &&
	grep -q 'did not end within 3 s of the SIGINT' "$WORK/r17.err"; then
	ok "R17: exit 130 after $2 s (pass timeout 60 s), status=interrupted"
else
	bad "R17: got '${r17:-none}' (want exit 130 within 20 s) and status '$(kv "${d:-/nonexistent}/launch.txt" status)' (want interrupted)"
	show "$WORK/r17.err"
	show "$WORK/r17.py.err"
fi
# The application's own execution, after the 4 measured passes, hangs:
# it has no pass deadline, but the SIGINT still ends it, and the launch
# keeps its 4 passes.
r17b=$(r17_run "$WORK/r17b" hanglast)
set -- $r17b
d=$(ls -d "$WORK"/r17b/OPPROF_*/device0/hanglast_k/0 2>/dev/null | head -1)
if [ "${1:-}" = 130 ] && [ "${2:-99}" -lt 20 ] &&
	[ "$(kv "${d:-/nonexistent}/launch.txt" status)" = interrupted ] &&
	[ "$(kv "${d:-/nonexistent}/launch.txt" passes_done)" = 4 ] &&
	grep -q '^hanglast_k ' "$WORK/r17b.out"; then
	ok "R17b: the application's own execution hung: exit 130 after $2 s, status=interrupted, 4 passes kept and reported"
else
	bad "R17b: got '${r17b:-none}' (want exit 130 within 20 s), status '$(kv "${d:-/nonexistent}/launch.txt" status)', passes_done '$(kv "${d:-/nonexistent}/launch.txt" passes_done)' (want interrupted, 4, a table row)"
	show "$WORK/r17b.err"
fi
# Application replay (one run per pass) interrupted: in the first run, no
# run completed, so there is nothing to report (exit 130, no NOTE.txt
# blaming the selection, the run's files kept); in the second, the report
# uses the first run.
# r17_app OUT RUN MS: taskprof op --replay-mode application on slow MS, a
# SIGINT 0.5 s after "run RUN of" appears; prints "<exit code|hung>".
r17_app() {
python3 - "$TP" "$1" "$APPS/slow" "$2" "$3" <<'PY' 2>"$1.py.err"
import signal, subprocess, sys, time
tp, out, app, run, ms = sys.argv[1:6]
with open(out + ".out", "w") as o, open(out + ".err", "w") as e:
    p = subprocess.Popen([tp, "op", "-o", out, "--replay-mode", "application", "--", app, ms],
                         stdout=o, stderr=e)
    t = time.time()
    while time.time() - t < 60 and p.poll() is None:
        if ("application replay: run %s of" % run) in open(out + ".err").read():
            break
        time.sleep(0.05)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    try:
        rc = p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = "hung"
print(rc)
PY
}
mkdir -p "$WORK/r17c" "$WORK/r17d"
r17c=$(r17_app "$WORK/r17c" 1 5000)
d=$(ls -d "$WORK"/r17c/OPPROF_* 2>/dev/null | head -1)
if [ "$r17c" = 130 ] && [ -n "$d" ] && [ ! -e "$d/NOTE.txt" ] && [ -d "$d/raw/run_0" ] &&
	grep -q 'interrupted during run 1 of 4 (pass 0), before any run completed: no report' \
		"$WORK/r17c.err" && ! grep -q 'no kernel launch was profiled' "$WORK/r17c.err"; then
	ok "R17c: application replay interrupted in run 1: exit 130, no report, raw/run_0 kept"
else
	bad "R17c: got '${r17c:-none}' (want 130, no NOTE.txt, raw/run_0, the 'before any run completed' line)"
	show "$WORK/r17c.err"
fi
r17d=$(r17_app "$WORK/r17d" 2 3000)
d=$(ls -d "$WORK"/r17d/OPPROF_*/device0/slow_acc/0 2>/dev/null | head -1)
if [ "$r17d" = 130 ] &&
	grep -q 'interrupted during run 2 of 4 (pass 1); the report uses the 1 run completed before it' \
		"$WORK/r17d.err" && [ -n "$d" ] && grep -q '^slow_acc ' "$WORK/r17d.out"; then
	ok "R17d: application replay interrupted in run 2: exit 130, the report from run 1"
else
	bad "R17d: got '${r17d:-none}' (want 130, the 'uses the 1 run' line, slow_acc reported)"
	show "$WORK/r17d.err"
	show "$WORK/r17d.out"
fi
fi
grep -q "^taskprof op: profiled 0 kernel launches; 3 failed (status failed, see above);" "$WORK/r6.err" &&
	ok "R17 (R6): the 3 launches of ranges never popped count as failed, not profiled" ||
	{ bad "R17 (R6): want 'profiled 0 kernel launches; 3 failed'"; show "$WORK/r6.err"; }

# R19: kernels that allocate or free device memory, under kernel replay
# on a 64 MiB device. kleak: each replayed execution's 8 MiB is freed
# after it (5 of them leaked, and the application's 50 MiB allocation
# then failed with -ENOMEM); kfree: the replayed executions do not free
# the host's block (the restore found it freed and the injector ended the
# application, status 70); the application's own execution frees it.
for m in kleak kfree; do
	say "R19: $m: a kernel that $([ $m = kleak ] && echo allocates || echo frees) device memory"
	TASKPROF_DEVICE_MEM_MB=64 OP_OUT_FILE=$WORK/r19_$m.ref app_run "r19_$m.plain" "$APPS/robust" $m
	TASKPROF_DEVICE_MEM_MB=64 OP_OUT_FILE=$WORK/r19_$m.bin op_run "r19_$m" -- "$APPS/robust" $m
	d=${OPDIR:-none}/device0/${m}_k/0
	if [ "$m" = kleak ]; then
		want="5 allocations of the replayed executions freed after each, 0 frees"
	else
		want="0 allocations of the replayed executions freed after each, 5 frees of earlier allocations left to the application's own execution"
	fi
	if [ $APPRC = 0 ] && [ $OPRC = 0 ] && cmp -s "$WORK/r19_$m.ref" "$WORK/r19_$m.bin" &&
		[ "$(kv "$d/launch.txt" status)" = ok ] && grep -qF "$want" "$OPDIR/taskprof.log"; then
		ok "R19 $m: exit 0, output identical, status=ok, the log says: $want"
	else
		bad "R19 $m: exit $APPRC/$OPRC, status '$(kv "$d/launch.txt" status)', want 0/0, identical output, ok, '$want'"
		show "$WORK/r19_$m.err"
	fi
done

# R19r: the same kernels inside a range, under range replay (warm-up 1, 4
# passes; the last pass is the application's execution): the warm-up's
# and the first three passes' 8 MiB are freed before the next restore
# (they leaked, and the 50 MiB allocation failed: exit 2), and their frees
# of the host's block are left to the last pass.
for m in kleak kfree; do
	say "R19r: $m inside a range, range replay"
	TASKPROF_DEVICE_MEM_MB=64 OP_OUT_FILE=$WORK/r19r_$m.ref app_run "r19r_$m.plain" "$APPS/robust" $m range
	TASKPROF_DEVICE_MEM_MB=64 OP_OUT_FILE=$WORK/r19r_$m.bin op_run "r19r_$m" --replay-mode range \
		--range-markers on -- "$APPS/robust" $m range
	d=${OPDIR:-none}/device0/${m}_k/0
	if [ "$m" = kleak ]; then
		want="range kmem: its kernel allocates or frees device memory: 4 allocations of the replayed executions freed after each, 0 frees"
	else
		want="range kmem: its kernel allocates or frees device memory: 0 allocations of the replayed executions freed after each, 4 frees of earlier allocations left to the application's own execution"
	fi
	if [ $APPRC = 0 ] && [ $OPRC = 0 ] && cmp -s "$WORK/r19r_$m.ref" "$WORK/r19r_$m.bin" &&
		[ "$(kv "$d/launch.txt" status)" = ok ] && [ "$(kv "$d/launch.txt" passes)" = 4 ] &&
		grep -qF "$want" "$OPDIR/taskprof.log"; then
		ok "R19r $m: exit 0, output identical, status=ok, 4 passes, the log says: $want"
	else
		bad "R19r $m: exit $APPRC/$OPRC, status '$(kv "$d/launch.txt" status)', passes '$(kv "$d/launch.txt" passes)', want 0/0, identical output, ok, 4, '$want'"
		show "$WORK/r19r_$m.err"
	fi
	# kfree: the last pass freed the host's block, so it hashes less
	# memory than the passes before: its hash is left out (0), not a
	# false "not replay-consistent" warning
	if [ "$m" = kfree ]; then
		h=$(sed -n 's/^pass=\([0-9]*\) .*output_hash=\([0-9a-f]*\).*/\1:\2/p' "$d/dump/replay.txt" | tr '\n' ' ')
		h0=${h%% *}
		h0=${h0#0:}
		if [[ $h0 =~ ^[0-9a-f]{16}$ && $h0 != 0000000000000000 &&
			$h == "0:$h0 1:$h0 2:$h0 3:0000000000000000 " ]] &&
			grep -q "^kfree_k .* yes ok " "$WORK/r19r_$m.out" && ! grep -q "replay-consistent" "$WORK/r19r_$m.err"; then
			ok "R19r kfree: passes 0-2 one hash, pass 3's 0, consistent yes"
		else
			bad "R19r kfree: hashes '$h', want passes 0-2 equal and non-zero, pass 3 0; consistent yes, no warning"
			show "$WORK/r19r_$m.out"
		fi
	fi
done

# R19d: a kernel that frees its own block twice in a replayed execution
# gets the runtime's -EINVAL from the second free, as in the application's
# own execution (it used to get 0 in the 5 replayed ones).
say "R19d: a kernel's double free of its own block, kernel replay"
op_run r19d -- "$APPS/robust" kdfree
if [ $OPRC = 0 ] && grep -qx 'robust kdfree: 6 executions, second free returned: -22 -22 -22 -22 -22 -22' "$WORK/r19d.out"; then
	ok "R19d: the second free returned -22 in all 6 executions"
else
	bad "R19d: exit $OPRC, want 0 and '6 executions, second free returned: -22' x6"
	show "$WORK/r19d.out"
	show "$WORK/r19d.err"
fi

# R19e: a kernel's free inside the host's block and its double free of
# that block get -EINVAL in the replayed executions too (they got 0, as
# frees left to the application's execution).
say "R19e: a kernel's bad frees of an older block, kernel replay"
op_run r19e -- "$APPS/robust" kbadfree
if [ $OPRC = 0 ] && grep -qx 'robust kbadfree: 6 executions: \[-22 0 -22\] \[-22 0 -22\] \[-22 0 -22\] \[-22 0 -22\] \[-22 0 -22\] \[-22 0 -22\]' "$WORK/r19e.out"; then
	ok "R19e: [-22 0 -22] in all 6 executions"
else
	bad "R19e: exit $OPRC, want 0 and [-22 0 -22] x6"
	show "$WORK/r19e.out"
	show "$WORK/r19e.err"
fi

# R19n: a kernel that frees the host's 1 MiB block in the application's
# own execution takes it out of the injector's registry: the next
# launch's snapshot holds the other blocks only, and it is replayed (the
# snapshot read the freed block, failed, and every later launch ran
# unreplayed, status degraded).
say "R19n: the launch after a kernel's free of an older block"
op_run r19n --launch-count 2 -- "$APPS/robust" kfreenext
d=${OPDIR:-none}/device0/next_k/0
nb=$(kv "$d/launch.txt" snapshot_bytes)
if [ $OPRC = 0 ] && grep -q "^robust kfreenext: checksum .*: ok$" "$WORK/r19n.out" &&
	[ "$(kv "$d/launch.txt" status)" = ok ] && [ -n "$nb" ] && [ "$nb" -gt 0 ] &&
	[ "$nb" -lt 1048576 ] && [ "$(kv "$d/launch.txt" passes_done)" = "$(kv "$d/launch.txt" passes)" ]; then
	ok "R19n: next_k status ok, snapshot $nb bytes (< 1 MiB), every pass done"
else
	bad "R19n: exit $OPRC, next_k status '$(kv "$d/launch.txt" status)', snapshot_bytes '$nb' (want ok, 0 < n < 1048576)"
	show "$WORK/r19n.out"
	show "$d/launch.txt"
fi

# R19k: blocks kernels allocate in the application's own execution, used
# by later launches (tests/op_apps/kernel_alloc.c), under kernel and range
# replay: registered like host blocks, so a later launch's replay restores
# them (ka_inc ran 6 times on its block: wrong output) and the replays
# skip a kernel's free of one (they freed it for real: -22 in the
# application's own free, its instrumentation lost); range replay gives
# every pass the same allocator state (pass 0 had the instrumentation
# buffers alone: a false "not replay-consistent"). Output, free rc and the
# device's free room as without the profiler; every launch consistent.
for m in use free; do
	for r in kernel range; do
		say "R19k: kernel_alloc $m, $r replay"
		ra=""
		ro=""
		if [ $r = range ]; then
			ra=range
			ro="--replay-mode range --range-markers on"
		fi
		TASKPROF_DEVICE_MEM_MB=64 app_run "r19k_$m$r.plain" "$APPS/kernel_alloc" $m $ra
		# shellcheck disable=SC2086
		TASKPROF_DEVICE_MEM_MB=64 op_run "r19k_$m$r" -c 10 $ro -- "$APPS/kernel_alloc" $m $ra
		want=$(grep "^kernel_alloc " "$WORK/r19k_$m$r.plain.out")
		got=$(grep "^kernel_alloc " "$WORK/r19k_$m$r.out")
		rows=$(grep -c "^ka_" "$WORK/r19k_$m$r.out")
		okrows=$(grep -c "^ka_.* yes ok " "$WORK/r19k_$m$r.out")
		if [ $APPRC = 0 ] && [ $OPRC = 0 ] && [ -n "$want" ] && [ "$want" = "$got" ] &&
			[[ $want == *"free rc 0,"*": ok, 63 MiB free" ]] && [ "$rows" -ge 3 ] &&
			[ "$rows" = "$okrows" ] && ! grep -q "ERROR" "$WORK/r19k_$m$r.err"; then
			ok "R19k $m $r: '$got', $rows launches consistent, ok"
		else
			bad "R19k $m $r: exit $APPRC/$OPRC, '$got' (want '$want'), $okrows of $rows launches 'yes ok'"
			show "$WORK/r19k_$m$r.out"
			show "$WORK/r19k_$m$r.err"
		fi
	done
done

# R18: main() returns while another thread launches (profiled, -c 5000):
# the exit must not hang (a reader start racing the exit's stop used to
# leave a reader polling for ever: 2 of 20 such runs hung), and the
# application's atexit work must run: a pass the exit cuts short is no
# "channels did not drain" failure (that one ended the process at once,
# status 70, before its atexit handlers). The launch then has no
# launch.txt and is skipped as incomplete.
say "R18: exit while another thread launches: no hang, the atexit work done"
# r18 LABEL DELAYS OPTIONS...: one exitrace run per delay (µs); each must
# exit 0 after the application's atexit handler.
r18() {
	local label=$1 delays=$2 us bad_runs="" n=0
	shift 2
	for us in $delays; do
		n=$((n + 1))
		op_run "${label}_$us" -c 5000 "$@" --aic-metrics BasicInfo -- \
			"$APPS/robust" exitrace "$us"
		if [ $OPRC != 0 ] || ! grep -q 'exitrace: atexit done' "$WORK/${label}_$us.out"; then
			bad_runs="$bad_runs $us:$OPRC"
			show "$WORK/${label}_$us.err"
		fi
	done
	if [ -z "$bad_runs" ]; then
		ok "$label: $n runs exited 0, each after its atexit handler"
	else
		bad "$label: runs (delay us:exit) that did not exit 0 after 'atexit done' (124: hung):$bad_runs"
	fi
}
r18 R18 "1000 3000 5000 7000 9000 11000 13000 15000 17000 19000 21000 23000"
# The same in application replay: a launch the exit cut short has no
# launch.txt in its run and is skipped as incomplete, not a failed merge
# (exit 1, "launch.txt: No such file or directory").
r18 R18a "1000 20000 40000" --replay-mode application

finish
