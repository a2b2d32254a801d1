#!/usr/bin/env bash
# `taskprof op` when the application is stopped (SIGSTOP from outside, a
# debugger, a cgroup freezer; docs/op.md "Exit status", "Limits"):
#
#   T1 stopped application, SIGTERM / SIGHUP / SIGINT to taskprof op: the
#      signal is passed on with a SIGCONT, so the application ends by it
#      (exit 143 / 129 / 130) instead of both waiting for good; taskprof
#      op said the application was stopped
#   T2 stopped application that ignores SIGTERM and SIGHUP: the first
#      signal continues it (state T -> not T), the second of SIGTERM or
#      SIGHUP kills it (exit 137), as a second SIGINT does (the same
#      signal as the first more than a second later: a repeat within a
#      second is ignored); the same for an application that runs
#   T3 slow (200 ms per execution), --pass-timeout 2: stopped for longer
#      than the timeout in the middle of its warm-up, then continued: the
#      stop is not taken for a hung kernel (exit 0, status=ok), where it
#      used to end the application as a pass timeout (exit 1)
#   T4 slow (1.5 s per execution), --pass-timeout 1: the launch fails with
#      advice that fits the mode: kernel replay "use --replay-mode
#      application", application replay "raise --pass-timeout" (it used
#      to advise the mode already in use)
#
# Every step waits for a condition (a file, a line, a process state) with
# a generous limit; a limit reached is a failure and ends what is left.
#
# usage: test_op_stopped.sh TASKPROF_BINARY
. "$(dirname "$0")/op_test_lib.sh" "$1"
# T4 ends the application at its pass timeout with kernel threads still
# running, on purpose: not a leak to report under TSan (races still are).
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}report_thread_leaks=0"

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
	local what=$1
	shift
	wait_until "$STEPS" 0.05 "" "$@" && return 0
	bad "$what: not within $((STEPS / 20)) s"
	return 1
}

is_stopped() { [[ $(state_of "$1") == [Tt] ]]; }
not_stopped() { [[ $(state_of "$1") != [Tt] ]]; }
says() { grep -qF -- "$2" "$1"; }

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

# start LABEL SCRIPT [OP OPTIONS...]: taskprof op (SIGINT, SIGTERM, SIGHUP
# at their default: a background job of a script starts with SIGINT
# ignored) on `sh -c SCRIPT READY-FILE`; once the application made its
# ready file, it is stopped with SIGSTOP and taskprof op says so. Sets
# pid (taskprof) and app.
start() {
	local label=$1 script=$2
	shift 2
	rm -f "$WORK/$label.ready"
	app=
	env --default-signal=INT,TERM,HUP "$TP" op -o "$WORK/$label" "$@" -- \
		sh -c "$script" "$WORK/$label.ready" >"$WORK/$label.out" 2>"$WORK/$label.err" &
	pid=$!
	wait_for "$label: the application's ready file" test -e "$WORK/$label.ready" || return 1
	app=$(child_of "$pid")
	[ -n "$app" ] || { bad "$label: no application process under taskprof op $pid"; return 1; }
	kill -STOP "$app"
	wait_for "$label: the application in state T" is_stopped "$app" || return 1
	wait_for "$label: taskprof op saying the application is stopped" says \
		"$WORK/$label.err" "taskprof op: the application (pid $app) is stopped by SIGSTOP;" &&
		ok "$label: application $app stopped, and taskprof op said so"
	return 0
}

# ---- T1 ---------------------------------------------------------------------
say "T1: a stopped application and one SIGTERM, SIGHUP or SIGINT to taskprof op"
for v in "TERM 143" "HUP 129" "INT 130"; do
	read -r sig want <<<"$v"
	label=t1_$sig
	if start "$label" ': >"$0"; exec sleep 120'; then
		kill -"$sig" "$pid"
		if reap "$label" "$want"; then
			grep -qF "taskprof op: interrupted; reporting what was collected" \
				"$WORK/$label.err" && ok "$label: reported as interrupted" ||
				{ bad "$label: no 'interrupted' line"; show "$WORK/$label.err"; }
			gone "$app" && ok "$label: the application is gone" ||
				bad "$label: the application $app is still there"
		fi
	else
		cleanup
	fi
done

# ---- T2 ---------------------------------------------------------------------
say "T2: a stopped application that ignores SIGTERM and SIGHUP: the second signal kills it"
for v in "TERM TERM" "HUP HUP" "TERM HUP"; do
	read -r first second <<<"$v"
	label=t2_${first}_$second
	if start "$label" 'trap "" TERM HUP; : >"$0"; exec sleep 120'; then
		kill -"$first" "$pid"
		# The first signal continued it (and it ignores the signal):
		# taskprof handled it, so the second one is not merged with it.
		if wait_for "$label: the application continued after SIG$first" not_stopped "$app"; then
			ok "$label: SIG$first continued the application"
			# The same signal again within a second is a repeat of
			# the first (GNU timeout's double delivery), ignored.
			[[ $first != "$second" ]] || sleep 1.2
			kill -"$second" "$pid"
			reap "$label" 137 && { gone "$app" && ok "$label: the application is gone" ||
				bad "$label: the application $app is still there"; }
		else
			cleanup
		fi
	else
		cleanup
	fi
done

# The same with an application that runs (not stopped): once taskprof
# took the first signal (no longer pending in /proc/PID/status), the
# second kills the application.
# delivered PID SIGNUM: SIGNUM is pending neither for PID's threads nor
# for the process.
delivered() {
	local bit=$((1 << ($2 - 1))) m
	for m in $(sed -n 's/^\(SigPnd\|ShdPnd\):[[:space:]]*//p' "/proc/$1/status" 2>/dev/null); do
		(((16#$m & bit) == 0)) || return 1
	done
	return 0
}
for v in "TERM 15 TERM" "HUP 1 TERM"; do
	read -r first num second <<<"$v"
	label=t2r_${first}_$second
	rm -f "$WORK/$label.ready"
	env --default-signal=INT,TERM,HUP "$TP" op -o "$WORK/$label" -- \
		sh -c 'trap "" TERM HUP; : >"$0"; exec sleep 120' "$WORK/$label.ready" \
		>"$WORK/$label.out" 2>"$WORK/$label.err" &
	pid=$!
	app=
	if wait_for "$label: the application's ready file" test -e "$WORK/$label.ready"; then
		app=$(child_of "$pid")
		kill -"$first" "$pid"
		if wait_for "$label: taskprof op to take SIG$first" delivered "$pid" "$num"; then
			[[ $first != "$second" ]] || sleep 1.2 # not a repeat (see T2)
			kill -"$second" "$pid"
			reap "$label" 137 && ok "$label: running application, SIG$first then SIG$second kill it"
		else
			cleanup
		fi
	else
		cleanup
	fi
done

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

# slow_acc at 1.5 s per execution against --pass-timeout 1: the advice
# fits the mode. Kernel replay: application replay (its first execution is
# already a replay); application replay, where that advice would name the
# mode in use: a larger --pass-timeout.
say "T4: a kernel slower than --pass-timeout: the advice fits the replay mode"
for mode in kernel application; do
	label=t4_$mode
	op_run "$label" --replay-mode $mode --pass-timeout 1 --aic-metrics BasicInfo -- "$APPS/slow" 1500
	if [ $mode = kernel ]; then
		want="failed: pass timed out after 1 s; use --replay-mode application"
	else
		want="failed: pass timed out after 1 s; raise --pass-timeout"
	fi
	if [ $OPRC = 1 ] && grep -qF -- "$want" "$WORK/$label.err" &&
		{ [ $mode = kernel ] || ! grep -q 'use --replay-mode application' "$WORK/$label.err"; }; then
		ok "$label: exit 1, '$want'"
	else
		bad "$label: exit $OPRC, want 1 and '$want'$([ $mode = kernel ] || echo " (and no 'use --replay-mode application')")"
		show "$WORK/$label.err"
	fi
done

finish
