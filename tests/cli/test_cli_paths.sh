#!/usr/bin/env bash
# CLI test of failures on awkward output and input paths: the reason is
# always in the message (long paths are shortened in the middle, never cut
# at the end), a failed run leaves no empty run folder, and symbolic links
# in a loop or to nothing are named as such (not "File exists" or "not
# found"), in run, transport-demo, op and swimlane.
# usage: test_cli_paths.sh TASKPROF_BINARY
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" || exit 1
bin=$1
cli_init /tmp/tp_cli_paths_XXXXXX
cd "$root" || exit 1

expect() { # expect CODE NEEDLE ARGS...: exit CODE, NEEDLE in stderr
	local want=$1 needle=$2
	shift 2
	local what="$1 ${2:0:40}"
	"$bin" "$@" >"$root/out" 2>"$root/err"
	local code=$?
	local err
	err=$(grep -v '^\[taskprof\]' "$root/err")
	if [[ $code -ne $want ]]; then
		echo "FAIL: taskprof $what... exited $code, expected $want ($(tail -c 300 <<<"$err"))"
		fail=1
	elif ! grep -qF -- "$needle" <<<"$err"; then
		echo "FAIL: taskprof $what...: no '$needle' in: $(tail -c 300 <<<"$err")"
		fail=1
	else
		echo "ok: taskprof $what... -> $code: ...$(tail -c 120 <<<"$err")"
	fi
}

# 1. A 4039-byte output root: the run folder fits, its files' temporary
# names do not. Said once the folder is made, before the case runs (it
# used to fail at the end, writing the name map); the empty folder is
# gone.
P=$(python3 -c "print('/'.join(['p'*250]*16+['q'*23]))")
mkdir -p "$P"
expect 1 "bytes long: the paths of its files would pass the 4095 bytes a path may have; choose a shorter -o/--output" run synthetic -o "$P" --enable-l2-swimlane
if [[ -n $(ls -A "$P") ]]; then
	echo "FAIL: the failed run left $(ls -A "$P") behind"; fail=1
else
	echo "ok: the failed run removed its empty run folder"
fi
# Records to convert below.
mkdir -p keep
"$bin" run synthetic --enable-l2-swimlane --enable-dep-gen -o keep >/dev/null 2>&1 ||
	{ echo "FAIL: synthetic run"; fail=1; }
rec=$(ls keep/*/l2_swimlane_records.json)

# The converter on a 4065-byte folder: merged_swimlane.json's temporary
# name is too long; the message still ends with the reason.
D=$(python3 -c "print('/'.join(['p'*250]*16+['s'*49]))")
mkdir -p "$D"
cp "$rec" "$D/"
expect 1 "merged_swimlane.json: cannot open for writing: File name too long" swimlane "$D/l2_swimlane_records.json"
# A valid 250-byte file name: its temporary name is shortened to fit
# NAME_MAX, and the trace lands under the name given.
long=$(python3 -c "print('n'*245 + '.json')")
"$bin" swimlane "$rec" -o "$long" >/dev/null 2>"$root/err"
code=$?
if [[ $code -ne 0 || ! -s $long || -n $(compgen -G "${long:0:200}*.tmp") ]]; then
	echo "FAIL: swimlane -o <250-byte name>: exit $code: $(tail -c 300 "$root/err")"; fail=1
else
	echo "ok: swimlane -o <250-byte name> -> 0"
fi
rm -f "$long"
# A path past PATH_MAX is not "not found".
expect 1 "File name too long" swimlane "$root/$D/l2_swimlane_records.json"

# 2. Symbolic links: a loop (A -> B -> A) and a dangling one (d).
ln -s B A
ln -s A B
ln -s /nonexistent d
loop="A is a symbolic link in a loop (Too many levels of symbolic links)"
dang="d is a symbolic link whose target /nonexistent does not exist"
# run refuses them before preparing the case, as a usage error.
expect 2 "taskprof run: -o/--output: A: cannot create directory: $loop" run synthetic -o A
expect 2 "taskprof run: -o/--output: d: cannot create directory: $dang" run synthetic -o d
expect 2 "taskprof run: -o/--output: A/sub: cannot create directory: $loop" run synthetic -o A/sub
# transport-demo and op: usage errors as well (2), each with its message.
expect 2 "taskprof transport-demo: -o/--output: A: cannot create directory: $loop" transport-demo -o A
expect 2 "taskprof transport-demo: -o/--output: d: cannot create directory: $dang" transport-demo -o d
app=$(dirname "$bin")/examples/op_accumulate
expect 2 "--output A: cannot create the folder: $loop" op -o A -- "$app"
expect 2 "--output d: cannot create the folder: $dang" op -o d -- "$app"
# An --output folder too long is refused before any of it is created:
# bad usage (2) when DIR itself is too long, else (a deep current folder)
# the profiler's failure (1).
L=$(python3 -c "print('/'.join(['L'*200]*4))")
want=$(( ${#root} + 1 + ${#L} ))
expect 2 "--output: the folder's absolute path is $want bytes long; at most 768 are supported" op -o "$L" -- "$app"
L2=$(python3 -c "print('/'.join(['L'*189]*4))")
want=$(( ${#root} + 1 + ${#L2} ))
(( want > 768 )) &&
	expect 1 "--output: the folder's absolute path is $want bytes long; at most 768 are supported" op -o "$L2" -- "$app"
if [[ -e ${L%%/*} ]]; then
	echo "FAIL: op -o <too long>: created ${L%%/*}"; fail=1
else
	echo "ok: op -o <too long> created nothing"
fi
expect 1 "Error: Input file A: $loop" swimlane A
expect 1 "Error: Input file d: $dang" swimlane d
expect 1 "Error: deps.json d: $dang" swimlane "$rec" --deps-json d
expect 1 "Error: A: $loop" swimlane "$rec" -o A
expect 1 "Error: deps.json A: $loop" swimlane "$rec" --deps-json A
expect 1 "Error: Func names JSON A: $loop" swimlane "$rec" --func-names A
expect 1 "Error: Func names JSON d: $dang" swimlane "$rec" --func-names d
expect 1 "Error: Perf JSON A: $loop" sched-overhead A
expect 1 "Error: Perf JSON d: $dang" sched-overhead d
expect 1 "Error: failed to read deps.json A: $loop" sched-overhead "$rec" --deps-json A
# A sibling name map that cannot be read is named in a warning, not
# silently skipped (the trace is still written, without names).
mkdir -p sib
cp "$rec" sib/
ln -s /nonexistent sib/name_map_d.json
ln -s name_map_b.json sib/name_map_a.json
ln -s name_map_a.json sib/name_map_b.json
mkdir sib/name_map_c.json
for w in "Warning: sibling name map skipped: sib/name_map_d.json is a symbolic link whose target /nonexistent does not exist" \
	"Warning: sibling name map skipped: sib/name_map_a.json is a symbolic link in a loop (Too many levels of symbolic links)" \
	"Warning: sibling name map sib/name_map_c.json skipped: it is a directory"; do
	expect 0 "$w" swimlane sib/l2_swimlane_records.json
done
# Unchanged: a plain missing input keeps the reference's wording.
expect 1 "Error: Input file not found: missing.json" swimlane missing.json
for f in A B d; do
	[[ -L $f ]] || { echo "FAIL: $f was replaced"; fail=1; }
done

# The run folder deleted while the kernel runs: the collectors' exports
# would recreate it holding only the late files (no name map); the run
# A missing option value: the next word reads as an option, so it is not
# taken as the value (it used to be: `swimlane -o --pretty` wrote a trace
# named "--pretty", `op -o -k APP` profiled into a folder "-k"), in every
# command; a negative number is a value, "--" ends the options.
expect 2 "argument -o/--output: expected one argument" swimlane -o --pretty "$root/nothing"
[[ -e $root/--pretty ]] && { echo "FAIL: swimlane -o --pretty wrote ./--pretty"; fail=1; }
expect 2 "taskprof op: -o expects a value, got '-k', which is an option" op -o -k /bin/true
[[ -e $root/-k ]] && { echo "FAIL: op -o -k made ./-k"; fail=1; }
expect 2 "taskprof op: --kernel-name expects a value, got '--launch-count', which is an option" \
	op --kernel-name --launch-count 2 /bin/true
expect 2 "taskprof sched-overhead: --deps-json expects a path, got '--help', which is an option" \
	sched-overhead --deps-json --help "$root/nothing"
expect 2 "taskprof pmu: --func-names needs a file, got '-h', which is an option" \
	pmu --func-names -h "$root/nothing"
expect 2 "taskprof run: --block-dim expects" run gemm --block-dim -5
expect 1 "Error: Perf JSON not found: -x" sched-overhead -- -x
expect 2 "taskprof pmu: empty path for PMU_CSV" pmu ''
expect 2 "expected one records path, got '-' and '-'" sched-overhead - -
expect 2 "taskprof run: --enable-pmu: expected an integer event type (1, 2, 4, 5, 6, 7 or 8), got '-.5'" \
	run gemm --enable-pmu -.5
# The converter's closing hint (the reference's wording, on stdout) gets
# its meaning on a terminal's stderr: the command to run on these files.
if command -v script >/dev/null; then
	out=$(script -qec "'$bin' swimlane '$rec' -o hint.json >/dev/null" /dev/null | tr -d '\r')
	if grep -qF "(taskprof: that is \`$bin sched-overhead $rec\`; it finds the deps.json beside the records)" <<<"$out"; then
		echo "ok: swimlane on a terminal names the sched-overhead command"
	else
		echo "FAIL: swimlane on a terminal: no sched-overhead command in: $out"; fail=1
	fi
	# a folder that starts with '-': the printed command reads it as a
	# path (./), and pasted as printed, it runs
	mkdir -p -- "-run x" && cp -- "$rec" "$(dirname "$rec")/deps.json" "-run x/"
	out=$(script -qec "'$bin' swimlane -o hint.json -- '-run x' >/dev/null" /dev/null | tr -d '\r')
	cmd=$(sed -n 's/^(taskprof: that is `\(.*\)`; it finds.*/\1/p' <<<"$out")
	if [[ $cmd == "$bin sched-overhead './-run x/l2_swimlane_records.json'" ]] &&
		bash -c "$cmd" >/dev/null 2>"$root/err"; then
		echo "ok: the printed command for a folder named '-run x' runs"
	else
		echo "FAIL: the printed command for '-run x': '$cmd' ($(head -c 300 "$root/err"))"; fail=1
	fi
	"$bin" swimlane "$rec" -o hint.json >/dev/null 2>"$root/err"
	if grep -q "taskprof: that is" "$root/err"; then
		echo "FAIL: swimlane with stderr in a file printed the terminal's hint"; fail=1
	fi
fi
# An output root that cannot be a folder (a file on its path) fails
# before the case is prepared, as a usage error; the default one too.
: >afile
expect 2 "taskprof run: -o/--output: afile/sub: cannot create directory: afile exists and is not a directory" \
	run paged_attention --case Case1 -o afile/sub
# ... and so do one under /proc and one longer than PATH_MAX (they used to
# fail with exit 1 once the inputs were prepared)
expect 2 "taskprof run: -o/--output: /proc/tp_x: cannot create directory: /proc is on /proc (procfs), which holds no folders of ours" \
	run paged_attention --case Case1 -o /proc/tp_x
long=/$(printf 'a%.0s' $(seq 5000))
expect 2 "cannot create directory: the path is 5001 bytes long (at most 4095)" \
	run paged_attention --case Case1 -o "$long"
# the default root ./outputs in a working directory that takes no folder
(cd /proc && "$bin" run gemm >/dev/null 2>"$root/err")
code=$?
if [[ $code -eq 2 ]] && grep -qxF "taskprof run: the default output root (-o chooses another): outputs: cannot create directory: the working directory is on /proc (procfs), which holds no folders of ours" "$root/err"; then
	echo "ok: run in /proc: exit 2 before the run"
else
	echo "FAIL: run in /proc: exit $code, $(cat "$root/err")"; fail=1
fi
mkdir -p dflt && : >dflt/outputs
(cd dflt && "$bin" run gemm >/dev/null 2>"$root/err")
code=$?
if [[ $code -eq 2 ]] && grep -qxF "taskprof run: the default output root (-o chooses another): outputs: cannot create directory: outputs exists and is not a directory" "$root/err"; then
	echo "ok: run with a file named outputs: exit 2 before the run"
else
	echo "FAIL: run with a file named outputs: exit $code, $(cat "$root/err")"; fail=1
fi
# A working directory that was removed (a shell still in a deleted
# folder): the default (or a relative) output root cannot be made. Said
# as that, before the case runs, as bad usage (it generated the inputs,
# then failed with "outputs: cannot create directory outputs: No such file
# or directory", exit 1); transport-demo and op alike; swimlane's relative
# -o names the reason too.
gonecwd() { # gonecwd CODE NEEDLE ARGS...: taskprof ARGS in a removed folder
	local want=$1 needle=$2 code
	shift 2
	mkdir -p "$root/gone_cwd"
	(cd "$root/gone_cwd" && rmdir "$root/gone_cwd" && exec "$bin" "$@") >"$root/out" 2>"$root/err"
	code=$?
	if [[ $code -ne $want ]] || ! grep -qF -- "$needle" "$root/err"; then
		echo "FAIL: taskprof $1 in a removed working directory: exit $code (expected $want): $(grep -v '^\[taskprof\]' "$root/err" | tail -c 300)"
		fail=1
	else
		echo "ok: taskprof $1 in a removed working directory -> $code"
	fi
}
removed="the working directory was removed: cd to a folder that exists"
gonecwd 2 "taskprof run: the default output root (-o chooses another): outputs: cannot create directory: $removed" \
	run paged_attention --case Case1
grep -q "generating the inputs" "$root/err" && { echo "FAIL: run in a removed folder generated the inputs first"; fail=1; }
gonecwd 2 "taskprof run: -o/--output: o/r: cannot create directory: $removed" run synthetic -o o/r
gonecwd 2 "taskprof transport-demo: the default output root (-o chooses another): taskprof_output: cannot create directory: $removed" \
	transport-demo -n 10
gonecwd 2 "taskprof transport-demo: -o/--output: t/d: cannot create directory: $removed" \
	transport-demo -n 10 -o t/d
gonecwd 2 "taskprof op: the default output folder, the working directory (--output chooses another): cannot create the folder: $removed" \
	op -- /bin/true
gonecwd 2 "taskprof op: --output o/p: cannot create the folder: $removed" op -o o/p -- /bin/true
gonecwd 1 "Error: t.json: cannot open for writing: No such file or directory ($removed)" \
	swimlane "$root/$rec" -o t.json
# An output root that starts with '-' (given as --output=-x): the run's
# own conversion takes its records path as a path, not an option.
"$bin" run synthetic --output=-dash --enable-l2-swimlane >"$root/out" 2>"$root/err"
code=$?
if [[ $code -eq 0 ]] && ls -- -dash/*/merged_swimlane.json >/dev/null 2>&1; then
	echo "ok: run --output=-dash converted its records"
else
	echo "FAIL: run --output=-dash: exit $code, $(grep -v '^\[taskprof\]' "$root/err" | tail -c 300)"; fail=1
fi
# argparse's abbreviated long options in the argparse-style commands: a
# unique prefix is the option, an ambiguous one is named with its matches.
expect 2 "taskprof swimlane: error: ambiguous option: --o could match --output, --overhead" \
	swimlane --o x "$rec"
expect 2 "taskprof swimlane: error: argument -v/--verbose: ignored explicit argument '1'" \
	swimlane --v=1 "$rec"
expect 2 "taskprof pmu: --func-names needs a file" pmu --func
expect 1 "Error: failed to read deps.json $root/nodeps" sched-overhead --dep "$root/nodeps" "$rec"
rm -f abbrev.json
"$bin" swimlane "$rec" --out abbrev.json --ove >/dev/null 2>"$root/err" ||
	{ echo "FAIL: swimlane --out abbrev.json --ove: $(tail -c 300 "$root/err")"; fail=1; }
if grep -q '"cat": *"overhead"' abbrev.json 2>/dev/null; then
	echo "ok: swimlane --out / --ove wrote the trace with the overhead tracks to abbrev.json"
else
	echo "FAIL: swimlane --out abbrev.json --ove: no overhead track in abbrev.json"; fail=1
fi

# A short option's value given as "-o=VALUE" is VALUE, as argparse reads
# it (and as "--output=VALUE" already was), in every command: it used to
# be "=VALUE", so `-o=DIR` wrote its outputs into ./=/DIR... and reported
# success. A separate word "=x" (`-o =x`) stays the value "=x".
mkdir -p eq && rm -rf "./=" eq/*
"$bin" swimlane "$rec" -o="$root/eq/t.json" >"$root/out" 2>"$root/err" ||
	{ echo "FAIL: swimlane -o=PATH: $(tail -c 300 "$root/err")"; fail=1; }
[[ -s eq/t.json ]] || { echo "FAIL: swimlane -o=PATH did not write PATH"; fail=1; }
"$bin" swimlane "$rec" -k=x.py >"$root/out" 2>"$root/err"
grep -qF "Kernel config file not found: x.py " "$root/err" ||
	{ echo "FAIL: swimlane -k=x.py: $(tail -c 300 "$root/err")"; fail=1; }
"$bin" run synthetic -p=a5sim -o="$root/eq/r" >"$root/out" 2>"$root/err" ||
	{ echo "FAIL: run -p=a5sim -o=DIR: $(tail -c 300 "$root/err")"; fail=1; }
grep -qx "platform a5sim" eq/r/synthetic_*/result.txt 2>/dev/null ||
	{ echo "FAIL: run -o=DIR -p=a5sim: no a5sim result.txt in DIR"; fail=1; }
"$bin" transport-demo -t=2 -n=100 -o="$root/eq/t" >"$root/out" 2>"$root/err" ||
	{ echo "FAIL: transport-demo -t=2 -n=100 -o=DIR: $(tail -c 300 "$root/err")"; fail=1; }
ls eq/t/transport_demo_*/summary.txt >/dev/null 2>&1 ||
	{ echo "FAIL: transport-demo -o=DIR: no summary.txt in DIR"; fail=1; }
"$bin" op -o="$root/eq/op" -k=nomatch -c=1 -- /bin/true >"$root/out" 2>"$root/err"
grep -qF -- "--kernel-name nomatch," "$root/err" && ls -d eq/op/OPPROF_* >/dev/null 2>&1 ||
	{ echo "FAIL: op -o=DIR -k=PAT -c=1: $(tail -c 300 "$root/err")"; fail=1; }
[[ -e "./=" ]] && { echo "FAIL: -o=PATH made ./=: $(find "./=" | head -3)"; fail=1; }
# argparse's clusters of short flags in swimlane: -vo PATH is -v -o PATH
"$bin" swimlane "$rec" -vo "$root/eq/v.json" >"$root/out" 2>"$root/err" ||
	{ echo "FAIL: swimlane -vo PATH: $(tail -c 300 "$root/err")"; fail=1; }
[[ -s eq/v.json ]] && grep -q "=== Performance Data ===" "$root/out" ||
	{ echo "FAIL: swimlane -vo PATH: no verbose trace at PATH"; fail=1; }
expect 2 "taskprof swimlane: error: argument -v/--verbose: ignored explicit argument 'x'" \
	swimlane -vx "$rec"
expect 2 "taskprof swimlane: error: argument -v/--verbose: ignored explicit argument '1'" \
	swimlane -v=1 "$rec"
expect 2 "taskprof swimlane: error: argument -o/--output: expected one argument" \
	swimlane "$rec" -vo --pretty
"$bin" swimlane "$rec" -o =x >/dev/null 2>&1 && [[ -s "=x" ]] ||
	{ echo "FAIL: swimlane -o =x (a separate word) did not write ./=x"; fail=1; }
rm -rf "=x" eq

# fails and says so instead of reporting success.
so=$(dirname "$bin")/tests/case_so/libslowcase.so
if [[ -e $so ]]; then
	SLOWCASE_MS=1500 SLOWCASE_MARK=$root/mark "$bin" run "$so" --enable-l2-swimlane \
		--enable-dep-gen -o "$root/gone" >"$root/out" 2>"$root/err" &
	pid=$!
	wait_until 500 0.02 "" test -e "$root/mark.start"
	rm -rf "$root/gone"
	wait $pid
	code=$?
	if [[ ! -e $root/mark.start ]]; then
		echo "FAIL: the slow kernel never started: $(cat "$root/err")"; fail=1
	elif [[ $code -ne 1 ]] || ! grep -qE "the run folder $root/gone/slowcase_Default_[0-9_]+ was removed (or (replaced|renamed) )?during the run" "$root/err"; then
		echo "FAIL: run folder deleted mid-run: exit $code: $(tail -c 400 "$root/err")"; fail=1
	else
		echo "ok: run folder deleted mid-run -> 1: $(grep -o 'the run folder.*' "$root/err" | head -1 | tail -c 150)"
	fi
fi

exit $fail
