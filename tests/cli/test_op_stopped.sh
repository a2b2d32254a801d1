#!/usr/bin/env bash
# `taskprof op` when the application is stopped (SIGSTOP from outside, a
# debugger, a cgroup freezer; docs/op.md "Exit status", "Limits"):
#
#   T3 slow (200 ms per execution), --pass-timeout 2: stopped for longer
#      than the timeout in the middle of its warm-up, then continued: the
#      stop is not taken for a hung kernel (exit 0, status=ok), where it
#      used to end the application as a pass timeout (exit 1)
#
# Every step waits for a condition (a file, a line, a process state) with
# a generous limit; a limit reached is a failure and ends what is left.
#
# usage: test_op_stopped.sh TASKPROF_BINARY
. "$(dirname "$0")/op_test_lib.sh" "$1"

need "$APPS/slow"
# Limit, in 0.05 s steps, of every wait below (60 s).
STEPS=${OP_WAIT_STEPS:-1200}

# child_of PID: the application taskprof op PID started ("" when none).
child_of() { ps -o pid= --ppid "$1" 2>/dev/null | head -1 | tr -d ' '; }

# state_of PID: the state letter of /proc/PID/stat ("" when gone).
state_of() { sed -n 's/.*) \(.\) .*/\1/p' "/proc/$1/stat" 2>/dev/null; }

# wait_for WHAT COMMAND...: run COMMAND every 0.05 s until it succeeds;
# return 1 (and fail WHAT) when it never did.
wait_for() {
	local what=$1 i
	shift
	for ((i = 0; i < STEPS; i++)); do
		"$@" && return 0
		sleep 0.05
	done
	bad "$what: not within $((STEPS / 20)) s"
	return 1
}

is_stopped() { [[ $(state_of "$1") == [Tt] ]]; }
gone() { ! kill -0 "$1" 2>/dev/null; }

# cleanup: after a failed step, end taskprof ($pid) and its application
# ($app) and wait until both are gone.
cleanup() {
	kill -KILL ${app:+"$app"} "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	[ -z "$app" ] || wait_for "the application $app to be gone" gone "$app"
}

# reap LABEL WANT: wait for taskprof ($pid) to end, then check its exit
# status. A taskprof still there after the limit fails, and is killed with
# its application ($app): return 1.
reap() {
	if ! wait_for "$1: taskprof op to end" gone "$pid"; then
		show "$WORK/$1.err"
		cleanup
		return 1
	fi
	wait "$pid"
	OPRC=$?
	if [ "$OPRC" = "$2" ]; then
		ok "$1: exit $OPRC"
	else
		bad "$1: exit $OPRC, want $2"
		show "$WORK/$1.err"
	fi
}

# ---- T3 ---------------------------------------------------------------------
# slow_acc: 200 ms per execution; 20 warm-ups (4 s), then one pass. The
# application is stopped once its launch folder exists (the replay has
# begun: the warm-up executions are watched by --pass-timeout), for 4 s,
# twice the timeout: that sleep is the point of the test, not a wait.
say "T3: stopped for longer than --pass-timeout during the warm-up, then continued"
label=t3
rm -rf "${WORK:?}/$label"
mkdir -p "$WORK/$label"
OP_OUT_FILE=$WORK/t3.bin "$TP" op -o "$WORK/$label" --pass-timeout 2 --warm-up 20 \
	--aic-metrics BasicInfo -- "$APPS/slow" >"$WORK/$label.out" 2>"$WORK/$label.err" &
pid=$!
app=
launch_dir_made() { compgen -G "$WORK/$label/OPPROF_*/device0/slow_acc/0/dump" >/dev/null; }
if wait_for "$label: the launch folder" launch_dir_made; then
	app=$(child_of "$pid")
	kill -STOP "$app"
	if wait_for "$label: the application in state T" is_stopped "$app"; then
		sleep 4
		kill -CONT "$app"
		reap "$label" 0 || true
		d=$(ls -d "$WORK/$label"/OPPROF_*/device0/slow_acc/0 2>/dev/null | head -1)
		st=$(kv "${d:-/nonexistent}/launch.txt" status)
		if [ "$st" = ok ] && [ "$(kv "$d/launch.txt" passes_done)" = 1 ]; then
			ok "$label: status=ok, 1 pass done: the stop was not taken for a hang"
		else
			bad "$label: launch.txt status '$st', want ok with 1 pass done"
			show "${d:-/nonexistent}/launch.txt"
		fi
		grep -qF "pass timed out" "$WORK/$label.err" &&
			{ bad "$label: the stop was taken for a pass timeout"; show "$WORK/$label.err"; }
	else
		cleanup
	fi
else
	cleanup
fi

finish
