# Shared helpers of the command-line tests (tests/cli/test_*.sh; the op
# tests get them through op_test_lib.sh). Sourced, not run, relative to the
# sourcing script so that any working directory works:
#   . "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" || exit 1
# Sourcing only defines functions. The helpers use the sourcing test's
# globals: bin (the taskprof binary), root (its scratch folder, from
# cli_init), fail (0 until a check fails), pid (a background run).
# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154 # bin, root, fail, pid, code: the test's

# ---- set-up, verdict --------------------------------------------------------

# cli_init TEMPLATE [pid]: make the scratch folder mktemp -d TEMPLATE
# (e.g. /tmp/tp_cli_NAME_XXXXXX) into root, removed at exit, and set
# fail=0; unsets TASKPROF_PLATFORM. With "pid": pid is set empty, and at exit a run still in $pid
# (started in the background and not waited for yet: the test clears pid
# once it has) is killed first. Exits 1 when no folder can be made.
cli_init() {
	root=$(mktemp -d "$1") || { echo "FAIL: cannot make a scratch folder $1"; exit 1; }
	if [[ ${2:-} == pid ]]; then
		pid=
		trap '[[ -n $pid ]] && kill -KILL $pid 2>/dev/null; rm -rf "$root"' EXIT
	else
		trap 'rm -rf "$root"' EXIT
	fi
	fail=0
	# The platform of a command without -p (README "Platforms"): the
	# tests' expectations are a2a3sim's unless they say otherwise.
	unset TASKPROF_PLATFORM
}

# bad MESSAGE...: print "FAIL: MESSAGE" and set fail=1 (the test goes on).
bad() {
	echo "FAIL: $*"
	fail=1
}

# cli_finish PASS_LINE: print PASS_LINE when no check failed, then exit
# with $fail.
cli_finish() {
	[[ $fail -eq 0 ]] && echo "$1"
	exit "$fail"
}

# ---- what a command printed -------------------------------------------------

# only_line FILE WANT: FILE holds exactly the one line WANT, else bad.
only_line() {
	if [[ $(wc -l <"$1") -ne 1 || $(cat "$1") != "$2" ]]; then
		bad "stderr is '$(cat "$1")', expected '$2'"
	fi
}

# run_line NAME CODE LINE CMD...: run CMD (timeout $T; stdout into
# $root/out.txt, stderr into $root/err); it must exit CODE (else bad,
# naming NAME) and its stderr be exactly the one line LINE (only_line).
run_line() {
	local name=$1 want=$2 line=$3
	shift 3
	timeout "$T" "$@" >"$root/out.txt" 2>"$root/err"
	local code=$?
	[[ $code -eq $want ]] || bad "$name: exit $code, expected $want (124 = hang)"
	only_line "$root/err" "$line"
}

# has_line NAME FILE LINE: FILE has LINE (a fixed string) as a whole
# line, else bad, naming NAME and showing FILE's start (cat -A).
has_line() {
	grep -qxF -- "$3" "$2" || bad "$1: no line '$3' in: $(head -c 2000 "$2" | cat -A)"
}

# has TEXT NEEDLE: TEXT (a string) contains the fixed string NEEDLE, else bad.
has() {
	grep -qF -- "$2" <<<"$1" || bad "missing '$2' in: $1"
}

# tp_expect CODE NEEDLE ARGS...: run "$bin" ARGS (stderr into $root/err);
# it must exit CODE, print NEEDLE (a fixed string) on stdout or on stderr,
# and a usage error (CODE 2) must be exactly one stderr line. Prints
# "ok: ..." or "FAIL: ..." (fail=1).
tp_expect() {
	local want=$1 needle=$2
	shift 2
	local out err code
	out=$("$bin" "$@" 2>"$root/err")
	code=$?
	err=$(cat "$root/err")
	if [[ $code -ne $want ]]; then
		bad "taskprof $* exited $code, expected $want ($err)"
	elif ! grep -qF -- "$needle" <<<"$out" && ! grep -qF -- "$needle" "$root/err"; then
		bad "taskprof $*: no '$needle' in: $out $err"
	elif [[ $want -eq 2 && $(wc -l <"$root/err") -ne 1 ]]; then
		bad "taskprof $*: expected one error line, got: $err"
	else
		echo "ok: taskprof $* -> $code"
	fi
}

# run_message FILE: FILE's lines but the log lines ([taskprof] ...) and the
# progress lines ("taskprof CMD: <phase>..." and "... (N s)"): what a run
# said about how it ended.
run_message() {
	grep -v -E '^\[taskprof\]|^taskprof [a-z-]+: .*\.\.\.( \([0-9]+ s\))?$' "$1"
}

# ---- files left, output ------------------------------------------------------

# no_temps DIR [DEPTH]: nothing named *.tmp* is left under DIR (at most
# DEPTH levels down when given: 1 = DIR's own entries), else bad.
no_temps() {
	local left
	left=$(find "$1" ${2:+-maxdepth "$2"} -name '*.tmp*')
	[[ -z $left ]] || bad "temporary files left under $1: $left"
}

# closed_pipe SECONDS CMD...: run CMD (killed after SECONDS) with stdout a
# pipe whose reader is already gone; CMD's stderr is passed on, its exit
# status returned.
closed_pipe() {
	python3 - "$@" <<'EOF'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run(sys.argv[2:], stdout=w, stderr=subprocess.PIPE, timeout=float(sys.argv[1]))
sys.stderr.write(p.stderr.decode())
sys.exit(p.returncode)
EOF
}

# ---- background runs ------------------------------------------------------------

# wait_until TRIES STEP PID CMD...: run CMD (its output discarded) up to
# TRIES times, STEP seconds apart, until it succeeds; stop early once the
# process PID has ended (PID "": no such check). Returns 0 when CMD
# succeeded, 1 otherwise.
wait_until() {
	local tries=$1 step=$2 p=$3 i
	shift 3
	for ((i = 0; i < tries; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		[[ -z $p ]] || kill -0 "$p" 2>/dev/null || return 1
		sleep "$step"
	done
	return 1
}

# gone PID: the process PID has ended (returns 0), or is still there (1).
gone() { ! kill -0 "$1" 2>/dev/null; }

# start_slow ARGS...: `taskprof run` of the 20 s kernel of
# tests/case_so/slowcase.c (next to $bin) with ARGS, in the background, its
# SIGINT and SIGHUP at their default; sets pid, stdout / stderr into
# $root/out / err. Returns once the kernel has started ($root/mark.start;
# at most 60 s) or the run has ended.
start_slow() {
	rm -f "$root/mark.start"
	SLOWCASE_MS=20000 SLOWCASE_MARK=$root/mark env --default-signal=INT,HUP "$bin" run \
		"$(dirname "$bin")/tests/case_so/libslowcase.so" "$@" >"$root/out" 2>"$root/err" &
	pid=$!
	wait_until 1200 0.05 "$pid" test -e "$root/mark.start"
}

# signal_and_reap SIG...: send each SIG in turn to the background process
# $pid, then wait for it: its exit status in code, pid cleared.
signal_and_reap() {
	local s
	for s in "$@"; do
		kill -"$s" "$pid"
	done
	wait "$pid"
	code=$?
	pid=
}
