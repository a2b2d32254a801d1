#!/usr/bin/env bash
# CLI test of `taskprof run` interrupted by SIGTERM / SIGINT / SIGHUP: exit
# by the signal (143 / 130 / 129), one line on stderr naming the signal and the run
# folder, and no temporary file left: inside a slow kernel (every build),
# then, where paged_attention Case1 runs in seconds (not under TSan,
# $TASKPROF_TEST_SANITIZE=thread, set by CMake), PMU CSV shards during the
# run and merged_swimlane.json.*.tmp during the conversion.
# usage: test_cli_run_signals.sh TASKPROF_BINARY
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" || exit 1
bin=$1
cli_init /tmp/tp_cli_sig_XXXXXX pid

# interrupt SIG CODE GLOB WHAT ARGS...: start `taskprof run ARGS` in the
# background (env --default-signal: a background job of a script starts
# with SIGINT ignored; $sigenv overrides), wait until a file matching GLOB
# exists in the run folder (an absolute GLOB: anywhere), send SIG, check
# exit CODE, the message and the folder. Each signal in $ignored (set
# ignored at entry through $sigenv) is sent first and must be ignored.
# An interrupted run dies with its device threads running, on purpose:
# not a leak to report under TSan (races are still reported).
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}report_thread_leaks=0"

sigenv=--default-signal=INT,HUP
ignored=
# signame SIG: how the line names it
signame() {
	if [[ $1 == XCPU ]]; then
		echo "SIGXCPU (the CPU time limit, ulimit -t, was reached)"
	else
		echo "SIG$1"
	fi
}
# The phase the line names ("while running ..."): an extglob pattern,
# set for each call.
shopt -s extglob
phase='running slowcase Default on a2a3sim'
interrupt() {
	local sig=$1 want=$2 glob=$3 what=$4 out=$root/$4
	shift 4
	env $sigenv "$bin" run "$@" -o "$out" >"$root/out" 2>"$root/err" &
	pid=$!
	local where=$out/*/$glob
	[[ $glob == /* ]] && where=$glob
	if ! wait_until 1200 0.05 "$pid" compgen -G "$where"; then
		echo "FAIL: $what: no $glob appeared (taskprof $(kill -0 $pid 2>/dev/null &&
			echo running || echo exited)): $(cat "$root/err")"
		fail=1
		kill -KILL $pid 2>/dev/null; wait $pid; pid=
		return
	fi
	local ign
	for ign in $ignored; do
		kill -"$ign" $pid
		sleep 0.5
		if ! kill -0 $pid 2>/dev/null; then
			echo "FAIL: $what: a SIG$ign ignored at entry ended taskprof: $(cat "$root/err")"
			fail=1
		else
			echo "ok: $what: SIG$ign ignored at entry stays ignored"
		fi
	done
	local code msg
	signal_and_reap "$sig"
	# log lines and progress lines ("taskprof run: <phase>..." after 2 s
	# of a phase) aside
	msg=$(run_message "$root/err")
	local dir
	dir=$(ls -d "$out"/*/)
	dir=${dir%/}
	if [[ $code -ne $want ]]; then
		echo "FAIL: $what: exit $code, want $want ($msg)"; fail=1
	elif [[ $msg != "taskprof run: interrupted by $(signame "$sig") while "$phase": removed "*" temporary file"*"; what was written before is in $dir (its result.txt says what was not finished)" ]]; then
		echo "FAIL: $what: unexpected message: $msg"; fail=1
	elif [[ -z ${trace_due:-} ]] && ! [[ $(head -n 3 "$dir/result.txt" 2>/dev/null) == "${want_head:-$'callable slowcase\ncase Default\nplatform a2a3sim'}" &&
		$(wc -l <"$dir/result.txt") -eq 14 &&
		$(tail -n 2 "$dir/result.txt" 2>/dev/null) == $'status FAILED\nerror the run was cut short (interrupted, crashed or ended by the case\'s exit(): taskprof\'s last line on stderr said which); the files here are what it had written by then' ]]; then
		# Interrupted before the run wrote its result.txt: one says so,
		# after the run's 12 settings lines (as a failed run's has).
		echo "FAIL: $what: result.txt is '$(cat "$dir/result.txt" 2>&1)', want the settings and the interrupted mark"; fail=1
	elif [[ -z ${trace_due:-} ]] && [[ -n ${want_settings:-} ]] &&
		! grep -qx -e "$want_settings" "$dir/result.txt"; then
		echo "FAIL: $what: result.txt lacks '$want_settings': $(cat "$dir/result.txt")"; fail=1
	elif [[ $(wc -l <<<"$msg") -ne 1 ]]; then
		echo "FAIL: $what: expected one line, got: $msg"; fail=1
	elif [[ -n $(find "$out" -name '*.tmp') ]]; then
		echo "FAIL: $what: temporary files left: $(find "$out" -name '*.tmp')"; fail=1
	elif ! compgen -G "$dir/name_map_*.json" >/dev/null; then
		echo "FAIL: $what: the finished name map was removed"; fail=1
	else
		echo "ok: $what -> $code: $msg"
	fi
}

# Inside a kernel that runs for 20 s (tests/case_so/slowcase.c), every
# collector on: the signal must come long before the end. SIGINT and
# SIGHUP ignored at entry (a background job, nohup) stay ignored. SIGHUP
# (the terminal closed) cleans up as SIGTERM does, and so do the other
# signals whose default action ends a process: SIGXCPU (a soft CPU-time
# limit, ulimit -t) and SIGUSR1 here.
so=$(dirname "$bin")/tests/case_so/libslowcase.so
for v in "TERM 143 slow_term --ignore-signal=INT,HUP INT HUP" "HUP 129 slow_hup --default-signal=INT,HUP" \
	"XCPU 152 slow_xcpu --default-signal=INT,HUP" "USR1 138 slow_usr1 --default-signal=INT,HUP"; do
	read -r sig code what env_arg ign <<<"$v"
	rm -f "$root/mark.start"
	t0=$SECONDS
	SLOWCASE_MS=20000 SLOWCASE_MARK=$root/mark sigenv=$env_arg ignored=$ign \
		want_settings='swimlane_level 4' interrupt "$sig" "$code" "$root/mark.start" "$what" \
		"$so" --stall-timeout 0 --enable-l2-swimlane --enable-dep-gen --enable-pmu
	if (( SECONDS - t0 >= 20 )); then
		echo "FAIL: $what: the run was not cut short ($((SECONDS - t0)) s)"; fail=1
	fi
done
# No collector, so nothing written yet, and -o names folders that did not
# exist: the empty run folder goes, and so do the folders made for it.
start_slow --stall-timeout 0 -o "$root/made/deeper"
signal_and_reap TERM
msg=$(run_message "$root/err")
if [[ $code -ne 143 ]] ||
	! [[ $msg =~ ^"taskprof run: interrupted by SIGTERM while running slowcase Default on a2a3sim: removed 0 temporary files and the empty run folder $root/made/deeper/slowcase_"[A-Za-z0-9_]+" and the folder $root/made made for the output"$ ]] ||
	[[ -e $root/made ]]; then
	echo "FAIL: slow_made: exit $code, want 143, the made folders named and gone: $msg"
	ls -R "$root/made" 2>/dev/null | head -5
	fail=1
else
	echo "ok: slow_made -> $code: $msg"
fi
# A --rounds run names the round it was in: 0.2 s kernels, 1000 rounds,
# the signal after the third kernel began.
rm -f "$root/mark.start"
SLOWCASE_MS=200 SLOWCASE_MARK=$root/mark env --default-signal=INT,HUP "$bin" run "$so" \
	--rounds 1000 -o "$root/rounds" >"$root/out" 2>"$root/err" &
pid=$!
rounds_seen=0
for _ in $(seq 600); do
	[[ -e $root/mark.start ]] && { rounds_seen=$((rounds_seen + 1)); rm -f "$root/mark.start"; }
	((rounds_seen >= 3)) && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.02
done
signal_and_reap INT
msg=$(run_message "$root/err")
round=
[[ $msg =~ ^"taskprof run: interrupted by SIGINT while running slowcase Default on a2a3sim (round "([0-9]+)" of 1000): removed " ]] &&
	round=${BASH_REMATCH[1]}
if [[ $code -ne 130 || -z $round ]] || ((round < 3 || round > 10)); then
	echo "FAIL: rounds_int: exit $code (want 130), round '$round' (want 3..10; $rounds_seen kernels seen): $msg"
	fail=1
else
	echo "ok: rounds_int -> $code: $msg"
fi
# A run that fails before writing anything leaves no folder either: the
# orchestration fails before its first submit (exit 1), and -o made two
# folders for the run folder.
BADCASE=fail_orch "$bin" run "$(dirname "$bin")/tests/case_so/libbadcase.so" \
	-o "$root/made2/deeper" >/dev/null 2>&1
code=$?
if [[ $code -ne 1 || -e $root/made2 ]]; then
	echo "FAIL: failed run with -o NEW/DIRS: exit $code, $root/made2 $([[ -e $root/made2 ]] && echo left || echo gone)"
	fail=1
else
	echo "ok: failed run with -o NEW/DIRS: exit $code, the folders it made are gone"
fi
# A folder that was there before is never removed, even named through a
# folder the run made ("new/../pre": adversarial trial, it removed "pre").
mkdir -p "$root/pre dir"
BADCASE=fail_orch "$bin" run "$(dirname "$bin")/tests/case_so/libbadcase.so" \
	-o "$root/new3/../pre dir" >/dev/null 2>&1
[[ -d "$root/pre dir" ]] && echo "ok: -o NEW/../OLD: the old folder stays" ||
	{ echo "FAIL: -o NEW/../OLD removed the folder that was there"; fail=1; }
# `taskprof swimlane` interrupted by SIGHUP while it writes its trace to
# a FIFO whose reader does not read (the write blocks): it has no run
# folder, so the line says nothing was written.
"$bin" run synthetic --enable-l2-swimlane -o "$root/syn" >/dev/null 2>&1
rec=$(ls "$root"/syn/*/l2_swimlane_records.json 2>/dev/null | head -1)
mkfifo "$root/fifo"
sleep 30 <"$root/fifo" &
reader=$!
if [[ -z $rec ]]; then
	echo "FAIL: swimlane_hup: no records from run synthetic"; fail=1
else
	env --default-signal=HUP "$bin" swimlane "$rec" -o "$root/fifo" >/dev/null 2>"$root/err" &
	pid=$!
	# The signal goes once it has the FIFO open (its handlers are in
	# place long before): a fixed 1 s could come before a sanitized
	# start-up on a loaded machine was done, and SIGHUP's default action
	# would end it without a line. At most 60 s.
	# shellcheck disable=SC2317 # called by wait_until
	fifo_open() { readlink /proc/"$pid"/fd/* | grep -qxF "$root/fifo"; }
	wait_until 1200 0.05 "$pid" fifo_open
	signal_and_reap HUP
	msg=$(grep -v -e '^\[taskprof\]' -e '^Warning:' -e '^note:' "$root/err")
	want="taskprof swimlane: interrupted by SIGHUP: removed 0 temporary files; no output was written"
	if [[ $code -ne 129 || $msg != "$want" ]]; then
		echo "FAIL: swimlane_hup: exit $code, want 129 and '$want': $msg"; fail=1
	else
		echo "ok: swimlane_hup -> $code: $msg"
	fi
fi
kill $reader 2>/dev/null
wait $reader 2>/dev/null

# transport-demo: SIGTERM once its folder exists and the producers run
# (the banner is on stdout): one line, the empty folder removed, 143.
env $sigenv "$bin" transport-demo -n 100000000 -o "$root/td" >"$root/td.out" 2>"$root/err" &
pid=$!
wait_until 600 0.05 "" grep -q "producers x" "$root/td.out"
sleep 0.3
signal_and_reap TERM
msg=$(grep -v '^\[taskprof\]' "$root/err")
if [[ $code -ne 143 ]] || ! [[ $msg =~ ^"taskprof transport-demo: interrupted by SIGTERM: removed 0 temporary files and the empty run folder $root/td/transport_demo_"[0-9_]+" and the folder $root/td made for the output"$ ]] ||
   [[ -e $root/td ]]; then
	echo "FAIL: transport-demo TERM: exit $code: $msg; left: $(ls "$root/td" 2>&1)"; fail=1
else
	echo "ok: transport-demo TERM -> 143, empty folder and the -o folder it made removed"
fi

# The same signal twice at once: GNU timeout signals the command, then its
# process group. The repeat is ignored: one whole line, the folder removed
# (adversarial trial of 2 Dec: 7 of 12 lines cut short, 2 folders left).
# The signal comes after 1 s, 3 s in a sanitizer build: the run folder
# must exist by then for the line expected, and a sanitized start-up on a
# loaded 2-CPU machine takes a good part of a second.
bad_td=0
td_after=1
[[ -n ${TASKPROF_TEST_SANITIZE:-} ]] && td_after=3
for i in 1 2 3 4; do
	timeout -s TERM $td_after "$bin" transport-demo -t 2 -n 1000000000 -o "$root/tdt$i" >/dev/null 2>"$root/err"
	code=$?
	msg=$(grep -v '^\[taskprof\]' "$root/err")
	if [[ $code -ne 124 ]] ||
		! [[ $msg =~ ^"taskprof transport-demo: interrupted by SIGTERM: removed 0 temporary files and the empty run folder $root/tdt$i/transport_demo_"[0-9_]+" and the folder $root/tdt$i made for the output"$ ]] ||
		[[ -e $root/tdt$i ]]; then
		echo "FAIL: transport-demo under timeout ($i): exit $code: $msg; left: $(ls "$root/tdt$i" 2>&1)"
		bad_td=1
	fi
done
[[ $bad_td -eq 0 ]] && echo "ok: transport-demo under timeout, 4 times: one whole line, folder removed, 124" || fail=1

# taskprof run: two SIGTERMs at once inside the slow kernel, every
# collector on: one whole line, no temporary file left, 143.
start_slow --stall-timeout 0 --enable-l2-swimlane --enable-dep-gen --enable-pmu -o "$root/dbl"
signal_and_reap TERM TERM
msg=$(run_message "$root/err")
dir=$(ls -d "$root"/dbl/*/ 2>/dev/null)
dir=${dir%/}
if [[ $code -ne 143 || $msg != "taskprof run: interrupted by SIGTERM while running slowcase Default on a2a3sim: removed "*" temporary file"*"; what was written before is in $dir (its result.txt says what was not finished)" ]] ||
	[[ -n $(find "$root/dbl" -name '*.tmp') ]] || ! grep -qx "status FAILED" "$dir/result.txt"; then
	echo "FAIL: double SIGTERM: exit $code: $msg; tmp: $(find "$root/dbl" -name '*.tmp')"; fail=1
else
	echo "ok: double SIGTERM -> 143: $msg"
fi

if [[ ${TASKPROF_TEST_SANITIZE:-} == thread ]]; then
	echo "skip: Case1 interrupts (TSan: the run takes minutes)"
	exit $fail
fi

# During the run: the PMU collector's CSV shards are open.
phase='@(running paged_attention Case1 on a2a3sim|collecting the profiles and writing the outputs)' \
	want_head=$'callable paged_attention\ncase Case1\nplatform a2a3sim' want_settings='pmu_event_type 2' \
	interrupt TERM 143 'pmu.csv.*.shard*.tmp' pmu_term \
	paged_attention --case Case1 --enable-l2-swimlane --enable-dep-gen --enable-pmu
# During the conversion run does at the end: merged_swimlane.json.*.tmp.
# The run had passed: its result.txt gets a line saying the trace was not
# made, and the message points to it.
trace_due=1 phase='converting the swimlane records into a Perfetto trace' \
	interrupt INT 130 'merged_swimlane.json.*.tmp' convert_int \
	paged_attention --case Case1 --enable-l2-swimlane --enable-dep-gen
if [[ -e $root/convert_int ]] && compgen -G "$root/convert_int/*/merged_swimlane.json" >/dev/null; then
	echo "FAIL: convert_int: a merged_swimlane.json was published"; fail=1
fi
res=$(ls "$root"/convert_int/*/result.txt 2>/dev/null | head -1)
last=$([[ -n $res ]] && tail -n 1 "$res")
if [[ $last != "trace INTERRUPTED (merged_swimlane.json was not written; taskprof swimlane on this folder makes it)" ]]; then
	echo "FAIL: convert_int: result.txt's last line: '$last'"; fail=1
else
	echo "ok: convert_int: result.txt says the trace was interrupted"
fi

# `taskprof swimlane -o` into folders it makes, interrupted while it
# writes the trace of Case1's records: the folders go with the temporary
# file.
rec=$(ls "$root"/convert_int/*/l2_swimlane_records.json 2>/dev/null | head -1)
if [[ -z $rec ]]; then
	echo "FAIL: swimlane_made: no records from convert_int"; fail=1
else
	# made_interrupted NAME SIG CODE SUBDIR: swimlane -o $root/NAME/SUBDIR/
	# trace.json, SIG once its temporary file exists: exit CODE, one line,
	# the folders it made gone. SIGQUIT (Ctrl-\\) gets the same clean-up,
	# then its default action (a core dump where allowed: none here, ulimit
	# -c 0), exit 131 whether or not a core was written.
	made_interrupted() {
		local name=$1 sig=$2 want_code=$3 sub=$4
		( ulimit -c 0
		exec env --default-signal=INT,HUP,QUIT "$bin" swimlane "$rec" \
			-o "$root/$name/$sub/trace.json" >/dev/null 2>"$root/err" ) &
		pid=$!
		wait_until 1200 0.02 "$pid" compgen -G "$root/$name/$sub/trace.json.*.tmp"
		signal_and_reap "$sig"
		msg=$(run_message "$root/err" | grep -v -e '^Warning:' -e '^note:')
		want="taskprof swimlane: interrupted by SIG$sig: removed 1 temporary file and the folder $root/$name made for the output; no output was written"
		if [[ $code -ne $want_code || $msg != "$want" || -e $root/$name ]]; then
			echo "FAIL: swimlane $name: exit $code, want $want_code and '$want': $msg; left: $(find "$root/$name" 2>&1)"
			fail=1
		else
			echo "ok: swimlane $name -> $code: $msg"
		fi
	}
	made_interrupted made TERM 143 a/b
	made_interrupted madeq QUIT 131 a
	# Interrupted right after the trace was renamed into place (polling
	# for it): the line must not say "no output was written" then. Either
	# the process finished first (exit 0) or the line names the output.
	hits=0
	for i in 1 2 3; do
		out=$root/done_$i.json
		env --default-signal=INT,HUP "$bin" swimlane "$rec" -o "$out" >/dev/null 2>"$root/err" &
		pid=$!
		wait_until 3000 0.005 "$pid" test -e "$out"
		signal_and_reap TERM 2>/dev/null
		msg=$(run_message "$root/err" | grep -v -e '^Warning:' -e '^note:')
		want="taskprof swimlane: interrupted by SIGTERM: removed 0 temporary files; the output $out was complete and is in place"
		if [[ $code -eq 143 && $msg == "$want" && -s $out ]]; then
			hits=$((hits + 1))
		elif [[ $code -ne 0 || ! -s $out ]]; then
			echo "FAIL: swimlane_done_$i: exit $code, output $(ls -la "$out" 2>&1): $msg"; fail=1
		fi
	done
	echo "ok: swimlane_done: $hits of 3 interrupts came after the rename and said so (the others: exit 0)"
fi

exit $fail
