#!/usr/bin/env bash
# CLI test: the benchmark programs (bench/) refuse a bad count at once with
# one line naming it and its range, exit 2, instead of running a default
# size or wrapping "-1" to 2^64 - 1 records (hostile finding of 2 Dec).
# Nothing here runs a benchmark.
# usage: test_cli_bench_args.sh TASKPROF_BINARY
set -u
b=$(dirname "$1")/bench
fail=0
T=20

# refused WANT_LINE CMD...: exit 2 and exactly WANT_LINE on stderr.
refused() {
	local want=$1
	shift
	local err code
	err=$(timeout $T "$@" 2>&1 >/dev/null)
	code=$?
	if [[ $code -eq 2 && $err == "$want" ]]; then
		echo "ok: $* -> 2"
	else
		echo "FAIL: $*: exit $code, stderr '$err', want 2 and '$want'"
		fail=1
	fi
}

for x in bench_transport bench_pmu bench_convert bench_json_parse bench_runtime; do
	[[ -x $b/$x ]] || { echo "FAIL: $b/$x not built"; exit 1; }
done
refused "bench_transport: BENCH_RECORDS expects an integer from 1 to 1000000000000, got '-1'" \
	env BENCH_RECORDS=-1 "$b/bench_transport"
refused "bench_transport: BENCH_RECORDS expects an integer from 1 to 1000000000000, got '5k'" \
	env BENCH_RECORDS=5k "$b/bench_transport"
for v in 0 abc 10000001; do
	refused "bench_pmu: TASKS expects an integer from 1 to 10000000, got '$v'" "$b/bench_pmu" "$v"
done
refused "bench_convert: TASKS expects an integer from 1 to 100000000, got '5x'" \
	"$b/bench_convert" 5x
refused "bench_json_parse: TASKS expects an integer from 1 to 100000000, got '0'" \
	"$b/bench_json_parse" 0
refused "bench_runtime: TASKS expects an integer from 2 to 10000000, got '1'" \
	"$b/bench_runtime" 1
# every benchmark prints its usage with -h (README "Benchmarks")
for x in "$b"/bench_*; do
	out=$(timeout $T "$x" -h 2>&1)
	code=$?
	[[ $code -eq 0 && $out == *usage:* ]] || { echo "FAIL: $x -h: exit $code: $out"; fail=1; }
done
exit $fail
