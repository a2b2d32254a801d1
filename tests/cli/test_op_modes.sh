#!/usr/bin/env bash
# Integration test of `taskprof op` replay modes and launch selection
# (spec/opprof.md §4.6–§4.8, §4.10, §4.14 I5–I8, I12; issue 6 acceptance
# 3, 4, 5):
#
#   I6  kernel vs application replay of the deterministic app: every
#       counter except the cycle ones (timing) equal, per launch folder
#   I7  application replay of an app whose launch sequence depends on
#       TASKPROF_PASS: strict fails with a message naming the
#       difference; relaxed keeps the common launches
#   I7b application replay of a kernel without an exported symbol (a
#       static function of an executable built without -rdynamic): named
#       from the executable's symbol table ("vector_add", -k matches it);
#       in a stripped copy, "<object>+0x<offset>", the same in every run
#       whatever the load address: the runs match, the launch is profiled
#   I7d application replay of a C++ application's unnamed kernels (a static
#       one in a namespace, an exported template instance): names
#       demangled in Op Name, folders and -k (the summary table cuts
#       a long one with "..."); the runs match
#   I7c application replay with stdin a file (its first line read before):
#       each run starts reading where the first did, so the runs match
#   I8  range_free under --replay-mode range --range-markers on: output
#       identical, no sanitizer report, per-launch folders of the range;
#       negative control with TASKPROF_DEBUG_NO_RESTORE=1
#   I5  multi_kernel with -k, --launch-skip-before-match, --launch-skip,
#       -c: exactly the expected device0/<name>/<k>/ folders
#   I5m markers (launches outside and inside a range) with --range-markers
#       on in kernel, application and range replay: only the launches
#       inside the range are selected (launch.txt range=mr), the ones
#       outside still count for --launch-skip-before-match; off: the
#       range is ignored
#   I12 device_switch (0 → 1 → 0): per-device folders, records of the right
#       device only, as many threads left after the resets as unprofiled (1;
#       a sanitizer runtime may add its own)
#   I12r range_device: a range that spans a device switch is not replayed
#       (its operations run once, each on its device: output identical,
#       status=skipped, a warning naming the range); a range on device 0
#       popped while device 1 is current replays on device 0, its
#       deferred free on device 0
#       no_launch: exit 0, empty report, NOTE.txt and the note line
#       ("the application launched 0 kernels": it calls the device API)
#   S1  deterministic_static (the runtime linked in from
#       libtaskprof_core.a): no call reaches the injector; the note says
#       so and names the static runtime, not "launched 0 kernels" (it
#       launches 3), kernel and application replay; the exit status is
#       the application's; `true` (no device API at all) gets the general
#       reasons
#
# usage: test_op_modes.sh TASKPROF_BINARY
. "$(dirname "$0")/op_test_lib.sh" "$1"

need "$APPS/deterministic" "$APPS/deterministic_static" "$APPS/range_free" "$APPS/multi_kernel" "$APPS/device_switch" \
	"$APPS/cxx_kernels" "$APPS/markers" "$APPS/range_device" "$APPS/no_launch" "$APPS/range_threads" "$APPS/stdin_count" "$EX/example_rt_vector_add"

# a2a3 events counted from measured time (docs/pmu.md): vec, scalar, cube,
# mte1, mte2, mte3 busy cycles. Every other modelled event counts
# instructions, requests or elements: exact and run-independent.
TIMING_EVENTS=0x08,0x09,0x0a,0x0b,0x0c,0x0d

# raw_counts CSV: the non-timing rows of a RawEvents.csv as
# "block,sub_block,core_type,event,value" lines, sorted (the pass column is
# left out: it is checked separately), on stdout; exit 3 on a bad header.
raw_counts() {
	python3 - "$1" "$TIMING_EVENTS" <<'PY'
import csv, sys
want = ["block_id", "sub_block_id", "core_type", "pass", "event_id", "value"]
try:
    rows = list(csv.reader(open(sys.argv[1], newline="")))
except OSError as e:
    print(f"cannot read {sys.argv[1]}: {e}", file=sys.stderr); sys.exit(3)
if not rows or rows[0] != want:
    print(f"{sys.argv[1]}: header {rows[0] if rows else None}, want {want}", file=sys.stderr)
    sys.exit(3)
timing = {int(x, 0) for x in sys.argv[2].split(",")}
out = []
for r in rows[1:]:
    ev = int(r[4], 0)
    if ev not in timing:
        out.append(f"{r[0]},{r[1]},{r[2]},0x{ev:x},{int(r[5])}")
print("\n".join(sorted(out)))
PY
}

# ---- I6: kernel vs application replay --------------------------------------
M6=Memory,MemoryUB,ArithmeticUtilization
say "I6: deterministic app, kernel replay vs application replay, --aic-metrics $M6 -c 10"
OP_OUT_FILE=$WORK/i6.ref app_run i6.plain "$APPS/deterministic"
OP_OUT_FILE=$WORK/i6k.bin op_run i6k -c 10 --aic-metrics "$M6" -- "$APPS/deterministic"
K6=$OPDIR
[ $OPRC = 0 ] || { bad "I6 kernel replay: taskprof op exited $OPRC"; show "$WORK/i6k.err"; }
OP_OUT_FILE=$WORK/i6a.bin op_run i6a --replay-mode application -c 10 --aic-metrics "$M6" \
	-- "$APPS/deterministic"
A6=$OPDIR
[ $OPRC = 0 ] || { bad "I6 application replay: taskprof op exited $OPRC"; show "$WORK/i6a.err"; }
same_bytes "I6 kernel replay" "$WORK/i6.ref" "$WORK/i6k.bin"
same_bytes "I6 application replay" "$WORK/i6.ref" "$WORK/i6a.bin"
want6="device0/det_acc/0 block_dim=6 device0/det_acc/1 block_dim=6 device0/det_axpb/0 block_dim=4"
for m in K6 A6; do
	got=$(launch_set "${!m:-/nonexistent}")
	[ "$got" = "$want6" ] && ok "I6 $m: folders $got" || bad "I6 $m: folders '$got', want '$want6'"
done
p6=$(passes_of "${K6:-/nonexistent}")
[ "$p6" = "$(passes_of "${A6:-/nonexistent}")" ] && [ -n "$p6" ] ||
	bad "I6: the two runs planned different passes"
for l in det_axpb/0 det_acc/0 det_acc/1; do
	kc=$(raw_counts "$K6/device0/$l/RawEvents.csv") || { bad "I6 $l: kernel replay RawEvents.csv"; continue; }
	ac=$(raw_counts "$A6/device0/$l/RawEvents.csv") || { bad "I6 $l: application replay RawEvents.csv"; continue; }
	n=$(grep -c . <<<"$kc")
	nz=$(grep -vc ',0$' <<<"$kc")
	if [ "$kc" = "$ac" ] && [ "$nz" -gt 0 ]; then
		ok "I6 $l: $n counter values ($nz non-zero) equal in both modes"
	else
		bad "I6 $l: counter values differ between kernel and application replay ($n rows, $nz non-zero)"
		diff <(echo "$kc") <(echo "$ac") | head -20 | sed 's/^/   | /'
	fi
	# Every planned pass produced rows in both modes.
	for m in K6 A6; do
		np=$(csv_col "${!m}/device0/$l/RawEvents.csv" pass | sort -u | grep -c .)
		[ "$np" = "$p6" ] || bad "I6 $l $m: RawEvents.csv has rows of $np passes, want $p6"
	done
done

# ---- I7: application replay mismatch ---------------------------------------
say "I7: 'deterministic vary' (extra launch in odd runs), --app-replay-mode strict"
op_run i7s --replay-mode application --app-replay-mode strict -c 10 --aic-metrics "$M6" \
	-- "$APPS/deterministic" vary
if [ "${p6:-0}" -lt 2 ]; then
	bad "I7: needs a plan of >= 2 passes (got ${p6:-?}); widen M6"
elif [ $OPRC != 0 ] && grep -qiE 'det_extra|differ|mismatch' "$WORK/i7s.err"; then
	ok "I7 strict: exit $OPRC: $(grep -iE 'det_extra|differ|mismatch' "$WORK/i7s.err" | head -1)"
else
	bad "I7 strict: want a non-zero exit naming the differing launch (exit $OPRC)"
	show "$WORK/i7s.err"
fi
say "I7: the same with --app-replay-mode relaxed keeps the common launches"
op_run i7r --replay-mode application --app-replay-mode relaxed -c 10 --aic-metrics "$M6" \
	-- "$APPS/deterministic" vary
got=$(launch_set "${OPDIR:-/nonexistent}")
if [ $OPRC = 0 ] && [ "$got" = "$want6" ]; then
	ok "I7 relaxed: exit 0, folders $got"
else
	bad "I7 relaxed: exit $OPRC, folders '$got', want 0 and '$want6'"
	show "$WORK/i7r.err"
fi

# ---- I7b: application replay of a kernel without a symbol -------------------
say "I7b: example_rt_vector_add (static kernel, no -rdynamic), --replay-mode application -k vector_add"
op_run i7b --replay-mode application -k vector_add -- "$EX/example_rt_vector_add"
got=$(launch_set "${OPDIR:-/nonexistent}")
if [ $OPRC = 0 ] && [ "$got" = "device0/vector_add/0 block_dim=8" ] &&
   grep -q '4 runs matched, 1 launch profiled' "$WORK/i7b.err"; then
	ok "I7b: exit 0, folders $got"
else
	bad "I7b: exit $OPRC, folders '$got', want 0, 'device0/vector_add/0 block_dim=8' and 4 runs matched"
	show "$WORK/i7b.err"
fi
say "I7b: the application found through PATH (argv[0] has no '/'): its symbol table is read all the same"
PATH="$EX:$PATH" op_run i7p -k vector_add -- example_rt_vector_add
got=$(launch_set "${OPDIR:-/nonexistent}")
if [ $OPRC = 0 ] && [ "$got" = "device0/vector_add/0 block_dim=8" ]; then
	ok "I7b PATH: exit 0, folders $got"
else
	bad "I7b PATH: exit $OPRC, folders '$got', want 0 and 'device0/vector_add/0 block_dim=8'"
	show "$WORK/i7p.err"
fi
say "I7b: a stripped copy (no symbol table): named by object and offset"
strip -o "$WORK/vadd_stripped" "$EX/example_rt_vector_add"
op_run i7s --replay-mode application -- "$WORK/vadd_stripped"
got=$(launch_set "${OPDIR:-/nonexistent}")
want7s="device0/vadd_stripped_0x[0-9a-f]*/0 block_dim=8"
# shellcheck disable=SC2053 # $want7s is a pattern
if [ $OPRC = 0 ] && [[ $got == $want7s ]] && grep -q '4 runs matched, 1 launch profiled' "$WORK/i7s.err"; then
	ok "I7b stripped: exit 0, folders $got"
else
	bad "I7b stripped: exit $OPRC, folders '$got', want 0, '$want7s' and 4 runs matched"
	show "$WORK/i7s.err"
fi

# ---- I7d: C++ kernels: demangled names -----------------------------------------
# cxx_kernels launches, without names, demo::twice (static: the symbol
# table) and times<3> (exported: dladdr), each on 2 blocks.
say "I7d: cxx_kernels (C++), --replay-mode application: names demangled"
OP_OUT_FILE=$WORK/i7d.ref app_run i7d.plain "$APPS/cxx_kernels"
OP_OUT_FILE=$WORK/i7d.bin op_run i7d --replay-mode application -c 2 --aic-metrics BasicInfo \
	-- "$APPS/cxx_kernels"
got=$(launch_set "${OPDIR:-/nonexistent}")
want7d="device0/demo__twice_unsigned_int__unsigned_int__void__/0 block_dim=2 device0/void_times_3__unsigned_int__unsigned_int__void__/0 block_dim=2"
names7d=$(for f in "${OPDIR:-/nonexistent}"/device0/*/0/OpBasicInfo.csv; do
	python3 -c 'import csv,sys; print(list(csv.DictReader(open(sys.argv[1])))[0]["Op Name"])' "$f"
done 2>&1 | sort | tr '\n' '|')
if [ $APPRC = 0 ] && [ $OPRC = 0 ] && [ "$got" = "$want7d" ] &&
   [ "$names7d" = "demo::twice(unsigned int, unsigned int, void*)|void times<3>(unsigned int, unsigned int, void*)|" ] &&
   cmp -s "$WORK/i7d.ref" "$WORK/i7d.bin" && grep -q '2 launches profiled' "$WORK/i7d.err" &&
   grep -q '^demo::twice(unsigned int, unsigned in\.\.\.  *0 ' "$WORK/i7d.out"; then
	ok "I7d: exit 0, folders $got, Op Name $names7d output identical"
else
	bad "I7d: exit $APPRC/$OPRC, folders '$got' (want '$want7d'), Op Name '$names7d'" \
		"$(cmp -s "$WORK/i7d.ref" "$WORK/i7d.bin" || echo "(output differs)")"
	show "$WORK/i7d.err"
fi
say "I7d: -k matches the demangled name"
op_run i7k -k 'demo::twice' --aic-metrics BasicInfo -- "$APPS/cxx_kernels"
got=$(launch_set "${OPDIR:-/nonexistent}")
if [ $OPRC = 0 ] && [ "$got" = "device0/demo__twice_unsigned_int__unsigned_int__void__/0 block_dim=2" ]; then
	ok "I7d -k demo::twice: $got"
else
	bad "I7d -k demo::twice: exit $OPRC, folders '$got'"
	show "$WORK/i7k.err"
fi

# ---- I7c: application replay with a stdin file ------------------------------
say "I7c: stdin_count < file (its first line already read), --replay-mode application -c 3"
printf '9\n3\n' >"$WORK/i7c.in"
(read -r _ && op_run i7c --replay-mode application -c 3 --aic-metrics PipeUtilization,Memory \
	-- "$APPS/stdin_count"; echo "$OPRC $OPDIR" >"$WORK/i7c.rc") <"$WORK/i7c.in"
read -r OPRC OPDIR <"$WORK/i7c.rc"
got=$(launch_set "${OPDIR:-/nonexistent}")
want7c="device0/stdin_acc/0 block_dim=2 device0/stdin_acc/1 block_dim=2 device0/stdin_acc/2 block_dim=2"
if [ "$OPRC" = 0 ] && [ "$got" = "$want7c" ] && grep -q 'runs matched, 3 launches profiled' "$WORK/i7c.err" &&
	grep -q 'stdin_count: 3 launches: ok' "$WORK/i7c.out" &&
	! grep 'stdin_count: ' "$WORK/i7c.out" | grep -qv ': 3 launches: ok'; then
	ok "I7c: every run read the same count (3): folders $got"
else
	bad "I7c: exit $OPRC, folders '$got', want 0 and '$want7c'"
	show "$WORK/i7c.err"
fi

# ---- I8: range replay with a free inside the range -------------------------
M8=PipeUtilization,Memory
say "I8: range_free under --replay-mode range --range-markers on -c 10 --aic-metrics $M8"
OP_OUT_FILE=$WORK/i8.ref app_run i8.plain "$APPS/range_free"
OP_OUT_FILE=$WORK/i8.bin TASKPROF_SIM_STATS=1 op_run i8 --replay-mode range --range-markers on \
	-c 10 --warm-up 1 --aic-metrics "$M8" -- "$APPS/range_free"
if [ $OPRC = 0 ] && [ -n "$OPDIR" ]; then
	ok "I8: taskprof op exited 0"
else
	bad "I8: taskprof op exited $OPRC"
	show "$WORK/i8.err"
fi
same_bytes I8 "$WORK/i8.ref" "$WORK/i8.bin"
if grep -qE 'AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error' "$WORK/i8.err"; then
	bad "I8: a sanitizer reported an error"
	show "$WORK/i8.err"
else
	ok "I8: no sanitizer report"
fi
p8=$(passes_of "${OPDIR:-/nonexistent}")
for l in range_k1/0 range_k2/0; do
	d=${OPDIR:-/nonexistent}/device0/$l
	if [ "$(kv "$d/launch.txt" range)" = step ] && [ "$(kv "$d/launch.txt" status)" = ok ] &&
		[ "$(kv "$d/launch.txt" passes_done)" = "$p8" ]; then
		ok "I8 $l: range=step status=ok passes_done=$p8"
	else
		bad "I8 $l: want range=step status=ok passes_done=$p8"
		show "$d/launch.txt"
	fi
done
# Each replayed range runs its 2 launches W + P times: the last pass is the
# application's execution (docs/op.md "range"); a range that was not
# replayed runs them once.
got=$(sim_launches "$WORK/i8.err" 0)
nr=$(ls -d "${OPDIR:-/nonexistent}"/device0/range_k1/*/ 2>/dev/null | wc -l)
want=$((nr * 2 * (1 + ${p8:-0}) + (2 - nr) * 2))
if [ "$nr" -ge 1 ] && [ "$got" = "$want" ]; then
	ok "I8: $got executions = $nr replayed range(s) x 2 launches x (W 1 + P ${p8:-?})"
else
	bad "I8: $got executions, want $want ($nr replayed ranges of 2 launches, W 1 + P ${p8:-?} each)"
fi
OP_OUT_FILE=$WORK/i8nr.bin TASKPROF_DEBUG_NO_RESTORE=1 op_run i8nr --replay-mode range \
	--range-markers on -c 10 --warm-up 1 --aic-metrics "$M8" -- "$APPS/range_free"
if [ -s "$WORK/i8nr.bin" ] && ! cmp -s "$WORK/i8.ref" "$WORK/i8nr.bin"; then
	ok "I8: negative control: with TASKPROF_DEBUG_NO_RESTORE=1 the output differs"
else
	bad "I8: TASKPROF_DEBUG_NO_RESTORE=1 did not change the output (exit $OPRC)"
fi

# Over --replay-mem-limit the range's snapshot goes to the first profiled
# launch's dump/ (spec §4.9 step 3): every pass, output identical, no file
# left.
say "I8: range_free with --replay-mem-limit 4K: the range's snapshot spilled to dump/"
OP_OUT_FILE=$WORK/i8s.bin op_run i8s --replay-mode range --range-markers on -c 10 --warm-up 1 \
	--replay-mem-limit 4K --aic-metrics "$M8" -- "$APPS/range_free"
d=${OPDIR:-/nonexistent}/device0/range_k1/0
if [ $OPRC = 0 ] && cmp -s "$WORK/i8.ref" "$WORK/i8s.bin" && [ "$(kv "$d/launch.txt" status)" = ok ] &&
	[ "$(kv "$d/launch.txt" passes_done)" = "$p8" ] &&
	[ "$(kv "$d/launch.txt" snapshot_storage)" = file ] &&
	[ -z "$(ls "${OPDIR:-/nonexistent}"/device0/*/*/dump/snapshot.bin 2>/dev/null)" ] &&
	grep -q "^taskprof op: range step: footprint .* snapshot spilled to $d/dump/snapshot.bin" "$WORK/i8s.err"; then
	ok "I8 spill: output identical, status=ok, $p8 passes, snapshot_storage=file, the file removed"
else
	bad "I8 spill: exit $OPRC, want 0, identical output, status=ok passes_done=$p8 snapshot_storage=file"
	show "$d/launch.txt"
	show "$WORK/i8s.err"
fi

# A range of 21 launches (more than the capture list's first 16 entries):
# the list grows while the captured launches are already profiled, which
# must not move what their launch contexts point into.
say "I8: 'range_free 20' (2 ranges of 21 launches), every launch profiled"
OP_OUT_FILE=$WORK/i8l.ref app_run i8l.plain "$APPS/range_free" 20
OP_OUT_FILE=$WORK/i8l.bin op_run i8l --replay-mode range --range-markers on -k '*' -c 5000 \
	--aic-metrics BasicInfo -- "$APPS/range_free" 20
nl=$(ls "${OPDIR:-/nonexistent}"/device0/*/*/launch.txt 2>/dev/null | wc -l)
nok=$(cat "${OPDIR:-/nonexistent}"/device0/*/*/launch.txt 2>/dev/null | grep -c '^status=ok$')
nb=$(cat "${OPDIR:-/nonexistent}"/device0/*/*/launch.txt 2>/dev/null | grep -c '^block_dim=4$')
k3=$(ls -d "${OPDIR:-/nonexistent}"/device0/range_k3/*/ 2>/dev/null | wc -l)
if [ $OPRC = 0 ] && cmp -s "$WORK/i8l.ref" "$WORK/i8l.bin" && [ "$nl" = 42 ] && [ "$nok" = 42 ] &&
	[ "$nb" = 42 ] && [ "$k3" = 20 ]; then
	ok "I8 long range: exit 0, output identical, 42 launch.txt (status=ok, block_dim=4), 20 range_k3"
else
	bad "I8 long range: exit $OPRC, $nl launch.txt ($nok ok, $nb block_dim=4), $k3 range_k3, want 0, 42, 42, 42, 20" \
		"$(cmp -s "$WORK/i8l.ref" "$WORK/i8l.bin" || echo "(output differs)")"
	show "$WORK/i8l.err"
fi

# Ranges on 4 threads at once, each freeing a buffer inside its range: a
# pop frees its own thread's deferred frees only (one thread's pop used to
# free what another thread's open range still used: -EFAULT, wrong sums).
say "I8: range_threads (4 threads x 10 ranges, a free inside each), every launch profiled"
op_run i8t --replay-mode range --range-markers on -c 100 --aic-metrics BasicInfo \
	-- "$APPS/range_threads"
nl=$(ls "${OPDIR:-/nonexistent}"/device0/racc/*/launch.txt 2>/dev/null | wc -l)
if [ $OPRC = 0 ] && grep -q 'range_threads: 4 threads x 10 ranges with a temporary buffer: ok' \
	"$WORK/i8t.out" && [ "$nl" = 40 ]; then
	ok "I8 threads: exit 0, the application's sums right, 40 launch folders"
else
	bad "I8 threads: exit $OPRC, $nl launch folders (want 0, ok, 40)"
	show "$WORK/i8t.out"
	show "$WORK/i8t.err"
fi

# ---- I5: launch selection --------------------------------------------------
# multi_kernel launches (index: name blocks): 0 add_one 1, 1 scale_two 2,
# 2 add_one 3, 3 add_three 4, 4 scale_two 5, 5 add_one 6, 6 add_three 7,
# 7 add_one 8. k counts profiled launches per name.
say "I5: multi_kernel launch selection"
OP_OUT_FILE=$WORK/i5.ref app_run i5.plain "$APPS/multi_kernel"
n5=0
sel() {
	local want=$1
	shift
	n5=$((n5 + 1))
	OP_OUT_FILE=$WORK/i5_$n5.bin op_run "i5_$n5" --aic-metrics BasicInfo "$@" \
		-- "$APPS/multi_kernel"
	local got
	got=$(launch_set "${OPDIR:-/nonexistent}")
	if [ $OPRC = 0 ] && [ "$got" = "$want" ] && cmp -s "$WORK/i5.ref" "$WORK/i5_$n5.bin"; then
		ok "I5 [$*]: $got"
	else
		bad "I5 [$*]: exit $OPRC, folders '$got', want '$want'" \
			"$(cmp -s "$WORK/i5.ref" "$WORK/i5_$n5.bin" || echo "(output differs)")"
		show "$WORK/i5_$n5.err"
	fi
}
sel "device0/add_one/0 block_dim=1"
sel "device0/add_three/0 block_dim=4" -k add_three
sel "device0/add_one/0 block_dim=1 device0/add_one/1 block_dim=3 device0/add_one/2 block_dim=6 device0/add_one/3 block_dim=8 device0/add_three/0 block_dim=4 device0/add_three/1 block_dim=7" \
	-k add -c 10
sel "device0/add_three/0 block_dim=4" --launch-skip-before-match 3 -k add
sel "device0/add_one/0 block_dim=6 device0/add_three/0 block_dim=4" -k add --launch-skip 2 -c 2
sel "device0/add_three/0 block_dim=4 device0/add_three/1 block_dim=7 device0/scale_two/0 block_dim=2 device0/scale_two/1 block_dim=5" \
	-k '*_two|add_three' -c 100
sel "device0/scale_two/0 block_dim=5" --kernel-name scale --launch-skip 1
sel "device0/add_one/0 block_dim=1 device0/add_one/1 block_dim=3 device0/scale_two/0 block_dim=2" \
	--launch-count 3
sel "device0/add_one/0 block_dim=8 device0/add_three/0 block_dim=7" \
	--launch-skip-before-match 6 -c 5

say "I5: a pattern that matches nothing: exit 0, empty report, NOTE.txt"
op_run i5none -k no_such_kernel -- "$APPS/multi_kernel"
if [ $OPRC = 0 ] && [ -f "$OPDIR/NOTE.txt" ] && [ -z "$(launch_set "$OPDIR")" ]; then
	ok "I5 unmatched -k: exit 0, NOTE.txt, no launch folder"
else
	bad "I5 unmatched -k: exit $OPRC, want 0 with NOTE.txt and no launch folder"
	show "$WORK/i5none.err"
fi

# ---- I5m: --range-markers on in every replay mode ---------------------------
# markers launches (index: name blocks): 0 outside_k 1, then inside range
# "mr" 1 in_a 2 and 2 in_b 3, then 3 after_k 4.
say "I5m: markers under --range-markers on: only launches inside the range are selected"
OP_OUT_FILE=$WORK/i5m.ref app_run i5m.plain "$APPS/markers"
[ $APPRC = 0 ] || { bad "I5m: unprofiled run exited $APPRC"; show "$WORK/i5m.plain.err"; }
nm=0
msel() {
	local want=$1 inrange=$2 d got
	shift 2
	nm=$((nm + 1))
	OP_OUT_FILE=$WORK/i5m_$nm.bin op_run "i5m_$nm" --aic-metrics BasicInfo "$@" \
		-- "$APPS/markers"
	got=$(launch_set "${OPDIR:-/nonexistent}")
	local rbad=""
	if [ "$inrange" = yes ]; then
		for d in "${OPDIR:-/nonexistent}"/device0/*/*/; do
			[ "$(kv "$d/launch.txt" range)" = mr ] || rbad="$rbad ${d#"$OPDIR"/}"
		done
	fi
	if [ $OPRC = 0 ] && [ "$got" = "$want" ] && [ -z "$rbad" ] &&
		cmp -s "$WORK/i5m.ref" "$WORK/i5m_$nm.bin"; then
		ok "I5m [$*]: $got"
	else
		bad "I5m [$*]: exit $OPRC, folders '$got', want '$want'" \
			"${rbad:+(no range=mr in:$rbad)}" \
			"$(cmp -s "$WORK/i5m.ref" "$WORK/i5m_$nm.bin" || echo "(output differs)")"
		show "$WORK/i5m_$nm.err"
	fi
}
msel "device0/in_a/0 block_dim=2" yes --range-markers on
msel "device0/in_a/0 block_dim=2 device0/in_b/0 block_dim=3" yes --range-markers on -k '*' -c 10
msel "device0/in_b/0 block_dim=3" yes --range-markers on -k 'outside_k|in_b|after_k' -c 10
msel "device0/in_b/0 block_dim=3" yes --range-markers on --launch-skip-before-match 2 -c 10
msel "device0/in_b/0 block_dim=3" yes --range-markers on -k 'in_' --launch-skip 1 -c 10
msel "device0/in_a/0 block_dim=2 device0/in_b/0 block_dim=3" yes --replay-mode application \
	--range-markers on -c 10
msel "device0/in_b/0 block_dim=3" yes --replay-mode application --range-markers on \
	--launch-skip-before-match 2 -c 10
msel "device0/in_b/0 block_dim=3" yes --replay-mode range --range-markers on \
	--launch-skip-before-match 2 -c 10
# Markers off: the range means nothing to the selection.
msel "device0/outside_k/0 block_dim=1" no
msel "device0/after_k/0 block_dim=4 device0/in_b/0 block_dim=3" no --launch-skip-before-match 2 -c 10
say "I5m: a range name with line breaks stays one launch.txt value"
for mode in kernel range; do
	MARKERS_RANGE=$'r\nstatus=failed\nname=evil\r\tx' op_run "i5mc_$mode" --replay-mode "$mode" \
		--range-markers on --aic-metrics BasicInfo -- "$APPS/markers"
	d="${OPDIR:-/nonexistent}/device0/in_a/0"
	if [ $OPRC = 0 ] && [ "$(kv "$d/launch.txt" range)" = "r_status=failed_name=evil__x" ] &&
		[ "$(kv "$d/launch.txt" status)" = ok ] && [ "$(kv "$d/launch.txt" name)" = in_a ] &&
		[ "$(grep -c '^status=' "$d/launch.txt")" = 1 ] &&
		[ "$(grep -c '^name=' "$d/launch.txt")" = 1 ]; then
		ok "I5m ($mode replay): range=$(kv "$d/launch.txt" range), status ok, name in_a"
	else
		bad "I5m ($mode replay): exit $OPRC, launch.txt: $(tr '\n' '|' <"$d/launch.txt" 2>&1)"
		show "$WORK/i5mc_$mode.err"
	fi
done
say "I5m: --range-markers on, no launch in a range selected: the note says why"
op_run i5mn --range-markers on -k outside_k -- "$APPS/markers"
if [ $OPRC = 0 ] && [ -z "$(launch_set "${OPDIR:-/nonexistent}")" ] &&
	grep -q 'with --range-markers on only launches between tp_rt_range_push and tp_rt_range_pop' \
		"$WORK/i5mn.err"; then
	ok "I5m: -k outside_k: nothing profiled, and the note names --range-markers"
else
	bad "I5m: -k outside_k under --range-markers on: exit $OPRC, folders '$(launch_set "${OPDIR:-/nonexistent}")'"
	show "$WORK/i5mn.err"
fi

# ---- I12: device switch ----------------------------------------------------
say "I12: device_switch (device 0, 1, 0) under -k dev_acc -c 10"
OP_OUT_FILE=$WORK/i12.ref app_run i12.plain "$APPS/device_switch"
OP_OUT_FILE=$WORK/i12.bin op_run i12 -k dev_acc -c 10 --aic-metrics PipeUtilization,Memory \
	-- "$APPS/device_switch"
[ $OPRC = 0 ] && ok "I12: taskprof op exited 0" ||
	{ bad "I12: taskprof op exited $OPRC"; show "$WORK/i12.err"; }
same_bytes I12 "$WORK/i12.ref" "$WORK/i12.bin"
want="device0/dev_acc/0 block_dim=4 device0/dev_acc/1 block_dim=4 device1/dev_acc/0 block_dim=4"
got=$(launch_set "${OPDIR:-/nonexistent}")
[ "$got" = "$want" ] && ok "I12: folders $got" || bad "I12: folders '$got', want '$want'"
# 1 thread, the main one; a sanitizer runtime may add its own (TSan's
# background thread), which the unprofiled run counts too.
th=$(sed -n 's/^device_switch: threads after reset: //p' "$WORK/i12.out")
th0=$(sed -n 's/^device_switch: threads after reset: //p' "$WORK/i12.plain.out")
if [ -z "$th0" ] || [ "$th0" -gt 2 ]; then
	bad "I12: the unprofiled run counted '${th0:-?}' threads after the resets"
	show "$WORK/i12.plain.out"
elif [ "$th" = "$th0" ]; then
	ok "I12: $th thread(s) left after resetting both devices, as without taskprof op"
else
	bad "I12: the app counted '${th:-?}' threads after the resets, want $th0 (as unprofiled)"
	show "$WORK/i12.out"
fi
# Every record of a folder's pass files comes from the folder's device.
if [ -n "$OPDIR" ]; then
	if python3 - "$OPDIR" <<'PY'; then
import glob, os, struct, sys
bad = 0; n = 0
for f in sorted(glob.glob(os.path.join(sys.argv[1], "device*/*/*/dump/pass_*.bin"))):
    dev = int(f.split(os.sep + "device")[1].split(os.sep)[0])
    data = open(f, "rb").read()
    if len(data) % 176:
        print(f"   | {f}: {len(data)} bytes, not whole 176-byte records"); bad += 1; continue
    for i in range(0, len(data), 176):
        magic, ver, kind, size, rdev = struct.unpack_from("<IHHIi", data, i)
        n += 1
        if magic != 0x504F5054 or size != 176 or rdev != dev:
            print(f"   | {f}: record {i // 176}: magic {magic:#x} size {size} device {rdev}, want device {dev}")
            bad += 1
print(f"   {n} records checked")
sys.exit(1 if bad or n == 0 else 0)
PY
		ok "I12: every record is from its folder's device"
	else
		bad "I12: records from the wrong device (or none)"
	fi
fi

# ---- I12r: device switch inside a range -------------------------------------
M12=PipeUtilization,Memory
say "I12r: range_device span (push on device 0, launch, set_device(1), launch, pop), range replay"
OP_OUT_FILE=$WORK/i12s.ref app_run i12s.plain "$APPS/range_device" span
[ $APPRC = 0 ] || { bad "I12r span: unprofiled run exited $APPRC"; show "$WORK/i12s.plain.err"; }
OP_OUT_FILE=$WORK/i12s.bin op_run i12s --replay-mode range --range-markers on -k '*' -c 10 \
	--aic-metrics "$M12" -- "$APPS/range_device" span
if [ $OPRC = 0 ] && grep -q 'range_device span: dev0 out\[0\]=11 dev1 out\[0\]=11: ok' "$WORK/i12s.out"; then
	ok "I12r span: exit 0, both devices' results right (11 11)"
else
	bad "I12r span: exit $OPRC, want 0 and 'dev0 out[0]=11 dev1 out[0]=11: ok'"
	show "$WORK/i12s.out"
	show "$WORK/i12s.err"
fi
same_bytes "I12r span" "$WORK/i12s.ref" "$WORK/i12s.bin"
want="device0/rd_acc0/0 block_dim=2 device1/rd_acc1/0 block_dim=2"
got=$(launch_set "${OPDIR:-/nonexistent}")
[ "$got" = "$want" ] && ok "I12r span: folders $got (each on its own device)" ||
	bad "I12r span: folders '$got', want '$want'"
for l in device0/rd_acc0/0 device1/rd_acc1/0; do
	d=${OPDIR:-/nonexistent}/$l
	if [ "$(kv "$d/launch.txt" status)" = skipped ] && [ "$(kv "$d/launch.txt" passes_done)" = 0 ] &&
		kv "$d/launch.txt" note | grep -q "range 'rdev' spans devices 0 and 1.*not replayed" &&
		[ "$(csv_col "$d/OpBasicInfo.csv" "Replay Consistent")" = N/A ]; then
		ok "I12r span $l: status=skipped, 0 passes, Replay Consistent N/A, note: $(kv "$d/launch.txt" note)"
	else
		bad "I12r span $l: want status=skipped passes_done=0, a note naming the range, Replay Consistent N/A"
		show "$d/launch.txt"
	fi
done
if grep -q "^taskprof op: warning: range 'rdev' spans devices 0 and 1" "$WORK/i12s.err" &&
	grep -q "^taskprof op: profiled 0 kernel launches; 2 not replayed (status skipped" "$WORK/i12s.err" &&
	grep -qE '^rd_acc0 +0 +0 +2 +N/A +0 +N/A +skipped ' "$WORK/i12s.out"; then
	ok "I12r span: the warning names the range; the table and the last line say skipped"
else
	bad "I12r span: want the warning, a table row with status skipped and '2 not replayed'"
	show "$WORK/i12s.err"
fi
# The skip is said once: no "pass N missing" line per pass of a skipped
# launch; its summary.json keeps one note.
n=$(grep -c 'pass [0-9]* missing' "$WORK/i12s.err")
w=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["warnings"])' \
	"${OPDIR:-/nonexistent}/device0/rd_acc0/0/summary.json" 2>&1)
if [ "$n" = 0 ] && [ "$w" = "['not measured (status skipped): every event is N/A']" ]; then
	ok "I12r span: no 'pass N missing' lines; summary.json warnings $w"
else
	bad "I12r span: $n 'pass N missing' lines (want 0); summary.json warnings: $w"
fi

say "I12r: range_device popswitch (a range on device 0 popped while device 1 is current)"
OP_OUT_FILE=$WORK/i12p.ref app_run i12p.plain "$APPS/range_device" popswitch
[ $APPRC = 0 ] || { bad "I12r popswitch: unprofiled run exited $APPRC"; show "$WORK/i12p.plain.err"; }
OP_OUT_FILE=$WORK/i12p.bin op_run i12p --replay-mode range --range-markers on -k '*' -c 10 \
	--aic-metrics "$M12" -- "$APPS/range_device" popswitch
p12=$(passes_of "${OPDIR:-/nonexistent}")
d=${OPDIR:-/nonexistent}/device0/rd_tmp0/0
if [ $OPRC = 0 ] && grep -q 'popswitch: .*: ok' "$WORK/i12p.out" &&
	[ "$(kv "$d/launch.txt" status)" = ok ] && [ "$(kv "$d/launch.txt" device)" = 0 ] &&
	[ "$(kv "$d/launch.txt" passes_done)" = "$p12" ] &&
	! grep -q 'deferred tp_rt_free failed' "$WORK/i12p.err"; then
	ok "I12r popswitch: exit 0, results right, rd_tmp0 replayed on device 0 ($p12 passes), free done"
else
	bad "I12r popswitch: exit $OPRC, want 0, ok, device0/rd_tmp0/0 status=ok device=0 passes_done=$p12, no failed free"
	show "$d/launch.txt"
	show "$WORK/i12p.out"
	show "$WORK/i12p.err"
fi
same_bytes "I12r popswitch" "$WORK/i12p.ref" "$WORK/i12p.bin"

# ---- no kernel launch ------------------------------------------------------
say "no_launch: exit 0, empty report, NOTE.txt and the note line"
op_run nolaunch -- "$APPS/no_launch"
if [ $OPRC = 0 ] && [ -n "$OPDIR" ] && [ -z "$(launch_set "$OPDIR")" ] && [ -s "$OPDIR/NOTE.txt" ] &&
	grep -q 'no kernel launch was profiled (the application launched 0 kernels; ' "$WORK/nolaunch.err" &&
	grep -qx 'The application launched 0 kernels.' "$OPDIR/NOTE.txt" &&
	grep -q 'no kernel launched: ok' "$WORK/nolaunch.out"; then
	ok "no_launch: exit 0, no launch folder, NOTE.txt: $(head -1 "$OPDIR/NOTE.txt")"
else
	bad "no_launch: want exit 0 (got $OPRC), NOTE.txt, 'no kernel launch was profiled' on stderr"
	show "$WORK/nolaunch.err"
	[ -z "$OPDIR" ] || ls -R "$OPDIR" | head -20 | sed 's/^/   | /'
fi

# ---- a runtime the injector never sees ---------------------------------------
ST=$APPS/deterministic_static
noapi="no kernel launch was profiled (no call of the application reached the device API through taskprof op's injector; selection: "
static="$ST has the device runtime linked in (it defines tp_rt_launch: libtaskprof_core.a linked statically), so its calls never go through libtaskprof.so, where taskprof op's injector (LD_PRELOAD) intercepts them; link it with libtaskprof.so (-ltaskprof) to profile it"
for mode in kernel application; do
	say "S1 $mode replay: a statically linked runtime is named, not '0 kernels'"
	op_run "s1$mode" --replay-mode $mode --aic-metrics PipeUtilization -- "$ST"
	if [ $OPRC = 0 ] && grep -q "^deterministic: .*ok" "$WORK/s1$mode.out" &&
		grep -qF "taskprof op: $noapi" "$WORK/s1$mode.err" &&
		grep -qxF "taskprof op: $static" "$WORK/s1$mode.err" &&
		! grep -q "launched 0 kernels" "$WORK/s1$mode.err" &&
		grep -qxF "$static" "${OPDIR:-/nonexistent}/NOTE.txt" &&
		! grep -q "launched 0 kernels" "${OPDIR:-/nonexistent}/NOTE.txt"; then
		ok "S1 $mode: exit 0 (the application's), stderr and NOTE.txt name the static runtime"
	else
		bad "S1 $mode: exit $OPRC; want 0 and the static-runtime lines, no '0 kernels'"
		show "$WORK/s1$mode.err"
		show "${OPDIR:-/nonexistent}/NOTE.txt"
	fi
done
say "S1 true: no device API at all: the general reasons"
op_run s1true -- true
if [ $OPRC = 0 ] && grep -qF "taskprof op: $noapi" "$WORK/s1true.err" &&
	grep -q "^taskprof op: the injector (LD_PRELOAD) sees the calls to the tp_rt_\* functions of libtaskprof.so only: the application does not use the device API, or it has the runtime linked in statically (libtaskprof_core.a) or calls it through dlsym on a dlopen handle of its own; child processes of the application are profiled only with --target-processes all$" "$WORK/s1true.err"; then
	ok "S1 true: exit 0, the general reasons"
else
	bad "S1 true: exit $OPRC; want 0 and the general reasons"
	show "$WORK/s1true.err"
fi

finish
