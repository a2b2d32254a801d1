#!/usr/bin/env bash
# `taskprof op` when its files cannot be written or a signal comes
# (docs/op.md "Exit status", "Limits and failure modes"):
#
#   W1 the injector cannot write its files (a full tmpfs; root only, else
#      skipped) or open them (no descriptor left): exit 1 with the
#      injector's reason, not "no launch.txt (the application ended ...)"
#      and exit 0, nor a NOTE blaming the selection
#   W2 too few descriptors for taskprof itself (ulimit -n 5): exit 1 naming
#      ulimit -n, no output folder left
#   W3 ulimit -f: a report file past the limit is EFBIG naming it, exit 1,
#      no *.tmp; an application killed by SIGXFSZ is said so (exit 153); it
#      keeps SIGXFSZ ignored only when taskprof was started so; killed
#      while its injector wrote, its temporary file is removed; the
#      injector's EFBIG reaches the launcher (exit 1)
#   W4 stdout that cannot be written: exit 1, "writing stdout: ..."
#   W5 SIGINT / SIGTERM / SIGHUP while the report is written: exit 130 /
#      143 / 129, one line, no *.tmp left; SIGHUP while the application
#      runs is passed on to it, and stays ignored under nohup
#   W6 the application closes descriptors 3..1023 (the injector's
#      launches file and status pipe among them) between two launches:
#      the injector opens its file again (both launches listed, no error,
#      exit 0); when the next line then truly cannot be written (the
#      application's own RLIMIT_FSIZE: EFBIG), the failure still reaches
#      taskprof op, through injector_errors.txt: exit 1 naming the file
#   W7 the profiling channels cannot start (an invalid TASKPROF_SIM_L2_BYTES,
#      in kernel and in application replay): the profiler failed, exit 1
#      naming the launch and the reason, while the application's own
#      launch still runs (kernel replay exited 0 with "status failed")
#
# usage: test_op_failures.sh TASKPROF_BINARY
. "$(dirname "$0")/op_test_lib.sh" "$1"

VA=$EX/op_vector_add
MB=$APPS/many_blocks
RB=$APPS/robust
need "$VA" "$MB" "$RB"
OP_TIMEOUT=120

# no_tmp LABEL DIR: no *.tmp file under DIR.
no_tmp() {
	local left
	left=$(find "$2" -name '*.tmp' 2>/dev/null)
	if [ -z "$left" ]; then
		ok "$1: no temporary file left"
	else
		bad "$1: temporary files left: $left"
	fi
}

# has LABEL FILE NEEDLE: FILE contains the fixed string NEEDLE.
has() {
	if grep -qF -- "$3" "$2"; then
		ok "$1: says '$3'"
	else
		bad "$1: no '$3' in ${2#"$WORK"/}"
		show "$2"
	fi
}

# lacks LABEL FILE NEEDLE: FILE does not contain NEEDLE.
lacks() {
	if grep -qF -- "$3" "$2"; then
		bad "$1: says '$3'"
		show "$2"
	else
		ok "$1: does not say '$3'"
	fi
}

# rc_is LABEL WANT: OPRC is WANT.
rc_is() {
	if [ "$OPRC" = "$2" ]; then ok "$1: exit $2"; else bad "$1: exit $OPRC, want $2"; show "$WORK/$1.err"; fi
}

# injector_failed LABEL REASON: exit 1, the launcher's line with the
# injector's reason, and neither the application nor the selection blamed.
injector_failed() {
	rc_is "$1" 1
	has "$1" "$WORK/$1.err" "taskprof op: the profiler failed inside the application (pid "
	if grep -E "^taskprof op: the profiler failed inside the application \(pid [0-9]+\): /.*: $2" \
		"$WORK/$1.err" >/dev/null; then
		ok "$1: the line names the file and the reason ($2)"
	else
		bad "$1: no 'the profiler failed inside the application (pid N): /FILE: $2'"
		show "$WORK/$1.err"
	fi
	lacks "$1" "$WORK/$1.err" "the application ended while this launch was being profiled"
	lacks "$1" "$WORK/$1.err" "no kernel launch was profiled"
	has "$1" "$WORK/$1.err" "taskprof op: the profiler failed (see above); the application exited with status 0"
	has "$1" "$WORK/$1.out" "ok"  # the application itself ran to its end
}

# ---- W1 ----------------------------------------------------------------------
say "W1: the injector cannot write (full tmpfs) or open (no descriptor) its files"
if [ "$(id -u)" != 0 ]; then
	echo "   skip: W1 tmpfs cases need root (mount -t tmpfs)"
else
	for size in 16k 40k; do
		mnt=$WORK/tmpfs_$size
		mkdir -p "$mnt"
		if ! mount -t tmpfs -o size=$size tmpfs "$mnt" 2>"$WORK/mount.err"; then
			echo "   skip: W1 $size: mount failed: $(cat "$WORK/mount.err")"
			continue
		fi
		timeout "$OP_TIMEOUT" "$TP" op -o "$mnt" "$VA" >"$WORK/w1_$size.out" 2>"$WORK/w1_$size.err"
		OPRC=$?
		injector_failed "w1_$size" "No space left on device"
		umount "$mnt"
	done
fi
# Every descriptor but one taken when the application starts: a wrapper
# fills them, then execs it (same process, so it is still profiled); the
# injector reads config.txt and opens taskprof.log with that one, and the
# rest of its files cannot be opened. Descriptors closed at exec (the
# wrapper's own, the injector's log in the wrapper) are filled too.
cat >"$WORK/fill_fds.py" <<'PY'
import os, resource, sys
top = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
null = os.open("/dev/null", os.O_RDONLY)
spare = None
for fd in range(3, top):
    if fd == null:
        continue
    try:
        kept = os.get_inheritable(fd)  # open, and still open after exec
    except OSError:
        kept = False
    if kept:
        continue
    if spare is None:
        spare = fd
        continue
    os.dup2(null, fd, inheritable=True)
os.set_inheritable(null, True)
os.execv(sys.argv[1], sys.argv[1:])
PY
rm -rf "$WORK/w1_fd"
mkdir -p "$WORK/w1_fd"
(ulimit -n 32; timeout "$OP_TIMEOUT" "$TP" op -o "$WORK/w1_fd" -- python3 "$WORK/fill_fds.py" "$VA" \
	>"$WORK/w1_fd.out" 2>"$WORK/w1_fd.err")
OPRC=$?
injector_failed w1_fd "Too many open files"

# ---- W2 ----------------------------------------------------------------------
say "W2: ulimit -n 5: too few descriptors for taskprof itself"
rm -rf "$WORK/w2"
(ulimit -n 5; timeout "$OP_TIMEOUT" "$TP" op -o "$WORK/w2" "$VA" >"$WORK/w2.out" 2>"$WORK/w2.err")
OPRC=$?
rc_is w2 1
has w2 "$WORK/w2.err" "Too many open files (the limit of open files, ulimit -n, is 5"
lacks w2 "$WORK/w2.err" "no kernel launch was profiled"
if ls -d "$WORK"/w2/OPPROF_* >/dev/null 2>&1; then
	bad "w2: an output folder was left: $(ls -R "$WORK/w2" | head -5)"
else
	ok "w2: no output folder left"
fi

# ---- W3 ----------------------------------------------------------------------
say "W3: ulimit -f 12 (12 KiB; bash counts 1024-byte blocks)"
# op_vector_add: plan.txt ~5 KB and the injector's files < 12 KiB; the
# report's summary.json ~43 KB is past it.
rm -rf "$WORK/w3a"
mkdir -p "$WORK/w3a"
(ulimit -f 12; timeout "$OP_TIMEOUT" "$TP" op -o "$WORK/w3a" "$VA" >"$WORK/w3a.out" 2>"$WORK/w3a.err")
OPRC=$?
rc_is w3a 1
if grep -qE '^taskprof op: report of /.*/device0/vector_add/0 failed: /.*/summary\.json: write failed: File too large(;|$)' \
	"$WORK/w3a.err"; then
	ok "w3a: 'report of DIR failed: DIR/summary.json: write failed: File too large'"
else
	bad "w3a: no 'report of ... failed: .../summary.json: write failed: File too large'"
	show "$WORK/w3a.err"
fi
no_tmp w3a "$WORK/w3a"
# The report files written before the failure (OpBasicInfo.csv, the group
# CSVs, RawEvents.csv, ReplayInfo.csv: whole files, and launch.txt says
# status=ok) are removed with it, so that the folder does not look like a
# finished report; launch.txt and dump/ stay.
left=$(cd "$WORK"/w3a/OPPROF_*/device0/vector_add/0 2>/dev/null && ls -d -- *.csv *.json 2>/dev/null)
if [[ -z $left && -e $(echo "$WORK"/w3a/OPPROF_*/device0/vector_add/0/launch.txt) ]]; then
	ok "w3a: no report file left beside launch.txt"
else
	bad "w3a: report files left after the failed report: $left"
fi
has w3a "$WORK/w3a.err" "write failed: File too large; the report's files written before it were removed"
# An application that writes past the limit dies of SIGXFSZ, as without
# taskprof (which ignores SIGXFSZ only for itself).
mkdir -p "$WORK/w3b"
(ulimit -f 12; timeout "$OP_TIMEOUT" "$TP" op -o "$WORK/w3b" -- \
	bash -c 'exec head -c 40000 /dev/zero >"$0"' "$WORK/w3b.big" >"$WORK/w3b.out" 2>"$WORK/w3b.err")
OPRC=$?
rc_is w3b 153
has w3b "$WORK/w3b.err" "taskprof op: the application was killed by SIGXFSZ (File size limit exceeded)"
# SIGXFSZ ignored when taskprof started stays ignored in the application:
# its write fails with EFBIG instead.
mkdir -p "$WORK/w3c"
(ulimit -f 12; trap '' XFSZ; timeout "$OP_TIMEOUT" "$TP" op -o "$WORK/w3c" -- \
	bash -c 'exec head -c 40000 /dev/zero >"$0"' "$WORK/w3c.big" >"$WORK/w3c.out" 2>"$WORK/w3c.err")
OPRC=$?
rc_is w3c 1
has w3c "$WORK/w3c.err" "File too large"
lacks w3c "$WORK/w3c.err" "killed by SIGXFSZ"
# The injector's pass_<p>.bin (many_blocks: ~880 KB) past the limit kills
# the application with SIGXFSZ mid-write: its temporary file is removed.
rm -rf "$WORK/w3d"
mkdir -p "$WORK/w3d"
(ulimit -f 12; timeout "$OP_TIMEOUT" "$TP" op -o "$WORK/w3d" "$MB" >"$WORK/w3d.out" 2>"$WORK/w3d.err")
OPRC=$?
rc_is w3d 153
has w3d "$WORK/w3d.err" "taskprof op: the application was killed by SIGXFSZ"
has w3d "$WORK/w3d.err" "taskprof op: removed 1 temporary file the application left in $WORK/w3d/OPPROF_"
no_tmp w3d "$WORK/w3d"
# The injector's own EFBIG (many_blocks: pass_<p>.bin ~880 KB), SIGXFSZ
# ignored from the start so the application survives it: a failure.
rm -rf "$WORK/w1_fbig"
mkdir -p "$WORK/w1_fbig"
(ulimit -f 12; trap '' XFSZ; timeout "$OP_TIMEOUT" "$TP" op -o "$WORK/w1_fbig" "$MB" \
	>"$WORK/w1_fbig.out" 2>"$WORK/w1_fbig.err")
OPRC=$?
injector_failed w1_fbig "File too large"

# ---- W4 ----------------------------------------------------------------------
say "W4: stdout on a full device"
timeout "$OP_TIMEOUT" "$TP" op -o "$WORK/w4" "$VA" >/dev/full 2>"$WORK/w4.err"
OPRC=$?
rc_is w4 1
has w4 "$WORK/w4.err" "taskprof op: writing stdout: No space left on device"
"$TP" op --help >/dev/full 2>"$WORK/w4h.err"
OPRC=$?
rc_is w4h 1
has w4h "$WORK/w4h.err" "taskprof op: writing stdout: No space left on device"

# ---- W5 ----------------------------------------------------------------------
say "W5: signals while the report is written, and SIGHUP while the application runs"
# The report of many_blocks (5000 blocks) writes CSVs for a while. perl
# resets SIGINT / SIGHUP: a background job starts with SIGINT ignored.
# Signalled once a report file's *.tmp (*.csv, *.json) exists (the
# application is gone);
# an attempt where taskprof finished first is made again.
for v in "INT 130" "TERM 143" "HUP 129"; do
	read -r sig want <<<"$v"
	label=w5_$sig
	for attempt in 1 2 3; do
		out=$WORK/$label
		rm -rf "$out"
		mkdir -p "$out"
		perl -e '$SIG{INT} = $SIG{HUP} = "DEFAULT"; exec @ARGV' "$TP" op -o "$out" "$MB" \
			>"$WORK/$label.out" 2>"$WORK/$label.err" &
		pid=$!
		seen=0
		# the report's files (the injector writes launch.txt and dump/)
		wait_until 6000 0.01 "$pid" compgen -G "$out/OPPROF_*/device0/many_acc/0/*.[cj]s[vo]*.tmp" &&
			seen=1
		sent=0
		[ $seen = 1 ] && kill -"$sig" $pid 2>/dev/null && sent=1
		wait $pid
		OPRC=$?
		[ $sent = 1 ] && [ "$OPRC" != 0 ] && break
		echo "   (attempt $attempt: the report ended before SIG$sig; again)"
	done
	rc_is "$label" "$want"
	dir=$(ls -d "$out"/OPPROF_* 2>/dev/null | head -1)
	msg=$(grep -vE '^taskprof op: (output |kernel replay|many_acc launch [0-9]+: pass|warning: many_acc: instrumentation)' \
		"$WORK/$label.err")
	if [[ $msg == "taskprof op: interrupted by SIG$sig: removed "[0-9]*" temporary file"*"; what was written before is in $dir" ]] &&
		[ "$(wc -l <<<"$msg")" = 1 ]; then
		ok "$label: one line: $msg"
	else
		bad "$label: want one line 'taskprof op: interrupted by SIG$sig: removed N temporary file(s); what was written before is in $dir', got: $msg"
	fi
	no_tmp "$label" "$out"
done

# SIGHUP sent to taskprof while the application runs reaches it (it exits
# 44 on SIGHUP); ignored at entry (nohup) it stays ignored.
hup_app='trap "exit 44" HUP; : >"$0"; for i in $(seq 60); do sleep 0.05; done; exit 9'
for mode in forward nohup; do
	label=w5_hup_$mode
	rm -f "$WORK/ready"
	if [ $mode = forward ]; then
		env --default-signal=HUP "$TP" op -o "$WORK/$label" -- bash -c "$hup_app" "$WORK/ready" \
			>"$WORK/$label.out" 2>"$WORK/$label.err" &
	else
		env --ignore-signal=HUP "$TP" op -o "$WORK/$label" -- bash -c "$hup_app" "$WORK/ready" \
			>"$WORK/$label.out" 2>"$WORK/$label.err" &
	fi
	pid=$!
	wait_until 400 0.05 "" test -e "$WORK/ready"
	kill -HUP $pid
	wait $pid
	OPRC=$?
	if [ $mode = forward ]; then
		rc_is "$label" 44
	else
		rc_is "$label" 9 # the application ran to its end
	fi
done

# ---- W6 ----------------------------------------------------------------------
say "W6: the application closes the injector's descriptors between two launches"
timeout "$OP_TIMEOUT" "$TP" op -o "$WORK/w6a" -c 5 -- "$RB" closefds >"$WORK/w6a.out" 2>"$WORK/w6a.err"
OPRC=$?
rc_is w6a 0
lacks w6a "$WORK/w6a.err" "write failed"
lacks w6a "$WORK/w6a.err" "the profiler failed"
has w6a "$WORK/w6a.err" "taskprof op: profiled 2 kernel launches; output "
has w6a "$WORK/w6a.out" "robust closefds: checksum"
n=$(cat "$WORK"/w6a/OPPROF_*/launches_*.txt 2>/dev/null | grep -c '^device=0 name=cfd_acc .* profiled=1 ')
[ "$n" = 2 ] && ok "w6a: launches file lists both launches, profiled" ||
	{ bad "w6a: want 2 profiled launch lines, got $n"; show "$(ls "$WORK"/w6a/OPPROF_*/launches_*.txt | head -1)"; }
timeout "$OP_TIMEOUT" "$TP" op -o "$WORK/w6b" -- "$RB" closefds fsize >"$WORK/w6b.out" 2>"$WORK/w6b.err"
OPRC=$?
rc_is w6b 1
if grep -qE '^taskprof op: the profiler failed inside the application \(pid [0-9]+\): /.*/launches_[0-9]+\.txt: write failed: File too large$' \
	"$WORK/w6b.err"; then
	ok "w6b: the launcher names the file and the reason (through injector_errors.txt)"
else
	bad "w6b: no 'the profiler failed inside the application (pid N): .../launches_N.txt: write failed: File too large'"
	show "$WORK/w6b.err"
fi
has w6b "$WORK/w6b.err" "taskprof op: the profiler failed (see above); the application exited with status 0"
has w6b "$WORK/w6b.out" "robust closefds: checksum"

say "W7: the profiling channels or their reader cannot start: the profiler failed"
L2MSG="vector_add: pass 0: channels: TASKPROF_SIM_L2_BYTES=100: expected a number of bytes, 2048 (one set of 16 ways of 128 bytes) to 17179869184"
for mode in kernel application; do
	TASKPROF_SIM_L2_BYTES=100 op_run "w7$mode" --replay-mode "$mode" -- "$VA"
	rc_is "w7$mode" 1
	if [ $mode = kernel ]; then
		who="\\(pid [0-9]+\\)"
		has w7$mode "$WORK/w7$mode.err" "taskprof op: the profiler failed (see above); the application exited with status 0"
	else
		who="\\(run 1, pass 0, pid [0-9]+\\)"
		has w7$mode "$WORK/w7$mode.err" "taskprof op: application replay stopped after run 1 of 4 (pass 0); no report"
	fi
	if grep -E "^taskprof op: the profiler failed inside the application $who: " "$WORK/w7$mode.err" |
		grep -qF ": $L2MSG"; then
		ok "w7$mode: the launcher names the launch and the reason"
	else
		bad "w7$mode: no 'the profiler failed inside the application $who: $L2MSG'"
		show "$WORK/w7$mode.err"
	fi
	grep -qE "^op_vector_add: .*: ok$" "$WORK/w7$mode.out" && ok "w7$mode: the application's launch ran" ||
		{ bad "w7$mode: the application did not report ok"; show "$WORK/w7$mode.out"; }
done
finish
