#!/usr/bin/env bash
# CLI test of `taskprof run`: exit codes 0 (golden pass) and 2 (bad usage,
# one clear line on stderr), the result line and the output folder.
# usage: test_cli_run.sh TASKPROF_BINARY
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" || exit 1
bin=$1
cli_init /tmp/tp_cli_run_XXXXXX

for p in a2a3sim a5sim; do
	tp_expect 0 "PASS" run paged_attention -p "$p" -o "$root/out"
done
tp_expect 0 "tasks 13" run paged_attention --case CaseSmall1 --rounds 2 --block-dim 2 \
	--aicpu-threads 2 -o "$root/out"
n=$(find "$root/out" -maxdepth 1 -type d -name 'paged_attention_CaseSmall1_*' | wc -l)
if [[ $n -ne 3 ]]; then
	echo "FAIL: expected 3 run folders, found $n"; fail=1
else
	echo "ok: 3 run folders"
fi
for d in "$root"/out/paged_attention_CaseSmall1_*; do
	[[ -s $d/result.txt ]] || { echo "FAIL: $d/result.txt missing"; fail=1; }
done

# synthetic: every task kind, both platforms, 1 and 3 scheduler threads.
for p in a2a3sim a5sim; do
	for t in 2 4; do
		for rt in tensormap_and_ringbuffer host_build_graph; do
			tp_expect 0 "tasks 1531" run synthetic -p "$p" --aicpu-threads "$t" \
				--runtime "$rt" -o "$root/syn"
		done
	done
done
tp_expect 0 "PASS" run synthetic --case Default --rounds 2 -o "$root/syn"
tp_expect 0 "tasks 1531" run synthetic --no-early-dispatch -o "$root/syn"
tp_expect 0 "tasks 13" run paged_attention --case CaseSmall1 --early-dispatch -o "$root/pa"
tp_expect 0 "--no-early-dispatch" run --help
tp_expect 2 "has no case" run synthetic --case Nope
tp_expect 0 "usage: taskprof run" run --help
tp_expect 2 "unknown CASE" run nope
# gemm: the tiled matmul, both platforms and runtimes.
for p in a2a3sim a5sim; do
	for rt in tensormap_and_ringbuffer host_build_graph; do
		tp_expect 0 "tasks 4" run gemm --case Small -p "$p" --runtime "$rt" -o "$root/gemm"
	done
done
tp_expect 0 "tasks 64" run gemm --case Medium -o "$root/gemm"
tp_expect 0 "PASS" run gemm --case Ragged -p a5sim -o "$root/gemm"
tp_expect 2 "has no case" run gemm --case Big
# `taskprof help CMD` is CMD's own help; more than one word is bad usage.
for c in run swimlane op; do
	a=$("$bin" help "$c" 2>&1); b=$("$bin" "$c" --help 2>&1)
	[[ "$a" == "$b" ]] && grep -q "^usage: taskprof $c " <<<"$a" ||
		bad "taskprof help $c differs from taskprof $c --help: $a"
done
tp_expect 2 "taskprof: help takes one command, got 2 words" help run swimlane
# TASKPROF_PLATFORM is the default of -p (it was ignored without a word),
# -p wins over it, and a bad value is a usage error naming the variable.
TASKPROF_PLATFORM=a5sim tp_expect 0 "gemm Small a5sim " run gemm --case Small -o "$root/gemm"
TASKPROF_PLATFORM=a5sim tp_expect 0 "gemm Small a2a3sim " run gemm --case Small -p a2a3sim -o "$root/gemm"
TASKPROF_PLATFORM=a7sim tp_expect 2 "taskprof run: TASKPROF_PLATFORM expects a2a3sim or a5sim (or unset), got 'a7sim'" run gemm -o "$root/gemm"
TASKPROF_PLATFORM=a5sim tp_expect 0 "transport-demo: a5sim (" transport-demo -n 1000 -o "$root/td"
TASKPROF_PLATFORM=a5sim tp_expect 0 "transport-demo: a2a3sim (" transport-demo -p a2a3sim -n 1000 -o "$root/td"

# Case shared objects (taskprof/case.h): build/examples/libmycase.so.
so=$(dirname "$bin")/examples/libmycase.so
for p in a2a3sim a5sim; do
	tp_expect 0 "mycase Default $p" run "$so" -p "$p" -o "$root/so"
done
tp_expect 0 "PASS" run "$so" --case Default --runtime host_build_graph -o "$root/so"
tp_expect 2 "has no case" run "$so" --case Nope
tp_expect 2 "No such file" run ./libnope.so
tp_expect 2 "not a regular file" run "$root/"
echo 'not elf' >"$root/fake.so"
tp_expect 2 "expected an ELF shared object" run "$root/fake.so"
tp_expect 2 "invalid ELF header" run /etc/passwd
# An object without the entry symbol, and one whose entry returns NULL.
cc=${CC:-cc}
if command -v "$cc" >/dev/null; then
	echo 'int tp_other(void) { return 1; }' >"$root/nosym.c"
	# (built against this taskprof/case.h: its ABI symbol)
	printf '%s\n' '#include "taskprof/case.h"' \
		'const struct tp_callable *tp_case_callable(void) { return 0; }' >"$root/null.c"
	"$cc" -shared -fPIC -o "$root/libnosym.so" "$root/nosym.c" &&
		tp_expect 2 "has no symbol tp_case_callable" run "$root/libnosym.so"
	"$cc" -shared -fPIC -I"$(dirname "$0")/../../include" -o "$root/libnull.so" "$root/null.c" &&
		tp_expect 2 "returned NULL" run "$root/libnull.so"
else
	echo "skip: no C compiler for the bad case objects"
fi
tp_expect 2 "has no case" run paged_attention --case Nope
tp_expect 2 "unknown platform" run paged_attention -p a9sim
tp_expect 2 "unknown runtime" run paged_attention --runtime foo
tp_expect 0 "PASS" run paged_attention --runtime host_build_graph -o "$root/hbg"
tp_expect 2 "--block-dim" run paged_attention --block-dim 0
tp_expect 2 "1..24" run paged_attention --block-dim 25
tp_expect 2 "1..36" run paged_attention -p a5sim --block-dim 37
tp_expect 2 "got ' 8'" run paged_attention --block-dim ' 8'
tp_expect 2 "got '8x'" run paged_attention --block-dim 8x
tp_expect 2 "--rounds" run paged_attention --rounds abc
tp_expect 2 "--aicpu-threads" run paged_attention --aicpu-threads 1x
tp_expect 2 "missing CASE" run
tp_expect 2 "unknown option" run paged_attention --bogus
exit $fail
