#!/usr/bin/env bash
# CLI test: a case shared object that sets the process locale
# (setlocale(LC_ALL, "") in its entry point, generate, golden, the
# orchestration and release; build/tests/case_so/liblocalecase.so,
# tests/case_so/localecase.c) under a locale whose decimal point is ','
# (de_DE.UTF-8) must not change taskprof's own outputs: result.txt, the
# result line, the converter's statistics, the PMU summary and the JSON
# files keep '.'.
# The locale is compiled into the test folder with localedef (LOCPATH), so
# nothing is installed; without localedef or its de_DE sources the test
# says so and passes (skip).
# usage: test_cli_locale.sh TASKPROF_BINARY
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" || exit 1
bin=$1
so=$(dirname "$bin")/tests/case_so/liblocalecase.so
cli_init /tmp/tp_cli_locale_XXXXXX

[[ -f $so ]] || { echo "FAIL: $so is missing"; exit 1; }
mkdir -p "$root/loc"
# localedef may exit non-zero for mere warnings: the compiled folder counts
localedef -i de_DE -f UTF-8 "$root/loc/de_DE.UTF-8" >/dev/null 2>&1
if [[ ! -f $root/loc/de_DE.UTF-8/LC_NUMERIC ]]; then
	echo "skip: cannot compile the de_DE.UTF-8 locale (needs localedef and the locales sources)"
	exit 0
fi

export LOCPATH=$root/loc LC_ALL=de_DE.UTF-8 LOCALECASE_PROBE=$root/probe
timeout 120 "$bin" run "$so" --enable-l2-swimlane --enable-dep-gen --enable-pmu \
	-o "$root/out" >"$root/stdout" 2>"$root/stderr"
code=$?
unset LOCPATH LC_ALL
[[ $code -eq 0 ]] || bad "run exited $code: $(cat "$root/stderr")"
probe=$(cat "$root/probe" 2>/dev/null)
if [[ $probe != "decimal_point=," ]]; then
	echo "skip: the case's setlocale() did not give a ',' decimal point ($probe)"
	exit $fail
fi

d=$(ls -d "$root"/out/localecase_Default_* 2>/dev/null | head -1)
[[ -n $d ]] || { echo "FAIL: no run folder"; exit 1; }
for k in host_wall_s device_wall_s orch_s sched_s; do
	grep -qE "^$k [0-9]+\.[0-9]{6}\$" "$d/result.txt" ||
		bad "result.txt: $(grep "^$k" "$d/result.txt")"
done
grep -qE '^tasks_per_s [0-9]+(\.[0-9]+)?(e[-+][0-9]+)?$' "$d/result.txt" ||
	bad "result.txt: $(grep '^tasks_per_s' "$d/result.txt")"
grep -q ',' <(grep -v '^golden\|^callable\|^case\|^platform\|^runtime' "$d/result.txt") &&
	bad "result.txt has a ',': $(cat "$d/result.txt")"
line=$(grep '^localecase Default' "$root/stdout")
[[ $line =~ host\ [0-9]+\.[0-9]{3}\ ms\ \ device\ [0-9]+\.[0-9]{3}\ ms\ \ orch\ [0-9]+\.[0-9]{3}\ ms\ \ sched\ [0-9]+\.[0-9]{3}\ ms ]] ||
	bad "result line: $line"
# the converter's statistics row and the PMU summary's means
grep -qE '^0 +SCALE +1 +[0-9]+\.[0-9]{2} +[0-9]+\.[0-9]{2} ' "$root/stdout" ||
	bad "swimlane statistics: $(grep SCALE "$root/stdout")"
grep -qE '^TOTAL .*[0-9]+,[0-9]' "$root/stdout" && bad "swimlane statistics with ','"
grep -qE '^  vec_busy_cycles +[0-9]+\.[0-9] ' "$root/stdout" ||
	bad "pmu summary: $(grep vec_busy "$root/stdout")"
for f in merged_swimlane.json deps.json l2_swimlane_records.json; do
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$d/$f" ||
		bad "$f is not valid JSON"
done

if [[ $fail -eq 0 ]]; then
	echo "locale: all checks passed"
fi
exit $fail
