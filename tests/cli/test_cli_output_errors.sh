#!/usr/bin/env bash
# CLI test of failed writes: stdout that cannot be written (a full device,
# a pipe whose reader is gone) for `run` and `transport-demo`, and files
# past the file-size limit (ulimit -f: SIGXFSZ is ignored, so the write
# fails with EFBIG) for `swimlane`, `run` (records, deps.json, pmu.csv
# shards and merge, result.txt) and `transport-demo`: exit 1, one line
# naming the file and the reason, no temporary file left behind; and a run
# whose folder is removed while it runs.
# The full device is a private mknod'ed node (never /dev/*).
# usage: test_cli_output_errors.sh TASKPROF_BINARY
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" || exit 1
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
fixA=$here/../conformance/fixtures/swimlane-probe/A_level4_full
cli_init /tmp/tp_cli_outerr_XXXXXX
T=120 # seconds: anything slower is a hang (the machine may be loaded)

# errors FILE: FILE without the log lines ([taskprof] ...) and the
# progress lines of a slow step ("taskprof run: <phase>... (N s)")
errors() {
	grep -v -e '^\[taskprof\]' -e '\.\.\.$' -e '\.\.\. ([0-9]* s)$' "$1"
}

# only_error FILE WANT: the one error line of FILE is WANT
only_error() {
	local got
	got=$(errors "$1")
	[[ $got == "$2" ]] || bad "stderr is '$got', expected '$2'"
}

# limited BLOCKS ERRFILE CMD...: CMD with a file-size limit of BLOCKS
# KiB, stdout discarded, stderr into ERRFILE through a pipe (a file would
# be limited too); the exit code is CMD's
limited() {
	local blocks=$1 errf=$2
	shift 2
	(
		ulimit -f "$blocks" || exit 99
		exec timeout $T "$@" 2>&1 >/dev/null
	) | cat >"$errf"
	return "${PIPESTATUS[0]}"
}

mknod -m 666 "$root/full" c 1 7 || { echo "FAIL: cannot make a full device"; exit 1; }
nospace="No space left on device"

# ---- stdout into a full device ----------------------------------------------
timeout $T "$bin" run synthetic -o "$root/x" >"$root/full" 2>"$root/err"
code=$?
[[ $code -eq 1 ]] || bad "run >full: exit $code, expected 1"
only_error "$root/err" "taskprof run: writing stdout: $nospace"
ls "$root"/x/synthetic_Default_*/result.txt >/dev/null 2>&1 || bad "run >full: no result.txt"

timeout $T "$bin" transport-demo -n 10000 -o "$root/y" >"$root/full" 2>"$root/err"
code=$?
[[ $code -eq 1 ]] || bad "transport-demo >full: exit $code, expected 1"
only_error "$root/err" "taskprof transport-demo: writing stdout: $nospace"
for f in instances.csv summary.txt; do
	ls "$root"/y/transport_demo_*/$f >/dev/null 2>&1 || bad "transport-demo >full: no $f"
done

for args in "run --help" "transport-demo --help" "--version"; do
	# shellcheck disable=SC2086
	timeout $T "$bin" $args >"$root/full" 2>"$root/err"
	code=$?
	[[ $code -eq 1 ]] || bad "$args >full: exit $code, expected 1"
	grep -q "writing stdout: $nospace\$" "$root/err" || bad "$args >full: $(cat "$root/err")"
done

# ---- every option, stdout gone: the files are complete, stdout is blamed ----
check_full_run() { # check_full_run NAME WANT_LINE
	local name=$1 want=$2 d
	[[ $code -eq 1 ]] || bad "$name: exit $code, expected 1"
	errors "$root/err" | grep -v -e '^Warning: ' -e '^note: ' >"$root/err2"
	only_error "$root/err2" "$want"
	d=$(ls -d "$root"/z/synthetic_Default_* 2>/dev/null | tail -1)
	for f in result.txt deps.json l2_swimlane_records.json merged_swimlane.json pmu.csv; do
		[[ -s $d/$f ]] || bad "$name: no $f in $d"
	done
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$d/merged_swimlane.json" ||
		bad "$name: merged_swimlane.json is not whole"
	no_temps "$root/z"
	rm -rf "$root/z"
}
all=(--enable-l2-swimlane --enable-dep-gen --enable-pmu)
closed_pipe 300 "$bin" run synthetic "${all[@]}" -o "$root/z" 2>"$root/err"
code=$?
check_full_run "run (all options) into a closed pipe" "taskprof run: writing stdout: Broken pipe"
timeout $T "$bin" run synthetic "${all[@]}" -o "$root/z" >"$root/full" 2>"$root/err"
code=$?
check_full_run "run (all options) >full" "taskprof run: writing stdout: $nospace"

# ---- ulimit -f: swimlane ------------------------------------------------------
big="File too large"
s=$root/s
mkdir -p "$s"
cp "$fixA"/l2_swimlane_records.json "$fixA"/deps.json "$fixA"/name_map_TestProbe_case1.json "$s"/
echo keep >"$s/trace.json"
limited 10 "$root/err" "$bin" swimlane "$s/l2_swimlane_records.json" -o "$s/trace.json"
code=$?
[[ $code -eq 1 ]] || bad "swimlane, ulimit -f 10: exit $code, expected 1 (153 = SIGXFSZ)"
only_error "$root/err" "Error: $s/trace.json: write failed: $big"
[[ $(cat "$s/trace.json") == keep ]] || bad "swimlane, ulimit -f 10: the old trace was replaced"
no_temps "$s"

# ---- ulimit -f: run -------------------------------------------------------------
# run_limited NAME BLOCKS WANT_LINE ARGS...: exit 1, WANT_LINE the error
# line (<dir> stands for the run folder), then the line naming the folder
# the failed run kept (marked by its result.txt), no *.tmp left
run_limited() {
	local name=$1 blocks=$2 want=$3 d
	shift 3
	rm -rf "$root/u"
	limited "$blocks" "$root/err" "$bin" run synthetic "$@" -o "$root/u"
	code=$?
	[[ $code -eq 1 ]] || bad "$name: exit $code, expected 1 (153 = SIGXFSZ)"
	d=$(ls -d "$root"/u/synthetic_Default_* 2>/dev/null | tail -1)
	[[ -n $d ]] || d="$root/u/synthetic_Default_<none>"
	only_error "$root/err" "${want//<dir>/$d}"$'\n'"taskprof run: what was written before the failure is in $d (its result.txt says the run failed)"
	grep -qx "status FAILED" "$d/result.txt" || bad "$name: result.txt: $(cat "$d/result.txt" 2>&1)"
	no_temps "$root/u"
}
pre="taskprof run: synthetic Default on a2a3sim failed:"
run_limited "run, ulimit -f 100, records" 100 \
	"$pre <dir>/l2_swimlane_records.json: write failed: $big" --enable-l2-swimlane --enable-dep-gen
run_limited "run, ulimit -f 100, deps.json" 100 "$pre <dir>/deps.json: write failed: $big" \
	--enable-dep-gen
# the trace (5.5 MB) past 2 MB, the records (1.1 MB) and deps.json under
# it: the run passed, the conversion failed; exit 1, and result.txt keeps
# the pass and adds "trace FAILED" (the records convert later)
rm -rf "$root/u"
limited 2000 "$root/err" "$bin" run synthetic --enable-l2-swimlane --enable-dep-gen -o "$root/u"
code=$?
d=$(ls -d "$root"/u/synthetic_Default_* 2>/dev/null | tail -1)
[[ $code -eq 1 ]] || bad "run, ulimit -f 2000, trace: exit $code, expected 1"
grep -qx "Error: $d/merged_swimlane.json: write failed: $big" "$root/err" ||
	bad "run, ulimit -f 2000, trace: $(errors "$root/err")"
if [[ -z $d ]] || ! grep -qx "golden PASS" "$d/result.txt" ||
   ! grep -qx "trace FAILED (merged_swimlane.json was not written; taskprof swimlane on this folder makes it)" "$d/result.txt" ||
   [[ -e $d/merged_swimlane.json ]]; then
	bad "run, ulimit -f 2000, trace: result.txt '$(cat "$d/result.txt" 2>&1)', folder: $(ls "$d" 2>&1)"
fi
no_temps "$root/u"
# result.txt: a run that writes nothing else leaves no folder either.
# (Not under ThreadSanitizer: its runtime writes a file before main(), and
# with ulimit -f 0 that first write, not ours, gets SIGXFSZ.)
if [[ ${TASKPROF_TEST_SANITIZE:-} == thread ]]; then
	echo "skip: run and transport-demo with ulimit -f 0 (TSan's own start-up write)"
else
rm -rf "$root/u"
limited 0 "$root/err" "$bin" run synthetic -o "$root/u"
code=$?
[[ $code -eq 1 ]] || bad "run, ulimit -f 0: exit $code, expected 1"
grep -qx "$pre $root/u/synthetic_Default_[0-9_]*/result.txt: write failed: $big" "$root/err" ||
	bad "run, ulimit -f 0: $(cat "$root/err")"
[[ -z $(ls -A "$root/u" 2>/dev/null) ]] || bad "run, ulimit -f 0: left $(ls -A "$root/u")"
fi

# pmu.csv shards (about 30 KB each): the shard that passes 20 KB fails; the
# shard files are kept as evidence (docs/pmu.md "A failed write"), renamed
# *.failed.tmp, and the message says so; no other temporary file is left
rm -rf "$root/u"
limited 20 "$root/err" "$bin" run synthetic --enable-pmu -o "$root/u"
code=$?
[[ $code -eq 1 ]] || bad "run --enable-pmu, ulimit -f 20: exit $code, expected 1"
grep -q "^$pre pmu: CSV shard output failed for .*/pmu.csv: .*/pmu.csv.e1.p[0-9]*.shard[0-9].tmp: write failed: $big; the shard files are kept as evidence (.*shard\*.failed.tmp)\$" \
	"$root/err" || bad "run --enable-pmu, ulimit -f 20: $(errors "$root/err")"
grep -q "AICore/AICPU race" "$root/err" && bad "run --enable-pmu, ulimit -f 20: blames a race"
grep -q "the CSV shard output failed, so no row is counted: .*shard[0-9].tmp: write failed: $big" \
	"$root/err" || bad "run --enable-pmu, ulimit -f 20: the reconcile warning names no write"
left=$(find "$root/u" -name '*.tmp' ! -name '*.failed.tmp')
[[ -z $left ]] || bad "run --enable-pmu, ulimit -f 20: left $left"
# the merge (90 KB) past 60 KB, or a shard past it: pmu.csv is named
rm -rf "$root/u"
limited 60 "$root/err" "$bin" run synthetic --enable-pmu -o "$root/u"
code=$?
[[ $code -eq 1 ]] || bad "run --enable-pmu, ulimit -f 60: exit $code, expected 1"
grep -q "^$pre pmu: .*pmu.csv.*$big" "$root/err" ||
	bad "run --enable-pmu, ulimit -f 60: $(errors "$root/err")"
left=$(find "$root/u" -name '*.tmp' ! -name '*.failed.tmp')
[[ -z $left ]] || bad "run --enable-pmu, ulimit -f 60: left $left"
# The merge alone failing: a5sim with 6 scheduler threads writes 6 shards
# of about 15 KB, the merged pmu.csv about 94 KB. The merge is part of the
# reconcile (spec/pmu.md §2.4, §5 step 3): a failed merge counts 0 rows
# collected, so the reconcile line reports the mismatch and names the
# merge, not a race (before, it said the counts matched).
rm -rf "$root/u"
limited 40 "$root/err" "$bin" run synthetic --enable-pmu -p a5sim --aicpu-threads 7 -o "$root/u"
code=$?
[[ $code -eq 1 ]] || bad "run --enable-pmu a5sim, ulimit -f 40: exit $code, expected 1"
grep -q "^taskprof run: synthetic Default on a5sim failed: pmu: merging the shard files into .*/pmu.csv failed: write failed: $big; the shard files are kept as evidence" \
	"$root/err" || bad "run --enable-pmu a5sim, ulimit -f 40: $(errors "$root/err")"
grep -q "shard[0-9].tmp: write failed" "$root/err" &&
	bad "run --enable-pmu a5sim, ulimit -f 40: a shard failed, not the merge: $(cat "$root/err")"
grep -q "^\[taskprof\] WARN  PMU reconcile: record count mismatch (collected=0 + dropped=0 + mismatch=0 != device_total=[1-9][0-9]*, silent_loss=[1-9][0-9]*) — merging the shard files into pmu.csv failed, so no row is counted: pmu: merging the shard files into .*/pmu.csv failed: write failed: $big\$" \
	"$root/err" || bad "run --enable-pmu a5sim, ulimit -f 40: no reconcile mismatch naming the merge: $(grep 'PMU reconcile' "$root/err")"
grep -q "AICore/AICPU race" "$root/err" && bad "run --enable-pmu a5sim, ulimit -f 40: blames a race"

# ---- ulimit -f: transport-demo ----------------------------------------------------
if [[ ${TASKPROF_TEST_SANITIZE:-} != thread ]]; then # as for run above
rm -rf "$root/t"
limited 0 "$root/err" "$bin" transport-demo -n 1000 -o "$root/t"
code=$?
[[ $code -eq 1 ]] || bad "transport-demo, ulimit -f 0: exit $code, expected 1"
grep -qx "taskprof transport-demo: cannot write outputs: $root/t/transport_demo_[0-9_]*/instances.csv: write failed: $big" \
	"$root/err" || bad "transport-demo, ulimit -f 0: $(errors "$root/err")"
[[ -z $(ls -A "$root/t" 2>/dev/null) ]] || bad "transport-demo, ulimit -f 0: left $(ls -A "$root/t")"
fi

# ---- threads that cannot start: the reason, no empty run folder ---------------
# A preloaded pthread_create() that fails (EAGAIN) from its N+1-th call on.
cc=${CC:-cc}
if [[ -n ${TASKPROF_TEST_SANITIZE:-} ]]; then
	echo "skip: thread start failures (a preloaded library under the sanitizers)"
elif ! command -v "$cc" >/dev/null; then
	echo "skip: thread start failures (no C compiler for the preloaded library)"
else
	cat >"$root/failpt.c" <<'SHIM'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
static atomic_int calls;
int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	*(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
	const char *s = getenv("FAILPT_AFTER");
	if (s && atomic_fetch_add(&calls, 1) >= atoi(s))
		return EAGAIN;
	return real(t, a, fn, arg);
}
SHIM
	"$cc" -shared -fPIC -o "$root/libfailpt.so" "$root/failpt.c" -ldl ||
		bad "cannot build the pthread_create shim"
	again="Resource temporarily unavailable (the process's thread limit, ulimit -u, or the address space for thread stacks, ulimit -v)"
	producer=0
	for n in $(seq 0 40); do
		rm -rf "$root/t"
		LD_PRELOAD=$root/libfailpt.so FAILPT_AFTER=$n timeout $T \
			"$bin" transport-demo -n 100 -o "$root/t" >/dev/null 2>"$root/err"
		code=$?
		[[ $code -eq 0 ]] && break
		[[ $code -eq 1 ]] || bad "transport-demo, thread $n fails: exit $code, expected 1"
		line=$(errors "$root/err")
		[[ $line =~ ^"taskprof transport-demo: LoadGen: cannot start "("profiler threads"|"producer thread "[1-4]" of 4")": $again"$ ]] ||
			bad "transport-demo, thread $n fails: '$line'"
		[[ $line == *producer* ]] && producer=1
		[[ -z $(ls -A "$root/t" 2>/dev/null) ]] ||
			bad "transport-demo, thread $n fails: left $(ls -A "$root/t")"
	done
	[[ $producer -eq 1 ]] || bad "transport-demo: no producer thread failure was seen"
	# the dep_gen collector's threads start before the device's
	LD_PRELOAD=$root/libfailpt.so FAILPT_AFTER=0 timeout $T \
		"$bin" run synthetic --enable-dep-gen -o "$root/t" >/dev/null 2>"$root/err"
	code=$?
	[[ $code -eq 1 ]] || bad "run --enable-dep-gen, no thread starts: exit $code, expected 1"
	only_error "$root/err" "$pre dep_gen: cannot start the collector threads: $again"
fi

# ---- an address space too small (ulimit -v): the allocation that failed
# and the limit are named (not a bare "out of memory"). Not under the
# sanitizers, whose shadow memory needs terabytes of address space.
if [[ -n ${TASKPROF_TEST_SANITIZE:-} ]]; then
	echo "skip: ulimit -v (sanitizer build)"
else
	oom() {
		local kib=$1 re=$2
		rm -rf "$root/v"
		(ulimit -v "$kib"; timeout $T "$bin" run paged_attention -o "$root/v" >/dev/null 2>"$root/err")
		local code=$?
		[[ $code -eq 1 ]] || bad "run, ulimit -v $kib: exit $code, expected 1"
		[[ $(errors "$root/err") =~ $re ]] || bad "run, ulimit -v $kib: '$(errors "$root/err")'"
	}
	pa="taskprof run: paged_attention CaseSmall1 on a2a3sim failed:"
	oom 800000 "^$pa device 0 memory: cannot reserve 1073741824 bytes: Cannot allocate memory \(this process's address space is limited to 781 MiB: ulimit -v\)$"
	oom 1500000 "^$pa runtime: out of memory \(ring [0-3]: no memory for a 67108864-byte heap\) \(this process's address space is limited to 1464 MiB: ulimit -v\)$"
fi

# ---- result.txt cannot be created (no space, no inode): the run fails,
# the failure marker cannot be written either, and the line says so
# rather than claiming its result.txt says the run failed.
if [[ -n ${TASKPROF_TEST_SANITIZE:-} ]]; then
	echo "skip: result.txt creation failure (a preloaded library under the sanitizers)"
elif ! command -v "$cc" >/dev/null; then
	echo "skip: result.txt creation failure (no C compiler for the preloaded library)"
else
	cat >"$root/nospace.c" <<'SHIM'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
/* open(2) of a new file whose path has NOSPACE_MATCH fails with ENOSPC. */
int open(const char *p, int flags, ...)
{
	int (*real)(const char *, int, ...);
	*(void **)&real = dlsym(RTLD_NEXT, "open");
	mode_t m = 0;
	if (flags & O_CREAT) {
		va_list ap;
		va_start(ap, flags);
		m = (mode_t)va_arg(ap, int);
		va_end(ap);
		const char *s = getenv("NOSPACE_MATCH");
		if (s && strstr(p, s)) {
			errno = ENOSPC;
			return -1;
		}
	}
	return real(p, flags, m);
}
SHIM
	if "$cc" -shared -fPIC -o "$root/libnospace.so" "$root/nospace.c" -ldl; then
		rm -rf "$root/r"
		LD_PRELOAD=$root/libnospace.so NOSPACE_MATCH=/result.txt timeout $T \
			"$bin" run synthetic --enable-dep-gen -o "$root/r" >/dev/null 2>"$root/err"
		code=$?
		dir=$(ls -d "$root"/r/synthetic_* 2>/dev/null | head -1)
		[[ $code -eq 1 ]] || bad "run, result.txt not creatable: exit $code, expected 1"
		[[ -n $dir && -f $dir/deps.json && ! -e $dir/result.txt ]] ||
			bad "run, result.txt not creatable: folder '$dir': $(ls -A "$dir" 2>&1)"
		grep -qxF "taskprof run: what was written before the failure is in $dir (it has no result.txt saying the run failed: that could not be written either, so its files may look like a finished run's)" "$root/err" ||
			bad "run, result.txt not creatable: $(errors "$root/err")"
		no_temps "$root/r"
	else
		bad "cannot build the open() shim"
	fi
fi

# ---- the run folder removed while the case runs ---------------------------
# The slow kernel marks its start; the folder is removed then. The run fails
# naming that (not a collector's failed export that follows from it) and
# no export recreates the folder with part of the outputs.
so=$(dirname "$bin")/tests/case_so/libslowcase.so
if [[ -f $so ]]; then
	mkdir -p "$root/gone"
	SLOWCASE_MS=1500 SLOWCASE_MARK=$root/gone.mark timeout $T "$bin" run "$so" --enable-pmu \
		--enable-l2-swimlane --enable-dep-gen -o "$root/gone" >/dev/null 2>"$root/err" &
	pid=$!
	wait_until 600 0.05 "" test -e "$root/gone.mark.start"
	dir=$(ls -d "$root"/gone/slowcase_* 2>/dev/null | head -1)
	rm -rf "$root"/gone/*
	wait $pid
	code=$?
	[[ $code -eq 1 ]] || bad "run, folder removed: exit $code, expected 1"
	[[ -n $dir ]] || bad "run, folder removed: no run folder when the kernel started"
	errors "$root/err" | grep -qxF "taskprof run: slowcase Default on a2a3sim failed: the run folder $dir was removed or renamed during the run (No such file or directory); its outputs are lost, or in the folder's new place" ||
		bad "run, folder removed: $(errors "$root/err")"
	[[ -z $(ls -A "$root/gone") ]] || bad "run, folder removed: recreated: $(ls -R "$root/gone")"
else
	bad "$so not built"
fi

cli_finish "output errors: all checks passed"
