#!/usr/bin/env bash
# CLI test of the worked example of docs/cases.md, examples/case_so/mmrelu.c
# (build/examples/libmmrelu.so): it passes with swimlane, dep_gen and PMU on
# (8 tasks, 4 creator edges, MM on AIC and RELU on AIV), on both platforms
# and both runtimes; the guide's listing is the file; and the file builds
# with the guide's gcc line (-Werror; skipped without a C compiler or in
# sanitizer builds).
# usage: test_cli_case_guide.sh TASKPROF_BINARY
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" || exit 1
build=$(cd "$(dirname "$1")" && pwd)
bin=$build/$(basename "$1")
src=$(cd "$(dirname "$0")/../.." && pwd)
so=$build/examples/libmmrelu.so
cli_init /tmp/tp_cli_case_guide_XXXXXX
T=120

# The run the guide shows.
timeout $T "$bin" run "$so" --enable-l2-swimlane --enable-dep-gen --enable-pmu \
	-o "$root/out" >"$root/run.out" 2>"$root/run.err"
code=$?
if [[ $code -ne 0 ]]; then
	bad "run: exit $code: $(cat "$root/run.err")"
else
	grep -q '^mmrelu Default a2a3sim tensormap_and_ringbuffer: PASS .*  tasks 8  ' \
		"$root/run.out" || bad "result line: $(head -1 "$root/run.out")"
	has_line "golden line" "$root/run.out" "golden pass: 4096 elements, max |diff| 0"
	grep -qE '^dep_gen: .*/deps\.json \(8 tasks, 4 edges\)$' "$root/run.out" ||
		bad "dep_gen line: $(grep dep_gen "$root/run.out")"
	grep -qE '^0 +MM +4 ' "$root/run.out" && grep -qE '^1 +RELU +4 ' "$root/run.out" ||
		bad "statistics table: $(cat "$root/run.out")"
	grep -q '^func_id 0 (MM): 4 rows (AIC 4, AIV 0), ' "$root/run.out" &&
		grep -q '^func_id 1 (RELU): 4 rows (AIC 0, AIV 4), ' "$root/run.out" ||
		bad "PMU summary: $(grep func_id "$root/run.out")"
	dir=$(ls -d "$root/out"/mmrelu_Default_* 2>/dev/null | head -1)
	for f in result.txt deps.json merged_swimlane.json pmu.csv name_map_mmrelu_Default.json; do
		[[ -s $dir/$f ]] || bad "no $f in '$dir'"
	done
	# every edge is MM -> RELU through the runtime-allocated tensor
	n=$(grep -o '"source": *"creator"' "$dir/deps.json" | wc -l)
	[[ $n -eq 4 ]] || bad "deps.json: $n creator edges, expected 4"
	echo "ok: the guide's run"
fi

for args in "-p a5sim" "--runtime host_build_graph" "--rounds 2"; do
	# shellcheck disable=SC2086
	out=$(timeout $T "$bin" run "$so" $args -o "$root/more" 2>"$root/more.err")
	code=$?
	[[ $code -eq 0 ]] && grep -q '^mmrelu Default .*: PASS .*  tasks 8  ' <<<"$out" ||
		bad "run $args: exit $code: $out $(cat "$root/more.err")"
done
echo "ok: a5sim, host_build_graph, rounds"

# The listing in docs/cases.md is the example's source.
awk 'l == 2 && /^```$/ { exit } l == 2 { print } l == 1 && /^```c$/ { l = 2 }
     /^<!-- listing: examples\/case_so\/mmrelu\.c -->$/ { l = 1 }' \
	"$src/docs/cases.md" >"$root/listing.c"
if cmp -s "$root/listing.c" "$src/examples/case_so/mmrelu.c"; then
	echo "ok: docs/cases.md lists examples/case_so/mmrelu.c"
else
	bad "docs/cases.md's listing differs from examples/case_so/mmrelu.c:" \
		"$(diff "$root/listing.c" "$src/examples/case_so/mmrelu.c" | head -20)"
fi

# The guide's build line, with this build's folder for 'build'.
cc=${CC:-gcc}
if [[ -n ${TASKPROF_TEST_SANITIZE:-} ]]; then
	echo "skip: the hand build under ${TASKPROF_TEST_SANITIZE}"
elif ! command -v "$cc" >/dev/null; then
	echo "skip: no C compiler for the hand build"
elif ! "$cc" -Wall -Wextra -Werror -shared -fPIC -I "$src/include" -I "$src/src" \
	"$src/examples/case_so/mmrelu.c" -o "$root/libmmrelu.so" -L "$build" -ltaskprof \
	-Wl,-rpath,"$build" 2>"$root/cc.err"; then
	bad "the guide's gcc line: $(cat "$root/cc.err")"
else
	out=$(cd "$root" && timeout $T "$bin" run ./libmmrelu.so -o "$root/hand" 2>&1)
	if grep -q '^mmrelu Default a2a3sim .*: PASS ' <<<"$out"; then
		echo "ok: the guide's gcc line"
	else
		bad "hand-built object: $out"
	fi
fi

if [[ $fail -eq 0 ]]; then
	echo "case guide example: all checks passed"
fi
exit $fail
