#!/usr/bin/env bash
# CLI test of the rule that a message is one line: a newline (or another
# control character) in a path, an option value or a name that a message
# quotes is shown as its C escape (\n, \t, \xHH), in run, sched-overhead,
# pmu, op, swimlane, transport-demo and the command word itself, and in
# the line of an interrupted run; the command a run suggests stays one
# line and still names the folder.
# usage: test_cli_one_line.sh TASKPROF_BINARY
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" || exit 1
bin=$1
cli_init /tmp/tp_cli_oneline_XXXXXX pid
T=120 # seconds: anything slower is a hang
nl=$'\n'
cd "$root" || exit 1
# The interrupted run below dies with its device threads running, on
# purpose: not a leak to report under TSan (races are still reported).
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}report_thread_leaks=0"

# no_tail NAME FILE...: no line of the files starts with what follows the
# newline of "out<newline>dir" (a message broken in two)
no_tail() {
	local name=$1
	shift
	! grep -h '^dir/' "$@" || bad "$name: a message broken at the folder's newline"
}

# ---- a run whose output folder has a newline -----------------------------
timeout $T "$bin" run synthetic -o "out${nl}dir" --enable-l2-swimlane 3 --enable-dep-gen \
	--enable-pmu >"$root/run.out" 2>"$root/run.err"
code=$?
[[ $code -eq 0 ]] || bad "run -o with a newline: exit $code: $(tail -5 "$root/run.err")"
name=$(ls "out${nl}dir")
dir="out${nl}dir/$name"
shown="out\\ndir/$name"
[[ -f $dir/result.txt ]] || bad "run -o with a newline: no $dir/result.txt"
has_line "run outputs" "$root/run.out" "outputs: $shown/result.txt"
grep -qxF "dep_gen: $shown/deps.json (" <(sed 's/(.*/(/' "$root/run.out") ||
	bad "run dep_gen line: $(grep -a '^dep_gen' "$root/run.out")"
has_line "run name map" "$root/run.out" "name map: $shown/name_map_synthetic_Default.json"
has_line "run swimlane records" "$root/run.out" \
	"swimlane records: $shown/l2_swimlane_records.json"
has_line "run trace" "$root/run.out" \
	"swimlane trace: $shown/merged_swimlane.json (open it in https://ui.perfetto.dev/)"
has_line "run converter input" "$root/run.out" "  Input:  $shown/l2_swimlane_records.json"
has_line "run converter output" "$root/run.out" "  Output: $shown/merged_swimlane.json"
grep -qxF "pmu: $shown/pmu.csv (" <(sed 's/(.*/(/' "$root/run.out") ||
	bad "run pmu line: $(grep -a '^pmu' "$root/run.out")"
# The suggested command is one line, and its folder word is the folder.
hint=$(grep -a '^scheduler overhead: ' "$root/run.out")
[[ $(grep -ac '^scheduler overhead: ' "$root/run.out") -eq 1 ]] ||
	bad "run: the sched-overhead hint is not one line: $hint"
word=${hint##* sched-overhead }
if [[ $word == "\$'$shown'" ]]; then
	eval "back=$word"
	[[ $back == "$dir" ]] || bad "run: the hint's folder word names '$back', not '$dir'"
else
	bad "run: the hint's folder word is $word"
fi
no_tail "run -o with a newline" "$root/run.out" "$root/run.err"

# ---- the tools on that folder ----------------------------------------------
timeout $T "$bin" sched-overhead "$dir" >"$root/so.out" 2>"$root/so.err" ||
	bad "sched-overhead on the folder: exit $?: $(tail -3 "$root/so.err")"
has_line "sched-overhead perf data" "$root/so.out" \
	"Perf data:  $shown/l2_swimlane_records.json"
has_line "sched-overhead deps" "$root/so.out" "Deps JSON:  $shown/deps.json"
timeout $T "$bin" pmu "$dir" >"$root/pmu.out" 2>"$root/pmu.err" ||
	bad "pmu on the folder: exit $?: $(tail -3 "$root/pmu.err")"
head -1 "$root/pmu.out" | grep -qF "$shown/pmu.csv: " ||
	bad "pmu on the folder: first line $(head -1 "$root/pmu.out")"
no_tail "the tools on the folder" "$root/so.out" "$root/so.err" "$root/pmu.out" \
	"$root/pmu.err"

# ---- missing paths with a newline ------------------------------------------
run_line "sched-overhead missing path with a newline" 1 \
	"Error: Perf JSON not found: $root/no\\nsuch.json" \
	"$bin" sched-overhead "$root/no${nl}such.json"
run_line "sched-overhead missing --deps-json with a newline" 1 \
	"Error: failed to read deps.json $root/no\\nsuch.json: [Errno 2] No such file or directory: '$root/no\\nsuch.json'" \
	"$bin" sched-overhead "$dir" --deps-json "$root/no${nl}such.json"
run_line "pmu missing path with a newline" 1 \
	"taskprof pmu: $root/no\\nsuch.csv: cannot read: No such file or directory" \
	"$bin" pmu "$root/no${nl}such.csv"
run_line "op APP path with a newline" 1 \
	"taskprof op: cannot execute '$root/no\\napp': No such file or directory" \
	"$bin" op "$root/no${nl}app"

# ---- option values and names with a control character ----------------------
run_line "run --block-dim with a newline" 2 \
	"taskprof run: --block-dim expects clusters, 1..24 on a2a3sim or 1..36 on a5sim, got '1\\n2'" \
	"$bin" run synthetic --block-dim "1${nl}2"
run_line "run unknown option with a tab" 2 \
	"taskprof run: unknown option or missing value: '--no\\tpe' (see taskprof run --help)" \
	"$bin" run synthetic $'--no\tpe'
run_line "run unknown CASE with a newline" 2 \
	"taskprof run: unknown CASE 'syn\\nthetic' (built-in: paged_attention synthetic gemm; or a path to a case shared object)" \
	"$bin" run "syn${nl}thetic"
run_line "run two CASE arguments" 2 \
	"taskprof run: unexpected argument 'b\\x1bc'" "$bin" run synthetic $'b\ec'
run_line "transport-demo --platform with a newline" 2 \
	"taskprof transport-demo: --platform expects a2a3sim or a5sim, got 'a\\nb'" \
	"$bin" transport-demo --platform "a${nl}b"
run_line "sched-overhead unknown option with a newline" 2 \
	"taskprof sched-overhead: unknown option '--bo\\ngus' (see --help)" \
	"$bin" sched-overhead "--bo${nl}gus"
run_line "pmu unknown option with a newline" 2 \
	"taskprof pmu: unknown option '--bo\\ngus' (see --help)" "$bin" pmu "--bo${nl}gus"
# after the usage text: the error line, whole
timeout $T "$bin" swimlane "--bo${nl}gus" >/dev/null 2>"$root/err"
code=$?
[[ $code -eq 2 ]] || bad "swimlane unknown argument with a newline: exit $code, expected 2"
[[ $(tail -1 "$root/err") == "taskprof swimlane: error: unrecognized arguments: --bo\\ngus" ]] ||
	bad "swimlane unknown argument with a newline: $(tail -2 "$root/err" | cat -A)"
grep -q '^gus' "$root/err" && bad "swimlane unknown argument: the message is broken"
timeout $T "$bin" "bo${nl}gus" >/dev/null 2>"$root/err"
code=$?
[[ $code -eq 2 ]] || bad "unknown command with a newline: exit $code, expected 2"
[[ $(head -1 "$root/err") == "taskprof: unknown command 'bo\\ngus'" ]] ||
	bad "unknown command with a newline: $(head -2 "$root/err" | cat -A)"

# ---- an interrupted run: the folders its one line names ---------------------
# The 20 s kernel of tests/case_so/slowcase.c, no collector: the empty run
# folder goes, and so does the folder made for it (base/tmp_registry.h).
start_slow --stall-timeout 0 -o "$root/made${nl}dir/deeper"
signal_and_reap TERM
msg=$(run_message "$root/err")
[[ $code -eq 143 ]] || bad "interrupted run: exit $code, expected 143: $msg"
[[ $msg =~ ^"taskprof run: interrupted by SIGTERM while running slowcase Default on a2a3sim: removed 0 temporary files and the empty run folder $root/made\\ndir/deeper/slowcase_"[A-Za-z0-9_]+" and the folder $root/made\\ndir made for the output"$ ]] ||
	bad "interrupted run: the line is '$msg'"
[[ -e $root/made${nl}dir ]] && bad "interrupted run: $root/made\\ndir was left"

cli_finish "PASS: test_cli_one_line"
