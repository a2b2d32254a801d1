#!/usr/bin/env bash
# Integration test of `taskprof op` at the edges of the process and of the
# channels (spec/opprof.md §3.2, §4.10, §4.13, §4.14 I13, I15, I16):
#
#   I13 ctor: device memory allocated by a constructor before main is
#       registered: out is restored, output identical to unprofiled
#   I15 forker: a child process's launch is ignored by default (only the
#       parent's launch folder) and profiled with --target-processes all
#       (both folders); outputs correct either way; with "orphan" (the
#       parent exits at once, its child launches later) taskprof op waits
#       for the child and reports its launch; that child stopped
#       (SIGSTOP) while it is waited for is named once as stopped, and
#       its launch is reported after SIGCONT
#   I16 many_blocks: 5000 blocks in one launch (more than a read, more than
#       a channel's ring): every pass file holds exactly 5000 BLOCK
#       records, one LAUNCH record and the END_OF_PASS records, and
#       RawEvents.csv lists every block
#   I17 slow: SIGINT to taskprof op during pass 2 of 4: the pass finishes,
#       the launch is written as interrupted and its report parses, the
#       application ends as SIGINT ends it (exit 130)
#   I17d slow: SIGINT to taskprof and to the application (timeout -s INT's
#       process-group delivery): the application's repeat is ignored too
#   I17b slow: SIGINT during the warm-up (100 executions): the warm-up
#       stops, the launch is written as interrupted with no pass, and it
#       is not counted as profiled ("profiled 0 kernel launches; 1
#       interrupted before its first pass, skipped"), no table row, no
#       report (exit 130)
#   I18 exec_relaunch: an application that execs itself (same pid) goes
#       on with its launch selection in the new image (the counts are per
#       process): -c 1 profiles 1 of 1 + 3 launches, -c 2 --kill on ends
#       it after the second (the first of the new image), --launch-skip 1
#       skips once; launches_<pid>.txt lists the launches of both images
#       (appended to) and the k folders of both images are distinct; no
#       selection state file is left, also when the new image ends with
#       _exit() (taskprof op removes it)
#
# usage: test_op_process.sh TASKPROF_BINARY
. "$(dirname "$0")/op_test_lib.sh" "$1"

need "$APPS/ctor" "$APPS/forker" "$APPS/many_blocks" "$APPS/exec_relaunch"
M=PipeUtilization,Memory

# ---- I13 --------------------------------------------------------------------
say "I13: ctor (buffers allocated in a constructor) under taskprof op --warm-up 2"
OP_OUT_FILE=$WORK/i13.ref app_run i13.plain "$APPS/ctor"
OP_OUT_FILE=$WORK/i13.bin TASKPROF_SIM_STATS=1 op_run i13 --warm-up 2 --aic-metrics $M \
	-- "$APPS/ctor"
if [ $OPRC = 0 ] && [ -n "$OPDIR" ]; then
	ok "I13: taskprof op exited 0"
	P=$(passes_of "$OPDIR")
	same_bytes I13 "$WORK/i13.ref" "$WORK/i13.bin"
	check_launch_dir I13 "$OPDIR/device0/ctor_acc/0" "$P" 2
	got=$(sim_launches "$WORK/i13.err" 0)
	[ "$got" = $((2 + P + 1)) ] && ok "I13: $got executions = W 2 + P $P + 1" ||
		bad "I13: $got executions, want 2 + $P + 1"
	sb=$(kv "$OPDIR/device0/ctor_acc/0/launch.txt" snapshot_bytes)
	[ "${sb:-0}" -ge 96000 ] && ok "I13: the snapshot covers both buffers ($sb bytes)" ||
		bad "I13: snapshot_bytes=${sb:-?}, want >= 96000 (in and out)"
else
	bad "I13: taskprof op exited $OPRC"
	show "$WORK/i13.err"
fi

# ---- I15 --------------------------------------------------------------------
say "I15: forker, default --target-processes main: the child's launch is not profiled"
OP_OUT_FILE=$WORK/i15.ref app_run i15.plain "$APPS/forker"
OP_OUT_FILE=$WORK/i15m.bin op_run i15m -c 10 --aic-metrics $M -- "$APPS/forker"
got=$(launch_set "${OPDIR:-/nonexistent}")
if [ $OPRC = 0 ] && [ "$got" = "device0/parent_acc/0 block_dim=4" ]; then
	ok "I15 main: exit 0, folders $got"
else
	bad "I15 main: exit $OPRC, folders '$got', want 0 and 'device0/parent_acc/0 block_dim=4'"
	show "$WORK/i15m.err"
fi
same_bytes "I15 main" "$WORK/i15.ref" "$WORK/i15m.bin"
grep -q 'child_acc.*: ok$' "$WORK/i15m.out" && ok "I15 main: the child's result is correct" ||
	{ bad "I15 main: the child did not report a correct result"; show "$WORK/i15m.out"; }

say "I15: forker with --target-processes all: both processes profiled"
OP_OUT_FILE=$WORK/i15a.bin op_run i15a -c 10 --target-processes all --aic-metrics $M \
	-- "$APPS/forker"
got=$(launch_set "${OPDIR:-/nonexistent}")
want="device0/child_acc/0 block_dim=4 device0/parent_acc/0 block_dim=4"
if [ $OPRC = 0 ] && [ "$got" = "$want" ]; then
	ok "I15 all: exit 0, folders $got"
else
	bad "I15 all: exit $OPRC, folders '$got', want 0 and '$want'"
	show "$WORK/i15a.err"
fi
same_bytes "I15 all" "$WORK/i15.ref" "$WORK/i15a.bin"
if [ -n "$OPDIR" ]; then
	cp=$(kv "$OPDIR/device0/child_acc/0/launch.txt" pid)
	pp=$(kv "$OPDIR/device0/parent_acc/0/launch.txt" pid)
	[ -n "$cp" ] && [ -n "$pp" ] && [ "$cp" != "$pp" ] &&
		ok "I15 all: the folders name two processes (pid $pp, child $cp)" ||
		bad "I15 all: launch.txt pids '$pp' / '$cp', want two different pids"
	st=$(kv "$OPDIR/device0/child_acc/0/launch.txt" status)
	[ "$st" = ok ] || bad "I15 all: child_acc status '$st', want ok"
fi

say "I15: forker, application replay with --target-processes all: a warning that the child is not profiled"
op_run i15r -c 10 --replay-mode application --target-processes all --aic-metrics $M -- "$APPS/forker"
got=$(launch_set "${OPDIR:-/nonexistent}")
if [ $OPRC = 0 ] && [ "$got" = "device0/parent_acc/0 block_dim=4" ] &&
   grep -qF "taskprof op: warning: --target-processes all does not apply to application replay: it matches the launches of the main process only" "$WORK/i15r.err"; then
	ok "I15 application replay: exit 0, the parent's launch only, the warning said"
else
	bad "I15 application replay: exit $OPRC, folders '$got', want 0, 'device0/parent_acc/0 block_dim=4' and the warning"
	show "$WORK/i15r.err"
fi

say "I15: 'forker orphan' with --target-processes all: the child the application left running is waited for"
# The parent exits at once; its child launches 500 ms later. taskprof op is
# the subreaper and waits for it, so its launch is in the report.
op_run i15o -c 10 --target-processes all --aic-metrics $M -- "$APPS/forker" orphan
got=$(launch_set "${OPDIR:-/nonexistent}")
want="device0/child_acc/0 block_dim=4"
if [ $OPRC = 0 ] && [ "$got" = "$want" ] && [ -s "$OPDIR/device0/child_acc/0/OpBasicInfo.csv" ] &&
	grep -q '^taskprof op: the application (pid [0-9]*) ended; waiting for the 1 process it left running (pid [0-9]*;' "$WORK/i15o.err" &&
	grep -q '^taskprof op: profiled 1 kernel launch;' "$WORK/i15o.err" &&
	grep -q '^child_acc ' "$WORK/i15o.out"; then
	ok "I15 orphan: exit 0, folders $got with its report, the wait said"
else
	bad "I15 orphan: exit $OPRC, folders '$got', want 0, '$want' with OpBasicInfo.csv, the wait said and the table row"
	show "$WORK/i15o.err"
	show "$WORK/i15o.out"
fi

say "I15: the child the application left running is stopped (SIGSTOP): the wait says so, and goes on after SIGCONT"
# The child is stopped as soon as the wait names it (its launch comes
# 500 ms later), continued once taskprof op has said it is stopped.
rm -rf "$WORK/i15s" && mkdir -p "$WORK/i15s"
i15s=$(python3 - "$TP" "$WORK/i15s" "$APPS/forker" "$M" <<'PY' 2>"$WORK/i15s.py.err"
import os, re, signal, subprocess, sys, time
tp, out, app, m = sys.argv[1:5]
with open(out + ".out", "w") as o, open(out + ".err", "w") as e:
    p = subprocess.Popen([tp, "op", "-o", out, "-c", "10", "--target-processes", "all",
                          "--aic-metrics", m, "--", app, "orphan"], stdout=o, stderr=e)
    child, said, t = None, False, time.time()
    while time.time() - t < 60 and p.poll() is None:
        err = open(out + ".err").read()
        if child is None:
            g = re.search(r"left running \(pid (\d+);", err)
            if g:
                child = int(g.group(1))
                os.kill(child, signal.SIGSTOP)
        elif "process %d, which the application left running, is stopped" % child in err:
            said = True
            time.sleep(0.3)
            os.kill(child, signal.SIGCONT)
            break
        time.sleep(0.02)
    try:
        rc = p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        if child:
            os.kill(child, signal.SIGKILL)
        p.kill()
        rc = "hung"
print(rc, "said" if said else "unsaid")
PY
)
d=$(ls -d "$WORK"/i15s/OPPROF_*/device0/child_acc/0 2>/dev/null | head -1)
if [ "$i15s" = "0 said" ] && [ -n "$d" ] && [ -s "$d/OpBasicInfo.csv" ] &&
	[ "$(grep -c 'which the application left running, is stopped' "$WORK/i15s.err")" = 1 ]; then
	ok "I15 stopped: exit 0, the stop said once, the child's launch profiled after SIGCONT"
else
	bad "I15 stopped: got '${i15s:-none}' (want '0 said'), launch folder '${d:-none}', the stop said $(grep -c 'is stopped' "$WORK/i15s.err" 2>/dev/null) times (want 1)"
	show "$WORK/i15s.err"
	show "$WORK/i15s.py.err"
fi

if [[ ${TASKPROF_TEST_SANITIZE:-} == thread ]]; then
	# ThreadSanitizer ends a child of a multi-threaded process that starts
	# threads ("starting new threads after multi-threaded fork is not
	# supported"): the case cannot run there.
	echo "skip: I15 after (TSan: no threads in the child of a multi-threaded fork)"
else
	say "I15: 'forker after' (the child forks once the parent was profiled) with --target-processes all"
	# The parent keeps device 0 open and its reader thread polls the channels
	# at the fork: the child must get channels it can use (it hung on the
	# inherited condition variable before) and be profiled on device 1.
	OP_OUT_FILE=$WORK/i15x.ref app_run i15x.plain "$APPS/forker" after
	OP_TIMEOUT=60 OP_OUT_FILE=$WORK/i15x.bin op_run i15x -c 10 --target-processes all \
		--aic-metrics $M -- "$APPS/forker" after
	got=$(launch_set "${OPDIR:-/nonexistent}")
	want="device0/parent_acc/0 block_dim=4 device1/child_acc/0 block_dim=4"
	if [ $OPRC = 0 ] && [ "$got" = "$want" ] && grep -q 'child_acc.*: ok$' "$WORK/i15x.out"; then
		ok "I15 after: exit 0, folders $got, the child's result correct"
	else
		bad "I15 after: exit $OPRC, folders '$got', want 0 and '$want'"
		show "$WORK/i15x.err"
	fi
	same_bytes "I15 after" "$WORK/i15x.ref" "$WORK/i15x.bin"
fi

# ---- I16 --------------------------------------------------------------------
say "I16: many_blocks (5000 blocks) under taskprof op --aic-metrics $M"
OP_OUT_FILE=$WORK/i16.ref app_run i16.plain "$APPS/many_blocks"
OP_OUT_FILE=$WORK/i16.bin op_run i16 --aic-metrics $M -- "$APPS/many_blocks"
if [ $OPRC = 0 ] && [ -n "$OPDIR" ]; then
	ok "I16: taskprof op exited 0"
	same_bytes I16 "$WORK/i16.ref" "$WORK/i16.bin"
	d=$OPDIR/device0/many_acc/0
	P=$(passes_of "$OPDIR")
	check_launch_dir I16 "$d" "$P" 1
	if python3 - "$d" "$P" 5000 <<'PY'; then
import os, struct, sys
d, npass, nb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
bad = 0
for p in range(npass):
    data = open(os.path.join(d, "dump", f"pass_{p}.bin"), "rb").read()
    kinds = {1: 0, 2: 0, 3: 0}
    blocks = set()
    dropped = 0
    for i in range(0, len(data) - len(data) % 176, 176):
        magic, ver, kind, size, dev, ch, rpass = struct.unpack_from("<IHHIiII", data, i)
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind == 1:
            blocks.add(struct.unpack_from("<I", data, i + 32)[0])
        if kind == 3:
            dropped += struct.unpack_from("<Q", data, i + 48)[0]
        if rpass != p:
            bad += 1
    print(f"   pass {p}: {kinds[1]} BLOCK, {kinds[2]} LAUNCH, {kinds[3]} END_OF_PASS records,"
          f" {dropped} dropped")
    if len(data) % 176 or kinds[1] != nb or blocks != set(range(nb)) or kinds[2] != 1 \
            or kinds[3] < 1 or dropped:
        bad += 1
sys.exit(1 if bad else 0)
PY
		ok "I16: every pass file holds 5000 BLOCK records (one per block), 1 LAUNCH, END_OF_PASS"
	else
		bad "I16: pass files do not hold one record per block"
	fi
	nb=$(csv_col "$d/RawEvents.csv" block_id | sort -u | wc -l)
	[ "$nb" = 5000 ] && ok "I16: RawEvents.csv lists 5000 blocks" ||
		bad "I16: RawEvents.csv lists $nb blocks, want 5000"
else
	bad "I16: taskprof op exited $OPRC"
	show "$WORK/i16.err"
fi

# ---- I17 --------------------------------------------------------------------
# SIGINT to taskprof op while pass 2 of the Default plan (>= 3 passes) runs (slow_acc takes 200 ms per
# execution). taskprof forwards it; the injector lets the pass finish,
# writes the launch as interrupted, then the application ends as SIGINT
# would end it. The shell starts background jobs with SIGINT ignored, which
# taskprof and the application would inherit: python resets it first.
# slow_in_pass2 NAME: taskprof op -o $WORK/NAME on slow (SIGINT at its
# default action) in the background, $pid, back once pass 2 began.
slow_in_pass2() {
	mkdir -p "$WORK/$1"
	OP_OUT_FILE=$WORK/$1.bin python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$TP" op -o "$WORK/$1" --warm-up 0 -- "$APPS/slow" \
		>"$WORK/$1.out" 2>"$WORK/$1.err" &
	pid=$!
	wait_until 200 0.05 "" grep -q 'slow_acc launch [0-9]*: pass 2/' "$WORK/$1.err"
}
# interrupted_in_pass2 NAME SIG CODE: slow_in_pass2 NAME, then SIG: exit
# CODE, the launch written as interrupted after 1..P-1 of P >= 3 passes,
# its note "SIG<SIG> after <done> of <P> passes"; sets $d and $pd.
interrupted_in_pass2() {
	local name=$1 sig=$2 want=$3 rc P note
	slow_in_pass2 "$name"
	kill -"$sig" $pid
	wait $pid
	rc=$?
	OPDIR=$(ls -d "$WORK/$name"/OPPROF_* 2>/dev/null | head -1)
	d=${OPDIR:-/nonexistent}/device0/slow_acc/0
	P=$(passes_of "${OPDIR:-/nonexistent}")
	pd=$(kv "$d/launch.txt" passes_done)
	note=$(kv "$d/launch.txt" note)
	if [ "$rc" = "$want" ] && [ "$(kv "$d/launch.txt" status)" = interrupted ] &&
		[ "${P:-0}" -ge 3 ] && [ "${pd:-0}" -ge 1 ] && [ "$pd" -lt "$P" ] &&
		[ "$note" = "SIG$sig after $pd of $P passes" ]; then
		ok "$name: exit $want, status=interrupted, $note"
	else
		bad "$name: exit $rc, want $want with status=interrupted, 1..P-1 of P >= 3 passes done and note 'SIG$sig after N of P passes' (got '$note')"
		show "$WORK/$name.err"
		show "$d/launch.txt"
	fi
}
say "I17: SIGINT during pass 2 of 4 (slow: 200 ms per execution)"
need "$APPS/slow"
interrupted_in_pass2 i17 INT 130
if python3 - "$d" "${pd:-0}" <<'PY'; then
import csv, json, os, sys
d, done = sys.argv[1], int(sys.argv[2])
for f in ("summary.json", "trace.json"):
    json.load(open(os.path.join(d, f)))
passes = {int(r["pass"]) for r in csv.DictReader(open(os.path.join(d, "RawEvents.csv")))}
assert passes == set(range(done)), f"RawEvents.csv passes {sorted(passes)}"
na = sum("N/A" in open(os.path.join(d, f)).read() for f in os.listdir(d) if f.endswith(".csv"))
assert na > 0, "no N/A for the missing passes"
PY
	ok "I17: the partial report parses (JSON valid, RawEvents.csv holds passes 0..$((pd - 1)), N/A for the rest)"
else
	bad "I17: the partial report does not parse or is inconsistent"
fi

# ---- I17t -------------------------------------------------------------------
# SIGTERM (and so SIGHUP, the same handler) as SIGINT: the pass finishes,
# the launch is written as interrupted, with a note naming the signal, and
# the application ends by it (143); the passes done are kept.
say "I17t: SIGTERM during pass 2 of 4"
interrupted_in_pass2 i17t TERM 143

# ---- I17c -------------------------------------------------------------------
# The same SIGINT twice within a second, as GNU timeout sends it (to
# taskprof, then to its process group; here both to taskprof): the repeat
# is ignored, the
# pass in progress still finishes (the application is not killed).
say "I17c: SIGINT twice within a second during pass 2 (timeout's double delivery)"
slow_in_pass2 i17c
kill -INT $pid
sleep 0.2 # delivered apart, not merged into one pending signal
kill -INT $pid
wait $pid
rc=$?
OPDIR=$(ls -d "$WORK/i17c"/OPPROF_* 2>/dev/null | head -1)
d=${OPDIR:-/nonexistent}/device0/slow_acc/0
pd=$(kv "$d/launch.txt" passes_done)
if [ "$rc" = 130 ] && [ "$(kv "$d/launch.txt" status)" = interrupted ] && [ "${pd:-0}" -ge 1 ] &&
	! grep -q 'SIGKILL' "$WORK/i17c.err"; then
	ok "I17c: exit 130, status=interrupted after $pd passes, the application not killed"
else
	bad "I17c: exit $rc, want 130 with status=interrupted (a repeat within 1 s must not kill the application)"
	show "$WORK/i17c.err"
	show "$d/launch.txt"
fi

# ---- I17d -------------------------------------------------------------------
# The same interrupt as GNU timeout -s INT really delivers it: once to
# taskprof (which forwards it) and once to the application itself (it is
# in the process group). The injector ignores the repeat too (it used to
# take it for "Ctrl-C again" and kill the application mid-pass: the
# launch had no launch.txt and was skipped as incomplete).
say "I17d: SIGINT to taskprof and to the application, as a process-group delivery"
slow_in_pass2 i17d
# the application: taskprof's child (procps' pgrep may not be installed)
app=$(cat /proc/"$pid"/task/*/children 2>/dev/null | tr ' ' '\n' | grep -m1 .)
kill -INT $pid
[ -n "$app" ] && kill -INT "$app"
wait $pid
rc=$?
OPDIR=$(ls -d "$WORK/i17d"/OPPROF_* 2>/dev/null | head -1)
d=${OPDIR:-/nonexistent}/device0/slow_acc/0
pd=$(kv "$d/launch.txt" passes_done)
if [ -n "$app" ] && [ "$rc" = 130 ] && [ "$(kv "$d/launch.txt" status)" = interrupted ] &&
	[ "${pd:-0}" -ge 1 ] && ! grep -q 'incomplete' "$WORK/i17d.err"; then
	ok "I17d: exit 130, status=interrupted after $pd passes, the application not killed"
else
	bad "I17d: exit $rc (application pid '${app}'), want 130 with status=interrupted (the repeat the application gets itself must not kill it)"
	show "$WORK/i17d.err"
	show "$d/launch.txt"
fi

# ---- I17b -------------------------------------------------------------------
# SIGINT while the launch is in its warm-up: 100 executions of 200 ms, so
# the launch folder (claimed before the warm-up) gives a 20 s window.
say "I17b: SIGINT during the warm-up (slow: 100 warm-up executions of 200 ms)"
mkdir -p "$WORK/i17b"
OP_OUT_FILE=$WORK/i17b.bin python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$TP" op -o "$WORK/i17b" --warm-up 100 -- "$APPS/slow" \
	>"$WORK/i17b.out" 2>"$WORK/i17b.err" &
pid=$!
wait_until 1200 0.05 "$pid" compgen -G "$WORK/i17b/OPPROF_*/device0/slow_acc/0/dump"
grep -q 'slow_acc launch [0-9]*: pass' "$WORK/i17b.err" &&
	bad "I17b: a pass began before the SIGINT (the warm-up was not interrupted)"
kill -INT $pid
wait $pid
rc=$?
OPDIR=$(ls -d "$WORK/i17b"/OPPROF_* 2>/dev/null | head -1)
d=${OPDIR:-/nonexistent}/device0/slow_acc/0
note=$(kv "$d/launch.txt" note)
done_w=$(sed -n 's/^SIGINT in the warm-up, after \([0-9]*\) of 100 executions: no pass measured$/\1/p' <<<"$note")
if [ "$rc" = 130 ] && [ "$(kv "$d/launch.txt" status)" = interrupted ] &&
	[ "$(kv "$d/launch.txt" passes_done)" = 0 ] && [ -n "$done_w" ] && [ "$done_w" -lt 100 ]; then
	ok "I17b: exit 130, status=interrupted, 0 passes, the warm-up cut short: $note"
else
	bad "I17b: exit $rc, want 130 with status=interrupted, passes_done=0 and a note 'SIGINT in the warm-up, after N of 100 executions' (N < 100)"
	show "$d/launch.txt"
fi
want="taskprof op: profiled 0 kernel launches; 1 interrupted before its first pass, skipped (see above); output $OPDIR"
grep -qxF -- "$want" "$WORK/i17b.err" && ok "I17b: the closing line counts it apart" ||
	{ bad "I17b: no closing line '$want'"; show "$WORK/i17b.err"; }
grep -qxF -- "taskprof op: $d: interrupted before its first pass (no pass measured); skipped" \
	"$WORK/i17b.err" && ok "I17b: the skipped launch is named" ||
	{ bad "I17b: no line naming $d as skipped"; show "$WORK/i17b.err"; }
if grep -q 'slow_acc' "$WORK/i17b.out" || [ -e "$d/OpBasicInfo.csv" ] || grep -qE 'pass [0-9]+ missing' "$WORK/i17b.err"; then
	bad "I17b: the launch was reported (a table row, OpBasicInfo.csv or 'pass N missing' warnings)"
	show "$WORK/i17b.out"
else
	ok "I17b: no table row, no report files, no 'pass missing' warnings"
fi

# ---- I18 --------------------------------------------------------------------
say "I18: exec_relaunch (execs itself, same pid): the selection goes on across exec"
# exec_lines NAME: the launch lines of the run's one launches file, as
# "k=K profiled=P" per line, space-separated (EXPID set first: the pid
# both images printed, "" when they differ).
exec_lines() {
	local f
	f=$(ls "$OPDIR"/launches_*.txt 2>/dev/null)
	if [ "$f" != "$OPDIR/launches_$EXPID.txt" ]; then
		echo "want one launches_<pid>.txt for the pid both images printed ('$EXPID'), got: $f"
		return
	fi
	sed -n 's/^device=0 name=exec_acc block_dim=2 \(k=[0-9]* profiled=[01]\) .*/\1/p' "$f" |
		tr '\n' ' ' | sed 's/ $//'
}
# exec_check NAME WANT_LINES WANT_LAST WANT_FOLDERS: exit 0, the
# launches file's lines, the closing line, the k folders with a launch.txt,
# and no .selection_* file left.
exec_check() {
	local got
	EXPID=$(sed -n 's/^exec_relaunch: image [12] pid \([0-9]*\)$/\1/p' "$WORK/$1.out" | sort -u)
	[ "$(wc -w <<<"$EXPID")" = 1 ] || EXPID=""
	got=$(exec_lines "$1")
	[ "$OPRC" = 0 ] && ok "$1: exit 0" || { bad "$1: exit $OPRC, want 0"; show "$WORK/$1.err"; }
	[ "$got" = "$2" ] && ok "$1: launches file: $got" ||
		{ bad "$1: launches file lines '$got', want '$2'"; show "$OPDIR/launches_$EXPID.txt"; }
	has_line "$1" "$WORK/$1.err" "taskprof op: ${3//PID/$EXPID}; output $OPDIR"
	got=$(launch_set "$OPDIR")
	[ "$got" = "$4" ] && ok "$1: launch folders: $got" || bad "$1: launch folders '$got', want '$4'"
	# The new image went on from the first's selection state (one launch
	# before the exec in every run here).
	got=$(grep -c "a new image of the process (exec): the launch selection goes on from the image before (1 launch seen, " "$OPDIR/taskprof.log")
	[ "$got" = 1 ] && ok "$1: the new image resumed the selection" ||
		{ bad "$1: $got resume lines in taskprof.log, want 1"; show "$OPDIR/taskprof.log"; }
	got=$(ls -A "$OPDIR" | grep '^\.selection_')
	[ -z "$got" ] && ok "$1: no selection state file left" || bad "$1: left $got"
}
F0="device0/exec_acc/0 block_dim=2"
F1="device0/exec_acc/1 block_dim=2"
op_run i18a -c 1 -- "$APPS/exec_relaunch" 1 3
exec_check i18a "k=0 profiled=1 k=0 profiled=0 k=0 profiled=0 k=0 profiled=0" \
	"profiled 1 of the application's 4 kernel launches (--launch-count 1, the selection and the skips decide which; launches_PID.txt lists them all)" \
	"$F0"
op_run i18b -c 2 --kill on -- "$APPS/exec_relaunch" 1 3
exec_check i18b "k=0 profiled=1 k=1 profiled=1" \
	"profiled 2 kernel launches, then --kill on ended the application" "$F0 $F1"
grep -qxF "taskprof op: --kill on: 2 launches profiled, ending the application" "$WORK/i18b.err" &&
	ok "i18b: --kill on ended it once" || { bad "i18b: no '--kill on: 2 launches profiled' line"; show "$WORK/i18b.err"; }
grep -q 'image 2' "$WORK/i18b.out" && ! grep -q 'exec_relaunch: ok' "$WORK/i18b.out" &&
	ok "i18b: ended in the new image, before its end" || { bad "i18b: want image 2 ended early"; show "$WORK/i18b.out"; }
op_run i18c --launch-skip 1 -- "$APPS/exec_relaunch" 1 3
exec_check i18c "k=0 profiled=0 k=0 profiled=1 k=0 profiled=0 k=0 profiled=0" \
	"profiled 1 of the application's 4 kernel launches (--launch-count 1, the selection and the skips decide which; launches_PID.txt lists them all)" \
	"$F0"
op_run i18d -c 5 -- "$APPS/exec_relaunch" 1 1
exec_check i18d "k=0 profiled=1 k=1 profiled=1" "profiled 2 kernel launches" "$F0 $F1"
grep -q 'exec_relaunch: ok' "$WORK/i18d.out" && ok "i18d: results right" || { bad "i18d: no ok"; show "$WORK/i18d.out"; }
# The new image ends with _exit(): the injector's exit handler does not
# run, and taskprof op removes the selection state file it left. Its
# device threads are still running at the _exit, on purpose: not a leak
# for TSan to report (races are still reported).
EXEC_RELAUNCH_EXIT=1 TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}report_thread_leaks=0" \
	op_run i18e -c 5 -- "$APPS/exec_relaunch" 1 1
exec_check i18e "k=0 profiled=1 k=1 profiled=1" "profiled 2 kernel launches" "$F0 $F1"

finish
